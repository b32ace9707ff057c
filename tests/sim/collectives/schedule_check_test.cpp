// The correctness checker on the built-in algorithms (each must perform the operation it claims)
// and on hand-written wrong schedules (each refused where it first goes wrong).
#include "sim/collectives/schedule_check.h"

#include <gtest/gtest.h>

#include "sim/collectives/registry.h"
#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {
namespace {

// Step-level schedules: the collapsed ones carry no data description.
const AlgorithmOptions kStepLevel{.collapse = false, .chunk_bytes = 1000};

TopologyHints hints_for(int p) {
  TopologyHints h;
  h.injection_bytes_per_sec = 1e9;
  h.ranks_per_node = p % 2 == 0 ? 2 : 1;  // hierarchical: nodes of two
  h.grid = {p % 2 == 0 ? 2 : 1, p % 2 == 0 ? p / 2 : p};
  return h;
}

TEST(ScheduleCheck, EveryBuiltInAlgorithmPerformsItsOperation) {
  int checked = 0;
  for (const std::string& name : algorithm_names()) {
    if (name == "nvls") {
      continue;  // a traffic model of in-switch reduction: no transfer carries the vector
    }
    const auto algorithm = make_algorithm(name, kStepLevel);
    for (CollectiveOp op : all_ops()) {
      for (int p : {1, 2, 3, 4, 5, 6, 8}) {
        // Sizes that split evenly, unevenly, into several tree chunks, and smaller than p.
        for (std::uint64_t bytes : {std::uint64_t{4800}, std::uint64_t{4803}, std::uint64_t{3}}) {
          const CollectiveRequest request{.op = op, .ranks = p, .bytes = bytes, .root = p / 2};
          const TopologyHints hints = hints_for(p);
          if (!algorithm->unsupported(request, hints).empty()) {
            continue;
          }
          const auto fault = check_schedule(algorithm->build(request, hints), request);
          EXPECT_FALSE(fault) << name << " " << op_name(op) << " p=" << p << " bytes=" << bytes
                              << ": " << describe(*fault);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 150);  // the loops above ran (8 algorithms, most ops)
}

TEST(ScheduleCheck, CollapsedScheduleCannotBeChecked) {
  const auto ring = make_algorithm("ring", AlgorithmOptions{});
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 4, .bytes = 400};
  const auto fault = check_schedule(ring->build(request, hints_for(4)), request);
  ASSERT_TRUE(fault);
  EXPECT_NE(fault->what.find("does not say what it moves"), std::string::npos);
}

// A two-rank all-reduce by hand: each sends its vector, the other adds it.
Schedule exchange(bool second_reduces) {
  ScheduleBuilder b(2);
  b.transfer(0, 1, 100, {}, 0, DataMove{.reduce = true});
  b.transfer(1, 0, 100, {}, 0, DataMove{.reduce = second_reduces});
  return std::move(b).finish();
}

TEST(ScheduleCheck, SimultaneousExchangeReadsBeforeWriting) {
  // Both transfers are in step 0: each carries its sender's own vector (sendrecv semantics), so
  // both ranks end with 0 + 1.
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 2, .bytes = 100};
  EXPECT_FALSE(check_schedule(exchange(true), request));
}

TEST(ScheduleCheck, CopyInsteadOfReduceIsMissingAContribution) {
  // Rank 0 replaces its vector by rank 1's: it ends without its own contribution.
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 2, .bytes = 100};
  const auto fault = check_schedule(exchange(false), request);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->op, -1);
  EXPECT_EQ(fault->rank, 0);
  EXPECT_EQ(fault->offset, 0u);
  EXPECT_EQ(fault->what, "ends without rank 0's contribution");
}

TEST(ScheduleCheck, ReducingTwiceIsRefusedAtTheSecondReduce) {
  // 0 -> 1 twice, reducing: rank 1 would count rank 0 twice at operation 1.
  ScheduleBuilder b(2);
  const int first = b.transfer(0, 1, 100, {}, 0, DataMove{.reduce = true});
  b.transfer(0, 1, 100, {first}, 0, DataMove{.reduce = true});
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 2, .bytes = 100};
  const auto fault = check_schedule(std::move(b).finish(), request);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->op, 1);
  EXPECT_EQ(fault->rank, 1);
  EXPECT_EQ(fault->what, "receives rank 0's contribution twice");
}

TEST(ScheduleCheck, SendingBytesNotHeldIsRefused) {
  // An all-gather: rank 1 holds only block 1 (bytes [50, 100)) and sends block 0.
  ScheduleBuilder b(2);
  b.transfer(1, 0, 50, {}, 0, DataMove{.src_offset = 0, .dst_offset = 0});
  const CollectiveRequest request{.op = CollectiveOp::kAllGather, .ranks = 2, .bytes = 100};
  const auto fault = check_schedule(std::move(b).finish(), request);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->op, 0);
  EXPECT_EQ(fault->rank, 1);
  EXPECT_EQ(fault->offset, 0u);
  EXPECT_EQ(fault->what, "sends a byte it does not hold");
}

TEST(ScheduleCheck, ReducingMisalignedElementsIsRefused) {
  // Rank 0 adds rank 1's bytes [0, 50) onto its own [50, 100): different elements.
  ScheduleBuilder b(2);
  b.transfer(1, 0, 50, {}, 0, DataMove{.src_offset = 0, .dst_offset = 50, .reduce = true});
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 2, .bytes = 100};
  const auto fault = check_schedule(std::move(b).finish(), request);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->op, 0);
  EXPECT_EQ(fault->offset, 50u);
  EXPECT_NE(fault->what.find("another offset"), std::string::npos);
}

TEST(ScheduleCheck, OutOfBoundsAndInPlaceOutputAreRefused) {
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 2, .bytes = 100};
  ScheduleBuilder past(2);
  past.transfer(0, 1, 60, {}, 0, DataMove{.src_offset = 50, .dst_offset = 50, .reduce = true});
  const auto fault = check_schedule(std::move(past).finish(), request);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "bytes [50, 110) lie outside the input buffer of 100 bytes");

  ScheduleBuilder output(2);
  output.transfer(0, 1, 100, {}, 0, DataMove{.dst_buffer = Buffer::kOutput});
  const auto in_place = check_schedule(std::move(output).finish(), request);
  ASSERT_TRUE(in_place);
  EXPECT_EQ(in_place->what, "an in-place schedule has no separate output buffer");
}

TEST(ScheduleCheck, AllToAllSlotsAreChecked) {
  // Three ranks, 30 bytes: rank s's block d (10 bytes at 10 d) must land in d's output slot s.
  // Swapping two destinations' slots is caught at the first wrong slot.
  const CollectiveRequest request{.op = CollectiveOp::kAllToAll, .ranks = 3, .bytes = 30};
  auto build = [](bool swap) {
    ScheduleBuilder b(3);
    for (int s = 0; s < 3; ++s) {
      for (int d = 0; d < 3; ++d) {
        if (s != d) {
          const int slot = swap && d == 2 ? 1 - s : s;  // rank 2: 0's block in slot 1, 1's in 0
          b.transfer(s, d, 10, {}, 0,
                     DataMove{.src_offset = 10u * static_cast<std::uint64_t>(d),
                              .dst_offset = 10u * static_cast<std::uint64_t>(slot),
                              .dst_buffer = Buffer::kOutput});
        }
      }
    }
    Schedule schedule = std::move(b).finish();
    schedule.in_place = false;
    return schedule;
  };
  EXPECT_FALSE(check_schedule(build(false), request));
  const auto fault = check_schedule(build(true), request);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->rank, 2);
  EXPECT_EQ(fault->buffer, Buffer::kOutput);
}

}  // namespace
}  // namespace dtsim::sim
