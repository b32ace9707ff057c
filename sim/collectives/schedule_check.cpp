#include "sim/collectives/schedule_check.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace dtsim::sim {

namespace {

// A set of ranks.
class Ranks {
 public:
  Ranks() = default;
  Ranks(int p, int only) : words_(static_cast<std::size_t>((p + 63) / 64)) { add(only); }
  static Ranks all(int p) {
    Ranks r;
    r.words_.resize(static_cast<std::size_t>((p + 63) / 64));
    for (int i = 0; i < p; ++i) {
      r.add(i);
    }
    return r;
  }
  void add(int rank) { words_[static_cast<std::size_t>(rank / 64)] |= bit(rank); }
  [[nodiscard]] bool has(int rank) const {
    return (words_[static_cast<std::size_t>(rank / 64)] & bit(rank)) != 0;
  }
  // The lowest rank in both sets, or -1.
  [[nodiscard]] int common(const Ranks& other) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      if (const std::uint64_t both = words_[w] & other.words_[w]; both != 0) {
        return static_cast<int>(w * 64) + std::countr_zero(both);
      }
    }
    return -1;
  }
  void merge(const Ranks& other) {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      words_[w] |= other.words_[w];
    }
  }
  // The lowest rank in exactly one of the sets, or -1.
  [[nodiscard]] int first_difference(const Ranks& other) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      if (const std::uint64_t diff = words_[w] ^ other.words_[w]; diff != 0) {
        return static_cast<int>(w * 64) + std::countr_zero(diff);
      }
    }
    return -1;
  }

 private:
  static std::uint64_t bit(int rank) { return std::uint64_t{1} << (rank % 64); }
  std::vector<std::uint64_t> words_;
};

// Bytes [start, end) of a buffer hold the sum over `ranks` of the elements [start - shift,
// end - shift) of the operation's vector (of each rank's send vector, for all-to-all).
struct Segment {
  std::uint64_t end = 0;
  std::int64_t shift = 0;
  Ranks ranks;
};
using Contents = std::map<std::uint64_t, Segment>;  // by start; disjoint

// Makes `x` a segment boundary if a segment straddles it.
void split(Contents& c, std::uint64_t x) {
  auto it = c.upper_bound(x);
  if (it == c.begin()) {
    return;
  }
  --it;
  if (it->first < x && x < it->second.end) {
    Segment right = it->second;
    it->second.end = x;
    c.emplace(x, std::move(right));
  }
}

struct Piece {
  std::uint64_t start;
  Segment segment;
};

// The segments covering [start, end) (split there); nullopt (and *gap, the first missing byte)
// where a byte is not held.
std::optional<std::vector<Piece>> read(Contents& c, std::uint64_t start, std::uint64_t end,
                                       std::uint64_t* gap) {
  split(c, start);
  split(c, end);
  std::vector<Piece> pieces;
  std::uint64_t at = start;
  for (auto it = c.lower_bound(start); it != c.end() && it->first < end; ++it) {
    if (it->first != at) {
      break;
    }
    pieces.push_back({it->first, it->second});
    at = it->second.end;
  }
  if (at < end) {
    *gap = at;
    return std::nullopt;
  }
  return pieces;
}

class Checker {
 public:
  Checker(const Schedule& schedule, const CollectiveRequest& request)
      : schedule_(schedule),
        request_(request),
        p_(request.ranks),
        state_(static_cast<std::size_t>(request.ranks)) {}

  std::optional<ScheduleFault> run() {
    if (schedule_.ranks != p_) {
      return fault(-1, 0, Buffer::kInput, 0,
                   "the schedule has " + std::to_string(schedule_.ranks) + " ranks, the " +
                       std::string(op_name(request_.op)) + " " + std::to_string(p_));
    }
    if (schedule_.in_place && request_.op == CollectiveOp::kAllToAll) {
      return fault(-1, 0, Buffer::kInput, 0, "an all-to-all cannot run in place");
    }
    start();
    for (const std::vector<int>& step : steps()) {
      std::vector<std::vector<Piece>> sent(step.size());
      for (std::size_t k = 0; k < step.size() && !fault_; ++k) {
        sent[k] = send(step[k]);
      }
      for (std::size_t k = 0; k < step.size() && !fault_; ++k) {
        receive(step[k], std::move(sent[k]));
      }
      if (fault_) {
        return fault_;
      }
    }
    finish();
    return fault_;
  }

 private:
  std::uint64_t off(int r) const { return piece_offset(request_.bytes, p_, r); }
  std::uint64_t len(int r) const { return piece_bytes(request_.bytes, p_, r); }
  Buffer out() const { return schedule_.in_place ? Buffer::kInput : Buffer::kOutput; }
  Contents& at(int rank, Buffer b) {
    return state_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(b)];
  }
  void hold(int rank, Buffer b, std::uint64_t start, std::uint64_t end, std::int64_t shift,
            const Ranks& ranks) {
    if (start < end) {
      at(rank, b)[start] = {end, shift, ranks};
    }
  }

  std::optional<ScheduleFault> fault(int op, int rank, Buffer b, std::uint64_t offset,
                                     std::string what) {
    fault_ = ScheduleFault{op, rank, b, offset, std::move(what)};
    return fault_;
  }

  void start() {
    const std::uint64_t n = request_.bytes;
    for (int r = 0; r < p_; ++r) {
      const Ranks own(p_, r);
      switch (request_.op) {
        case CollectiveOp::kAllGather:
          if (schedule_.in_place) {
            hold(r, Buffer::kInput, off(r), off(r) + len(r), 0, own);
          } else {
            hold(r, Buffer::kInput, 0, len(r), -static_cast<std::int64_t>(off(r)), own);
          }
          break;
        case CollectiveOp::kBroadcast:
        case CollectiveOp::kSendRecv:
          if (r == request_.root) {
            hold(r, Buffer::kInput, 0, n, 0, own);
          }
          break;
        case CollectiveOp::kAllToAll: {
          hold(r, Buffer::kInput, 0, n, 0, own);
          // Its own block needs no network: it starts in its output slot r.
          const std::uint64_t slot = static_cast<std::uint64_t>(r) * len(r);
          hold(r, Buffer::kOutput, slot, slot + len(r),
               static_cast<std::int64_t>(slot) - static_cast<std::int64_t>(off(r)), own);
          break;
        }
        default:
          hold(r, Buffer::kInput, 0, n, 0, own);
      }
    }
  }

  // The size of rank r's buffer b (scratch: unbounded).
  std::uint64_t size(int r, Buffer b) const {
    if (b == Buffer::kScratch) {
      return std::numeric_limits<std::uint64_t>::max();
    }
    const bool output = b == Buffer::kOutput;
    switch (request_.op) {
      case CollectiveOp::kAllGather:
        return output || schedule_.in_place ? request_.bytes : len(r);
      case CollectiveOp::kReduceScatter:
        return output ? len(r) : request_.bytes;
      case CollectiveOp::kAllToAll:
        return output ? len(r) * static_cast<std::uint64_t>(p_) : request_.bytes;
      default:
        return request_.bytes;
    }
  }

  // The transfers and local copies by step: one's step is one more than the latest of its
  // dependencies and of its channel predecessor (the replay runs those first); waits only pass
  // steps on.
  std::vector<std::vector<int>> steps() const {
    std::vector<int> step_of(schedule_.ops.size(), 0);
    std::map<std::tuple<int, int, int>, int> last_on_channel;
    std::vector<std::vector<int>> steps;
    for (std::size_t i = 0; i < schedule_.ops.size(); ++i) {
      const ScheduleOp& op = schedule_.ops[i];
      int after = -1;
      for (int d : op.deps) {
        after = std::max(after, step_of[static_cast<std::size_t>(d)]);
      }
      if (op.kind == ScheduleOp::Kind::kWait && !op.data) {
        step_of[i] = after;
        continue;
      }
      if (op.kind == ScheduleOp::Kind::kTransfer) {  // not a local copy
        auto [it, first] = last_on_channel.emplace(std::tuple{op.src, op.dst, op.channel}, i);
        if (!first) {
          after = std::max(after, step_of[static_cast<std::size_t>(it->second)]);
          it->second = static_cast<int>(i);
        }
      }
      step_of[i] = after + 1;
      steps.resize(std::max(steps.size(), static_cast<std::size_t>(step_of[i] + 1)));
      steps[static_cast<std::size_t>(step_of[i])].push_back(static_cast<int>(i));
    }
    return steps;
  }

  // What transfer `index` carries, read before any transfer of its step writes (as MPI's
  // sendrecv reads its send buffer before the receive lands).
  std::vector<Piece> send(int index) {
    const ScheduleOp& op = schedule_.ops[static_cast<std::size_t>(index)];
    if (!op.data) {
      fault(index, op.src, Buffer::kInput, 0,
            "the transfer does not say what it moves (a collapsed schedule cannot be checked)");
      return {};
    }
    const DataMove& d = *op.data;
    for (auto [rank, b, o] : {std::tuple{op.src, d.src_buffer, d.src_offset},
                              std::tuple{op.dst, d.dst_buffer, d.dst_offset}}) {
      if (schedule_.in_place && b == Buffer::kOutput) {
        fault(index, rank, b, o, "an in-place schedule has no separate output buffer");
        return {};
      }
      if (o > size(rank, b) || op.bytes > size(rank, b) - o) {
        fault(index, rank, b, o,
              "bytes [" + std::to_string(o) + ", " + std::to_string(o + op.bytes) +
                  ") lie outside the " + buffer_name(b) + " buffer of " +
                  std::to_string(size(rank, b)) + " bytes");
        return {};
      }
    }
    std::uint64_t gap = 0;
    auto pieces = read(at(op.src, d.src_buffer), d.src_offset, d.src_offset + op.bytes, &gap);
    if (!pieces) {
      fault(index, op.src, d.src_buffer, gap, "sends a byte it does not hold");
      return {};
    }
    return std::move(*pieces);
  }

  // Transfer `index`'s `pieces` land at the receiver.
  void receive(int index, std::vector<Piece> pieces) {
    const ScheduleOp& op = schedule_.ops[static_cast<std::size_t>(index)];
    const DataMove& d = *op.data;
    const auto move = static_cast<std::int64_t>(d.dst_offset - d.src_offset);
    Contents& dst = at(op.dst, d.dst_buffer);
    const std::uint64_t start = d.dst_offset;
    const std::uint64_t end = d.dst_offset + op.bytes;
    split(dst, start);
    split(dst, end);
    if (!d.reduce) {
      dst.erase(dst.lower_bound(start), dst.lower_bound(end));
      for (Piece& piece : pieces) {
        piece.segment.end += move;
        piece.segment.shift += move;
        dst[piece.start + move] = std::move(piece.segment);
      }
      return;
    }
    for (const Piece& piece : pieces) {
      reduce_into(index, op.dst, d.dst_buffer, piece, move);
      if (fault_) {
        return;
      }
    }
  }

  // Adds `piece`, moved by `move` bytes, to what rank holds there.
  void reduce_into(int index, int rank, Buffer b, const Piece& piece, std::int64_t move) {
    Contents& c = at(rank, b);
    const std::uint64_t start = piece.start + move;
    const std::uint64_t end = piece.segment.end + move;
    split(c, start);
    split(c, end);
    std::uint64_t at_byte = start;
    for (auto it = c.lower_bound(start); it != c.end() && it->first < end; ++it) {
      if (it->first != at_byte) {
        break;
      }
      Segment& held = it->second;
      if (held.shift != piece.segment.shift + move) {
        fault(index, rank, b, it->first,
              "adds elements of another offset of the vector to the ones it holds");
        return;
      }
      if (const int twice = held.ranks.common(piece.segment.ranks); twice >= 0) {
        fault(index, rank, b, it->first,
              "receives rank " + std::to_string(twice) + "'s contribution twice");
        return;
      }
      held.ranks.merge(piece.segment.ranks);
      at_byte = held.end;
    }
    if (at_byte < end) {
      fault(index, rank, b, at_byte, "reduces into a byte it does not hold");
    }
  }

  // Rank r must hold, in [start, end) of b, the sum over `ranks` with that shift.
  void expect(int r, Buffer b, std::uint64_t start, std::uint64_t end, std::int64_t shift,
              const Ranks& ranks) {
    std::uint64_t gap = 0;
    const auto pieces = read(at(r, b), start, end, &gap);
    if (!pieces) {
      fault(-1, r, b, gap, "ends without this byte of its result");
      return;
    }
    for (const Piece& piece : *pieces) {
      if (piece.segment.shift != shift) {
        fault(-1, r, b, piece.start, "ends with another offset of the vector here");
        return;
      }
      if (const int k = piece.segment.ranks.first_difference(ranks); k >= 0) {
        fault(-1, r, b, piece.start,
              std::string(ranks.has(k) ? "ends without rank " : "ends with rank ") +
                  std::to_string(k) + "'s contribution");
        return;
      }
    }
  }

  void finish() {
    const Ranks everyone = Ranks::all(p_);
    const std::uint64_t n = request_.bytes;
    for (int r = 0; r < p_ && !fault_; ++r) {
      switch (request_.op) {
        case CollectiveOp::kAllReduce:
          expect(r, out(), 0, n, 0, everyone);
          break;
        case CollectiveOp::kReduce:
          if (r == request_.root) {
            expect(r, out(), 0, n, 0, everyone);
          }
          break;
        case CollectiveOp::kReduceScatter:
          if (schedule_.in_place) {
            expect(r, out(), off(r), off(r) + len(r), 0, everyone);
          } else {
            expect(r, out(), 0, len(r), -static_cast<std::int64_t>(off(r)), everyone);
          }
          break;
        case CollectiveOp::kAllGather:
          for (int s = 0; s < p_ && !fault_; ++s) {
            expect(r, out(), off(s), off(s) + len(s), 0, Ranks(p_, s));
          }
          break;
        case CollectiveOp::kBroadcast:
          expect(r, out(), 0, n, 0, Ranks(p_, request_.root));
          break;
        case CollectiveOp::kAllToAll:
          for (int s = 0; s < p_ && !fault_; ++s) {
            const std::uint64_t slot = static_cast<std::uint64_t>(s) * len(r);
            expect(r, Buffer::kOutput, slot, slot + len(r),
                   static_cast<std::int64_t>(slot) - static_cast<std::int64_t>(off(r)),
                   Ranks(p_, s));
          }
          break;
        case CollectiveOp::kSendRecv:
          if (p_ > 1 && r == (request_.root + 1) % p_) {
            expect(r, out(), 0, n, 0, Ranks(p_, request_.root));
          }
          break;
      }
    }
  }

  const Schedule& schedule_;
  const CollectiveRequest& request_;
  int p_;
  std::vector<std::array<Contents, 3>> state_;
  std::optional<ScheduleFault> fault_;
};

}  // namespace

const char* buffer_name(Buffer buffer) {
  switch (buffer) {
    case Buffer::kInput:
      return "input";
    case Buffer::kOutput:
      return "output";
    case Buffer::kScratch:
      return "scratch";
  }
  return "?";
}

std::optional<ScheduleFault> check_schedule(const Schedule& schedule,
                                            const CollectiveRequest& request) {
  return Checker(schedule, request).run();
}

std::string describe(const ScheduleFault& fault) {
  const std::string where =
      fault.op < 0 ? "after the last operation" : "operation " + std::to_string(fault.op);
  return where + ": rank " + std::to_string(fault.rank) + ", " + buffer_name(fault.buffer) +
         " byte " + std::to_string(fault.offset) + ": " + fault.what;
}

}  // namespace dtsim::sim
