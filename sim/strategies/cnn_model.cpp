#include "sim/strategies/cnn_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "workloads/generator.h"

namespace dtsim::sim {

namespace {

using workloads::CnnGeometry;
using workloads::CnnOp;
using workloads::LayerCost;

double volume(const std::array<int, 3>& e) {
  return 1.0 * e[0] * e[1] * e[2];
}

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

bool weighted(CnnOp op) {
  return op == CnnOp::kConv || op == CnnOp::kLinear;
}

// What one rank computes of a layer, as fractions of the whole layer's.
struct Share {
  double flops = 1;
  double activations = 1;  // of the elements read and written
  double params = 1;
  double output = 1;  // of the output elements, which this rank holds
};

// Elements of the layer's input and output tensors.
double input_elements(const CnnGeometry& g) {
  return 1.0 * g.batch * g.in_channels * volume(g.in_extent);
}
double output_elements(const CnnGeometry& g) {
  return 1.0 * g.batch * g.out_channels * volume(g.out_extent);
}

// Builds the CNN collectives and halos of each layer in turn, tracking whether the activation
// between layers is split (spatially tiled, or by channel) or whole on every rank.
class Sharder {
 public:
  Sharder(const CnnSplit& split, double element_bytes, int layers)
      : split_(split),
        element_bytes_(element_bytes),
        layers_(layers),
        split_state_(split.spatial_ranks() > 1) {}  // the loader tiles the sample; a channel
                                                    // split starts from the whole image

  Share next(const CnnGeometry& g, int index, ModelPiece& piece) {
    if (split_.spatial_ranks() > 1) {
      return spatial(g, index, piece);
    }
    const int degree = std::max(split_.filter, split_.channel);
    if (degree == 1) {
      return {};
    }
    if (!weighted(g.op)) {
      return channel_local(g, degree);
    }
    return split_.filter > 1 ? filter(g, index, piece) : channel(g, index, piece);
  }

 private:
  [[nodiscard]] std::uint64_t bytes(double elements) const {
    return static_cast<std::uint64_t>(std::llround(elements * element_bytes_));
  }
  static void add(ModelPiece& piece, PieceStep step, CollectiveOp op, PieceGroup group,
                  std::uint64_t bytes) {
    piece.collectives.push_back({.step = step, .op = op, .group = group, .bytes = bytes});
  }

  // Norms, activations and poolings on a channel-split activation: their share of channels.
  [[nodiscard]] Share channel_local(const CnnGeometry& g, int degree) const {
    if (!split_state_) {
      return {};
    }
    const double f = 1.0 * ceil_div(g.out_channels, degree) / g.out_channels;
    return {.flops = f, .activations = f, .params = f, .output = f};
  }

  // Filter split: every rank computes its filters from the whole input (CNN.md, "Filter").
  Share filter(const CnnGeometry& g, int index, ModelPiece& piece) {
    const int f = split_.filter;
    const double in = input_elements(g), out = output_elements(g);
    if (split_state_) {  // gather the channel-split input; its gradient reduce-scattered back
      add(piece, PieceStep::kBeforeForward, CollectiveOp::kAllGather, PieceGroup::kTp, bytes(in));
      if (index > 0) {
        add(piece, PieceStep::kAfterBackward, CollectiveOp::kReduceScatter, PieceGroup::kTp,
            bytes(in));
      }
    }
    Share s;
    if (g.out_channels >= f) {
      const double share = 1.0 * ceil_div(g.out_channels, f) / g.out_channels;
      s = {.flops = share,
           .activations = (in + share * out) / (in + out),
           .params = share,
           .output = share};
      split_state_ = true;
    } else {
      split_state_ = false;  // too few filters to split: every rank computes them all
    }
    if (index + 1 == layers_ && split_state_) {  // the loss needs the whole output
      add(piece, PieceStep::kAfterForward, CollectiveOp::kAllGather, PieceGroup::kTp, bytes(out));
    }
    return s;
  }

  // Channel split: every rank sums over its input channels (CNN.md, "Channel").
  Share channel(const CnnGeometry& g, int index, ModelPiece& piece) {
    const int c = split_.channel;
    const double in = input_elements(g), out = output_elements(g);
    if (g.in_channels < c) {  // too few to split: computed whole from the whole input
      if (split_state_) {
        add(piece, PieceStep::kBeforeForward, CollectiveOp::kAllGather, PieceGroup::kTp, bytes(in));
      }
      split_state_ = false;
      return {};
    }
    if (!split_state_ && index > 0) {  // its slice of a whole input: the gradient gathered
      add(piece, PieceStep::kAfterBackward, CollectiveOp::kAllGather, PieceGroup::kTp, bytes(in));
    }
    const double share = 1.0 * ceil_div(g.in_channels, c) / g.in_channels;
    if (g.out_channels >= c && index + 1 < layers_) {
      add(piece, PieceStep::kAfterForward, CollectiveOp::kReduceScatter, PieceGroup::kTp,
          bytes(out));
      add(piece, PieceStep::kBeforeBackward, CollectiveOp::kAllGather, PieceGroup::kTp, bytes(out));
      split_state_ = true;
    } else {  // the partial sums all-reduced: every rank has the whole output
      add(piece, PieceStep::kAfterForward, CollectiveOp::kAllReduce, PieceGroup::kTp, bytes(out));
      split_state_ = false;
    }
    const double out_share = split_state_ ? 1.0 * ceil_div(g.out_channels, c) / g.out_channels : 1;
    return {.flops = share,
            .activations = (share * in + out) / (in + out),
            .params = share,
            .output = out_share};
  }

  // Spatial split: each rank computes its tile; windows exchange halos (CNN.md, "Spatial").
  Share spatial(const CnnGeometry& g, int index, ModelPiece& piece) {
    if (!split_state_) {
      return {};  // after the map was pooled or gathered: every rank computes it whole
    }
    const double in = input_elements(g);
    if (g.op == CnnOp::kLinear) {  // cannot be split: gather the whole map first
      if (volume(g.in_extent) > 1) {
        add(piece, PieceStep::kBeforeForward, CollectiveOp::kAllGather, PieceGroup::kSpatial,
            bytes(in));
      }
      split_state_ = false;
      return {};
    }
    const double in_tile = tile_fraction(g.in_extent);
    const double out_tile = tile_fraction(g.out_extent);
    if (g.op == CnnOp::kConv || g.op == CnnOp::kPool || g.op == CnnOp::kAvgPool) {
      add_halos(g, piece);
      piece.backward_halo = index > 0;
    }
    if (g.op == CnnOp::kNorm) {  // statistics (sum, sum of squares) per channel, in fp32
      const auto stats = static_cast<std::uint64_t>(2 * 4 * g.in_channels);
      add(piece, PieceStep::kBeforeForward, CollectiveOp::kAllReduce, PieceGroup::kSpatial, stats);
      add(piece, PieceStep::kBeforeBackward, CollectiveOp::kAllReduce, PieceGroup::kSpatial, stats);
    }
    if (g.op == CnnOp::kGlobalPool) {  // partial sums of every channel
      add(piece, PieceStep::kAfterForward, CollectiveOp::kAllReduce, PieceGroup::kSpatial,
          bytes(output_elements(g)));
      split_state_ = false;
      return {.flops = in_tile, .activations = in_tile, .params = 1, .output = 1};
    }
    const double out = output_elements(g);
    return {.flops = out_tile,
            .activations = (in_tile * in + out_tile * out) / (in + out),
            .params = 1,
            .output = out_tile};
  }

  // The largest tile of `extent` over the grid, as a fraction of it.
  [[nodiscard]] double tile_fraction(const std::array<int, 3>& extent) const {
    double f = 1;
    for (std::size_t d = 0; d < 3; ++d) {
      f *= 1.0 * ceil_div(extent[d], split_.spatial[d]) / extent[d];
    }
    return f;
  }

  // A window of side k, stride s and padding p over a tile of the input: the tile above needs
  // this one's last p rows (sent up), the tile below its first k - s - p rows (sent down),
  // each row a face of the tile: batch x channels x the tile's other extents.
  void add_halos(const CnnGeometry& g, ModelPiece& piece) const {
    std::array<int, 3> tile{};
    for (std::size_t d = 0; d < 3; ++d) {
      tile[d] = ceil_div(g.in_extent[d], split_.spatial[d]);
    }
    for (std::size_t d = 0; d < 3; ++d) {
      if (split_.spatial[d] == 1) {
        continue;
      }
      const double face = 1.0 * g.batch * g.in_channels * volume(tile) / tile[d];
      const int pad = g.pad_along(d);
      const int up_rows = std::min(pad, tile[d]);
      const int down_rows = std::min(std::max(0, g.kernel_along(d) - g.stride - pad), tile[d]);
      piece.halo_up_bytes[d] = bytes(up_rows * face);
      piece.halo_down_bytes[d] = bytes(down_rows * face);
    }
  }

  CnnSplit split_;
  double element_bytes_;
  int layers_;
  bool split_state_;
};

// `layer` reduced to `share` of its work.
LayerCost shard(const LayerCost& layer, const Share& share) {
  LayerCost s = layer;
  s.forward_flops *= share.flops;
  s.activation_elements *= share.activations;
  s.params =
      static_cast<std::uint64_t>(std::llround(static_cast<double>(layer.params) * share.params));
  return s;
}

std::string grid_name(const std::array<int, 3>& g) {
  return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

}  // namespace

std::optional<std::array<int, 3>> parse_spatial_grid(std::string_view text, std::string* why) {
  std::array<int, 3> grid{1, 1, 1};
  std::size_t start = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, grid[d]);
    if (ec != std::errc() || ptr != text.data() + end || grid[d] < 1 || grid[d] > (1 << 24)) {
      *why = "expected a grid such as 4x4 or 2x2x2 (height x width [x depth], each >= 1)";
      return std::nullopt;
    }
    if (end == text.size()) {
      if (d == 0) {
        *why = "expected a grid such as 4x4 or 2x2x2 (height x width [x depth], each >= 1)";
        return std::nullopt;
      }
      return grid;
    }
    start = end + 1;
  }
  *why = "a grid has at most three dimensions (height x width x depth)";
  return std::nullopt;
}

std::string check_cnn_split(const std::vector<LayerCost>& layers, const CnnSplit& split) {
  const int kinds = (split.spatial_ranks() > 1) + (split.filter > 1) + (split.channel > 1);
  if (kinds > 1) {
    return "spatial: one of spatial, filter and channel at a time (each beside dp and pp)";
  }
  if (layers.empty() || layers.front().cnn.op == CnnOp::kNone) {
    return kinds == 0 ? "" : "model: spatial, filter and channel splits need a CNN of the zoo";
  }
  const CnnGeometry& first = layers.front().cnn;
  if (split.spatial_ranks() > 1) {
    if (first.dims == 2 && split.spatial[2] > 1) {
      return "spatial: " + grid_name(split.spatial) + " splits the depth of a 2-D input";
    }
    for (std::size_t d = 0; d < 3; ++d) {
      if (first.in_extent[d] % split.spatial[d] != 0) {
        return "spatial: the grid " + grid_name(split.spatial) + " does not tile the " +
               std::to_string(first.in_extent[0]) + "x" + std::to_string(first.in_extent[1]) + "x" +
               std::to_string(first.in_extent[2]) + " input (" + std::to_string(split.spatial[d]) +
               " does not divide " + std::to_string(first.in_extent[d]) + ")";
      }
    }
  }
  int widest = 0;
  for (const LayerCost& l : layers) {
    widest = std::max({widest, l.cnn.in_channels, l.cnn.out_channels});
  }
  for (const auto& [name, degree] :
       {std::pair{"filter", split.filter}, {"channel", split.channel}}) {
    if (degree > widest) {
      return std::string(name) + ": " + std::to_string(degree) +
             " splits, more than the widest layer's " + std::to_string(widest) + " channels";
    }
  }
  return "";
}

std::string match_cnn_trace(const std::vector<LayerCost>& layers,
                            const workloads::Workload& trace) {
  if (trace.layers.size() != layers.size()) {
    return "the trace has " + std::to_string(trace.layers.size()) + " layers, the zoo's " +
           trace.model + " " + std::to_string(layers.size());
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (trace.layers[i].name != layers[i].name) {
      return "layer " + std::to_string(i) + " is " + trace.layers[i].name + ", the zoo's " +
             trace.model + " has " + layers[i].name + " there";
    }
  }
  return "";
}

HybridModel model_from_cnn(const std::vector<LayerCost>& layers, const workloads::Workload& trace,
                           const workloads::Roofline& roofline, const CnnSplit& split) {
  HybridModel model;
  Sharder sharder(split, roofline.element_bytes, static_cast<int>(layers.size()));
  double all_grad_bytes = 0;
  double rank_grad_bytes = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const workloads::Layer& t = trace.layers[i];
    ModelPiece piece{.name = t.name, .unit = static_cast<int>(i)};
    const Share share = sharder.next(layers[i].cnn, static_cast<int>(i), piece);
    const workloads::LayerSeconds whole = workloads::layer_seconds(layers[i], roofline);
    const workloads::LayerSeconds part =
        workloads::layer_seconds(shard(layers[i], share), roofline);
    // The measured time times the roofline's ratio; a whole layer keeps its time exactly.
    piece.forward_sec = whole.forward_sec > 0
                            ? t.forward_sec * (part.forward_sec / whole.forward_sec)
                            : t.forward_sec;
    piece.backward_sec = whole.backward_sec > 0
                             ? t.backward_sec * (part.backward_sec / whole.backward_sec)
                             : t.backward_sec;
    piece.grad_bytes = share.params == 1 ? t.param_bytes
                                         : static_cast<std::uint64_t>(std::llround(
                                               static_cast<double>(t.param_bytes) * share.params));
    piece.weight_bytes = piece.grad_bytes / 4 * static_cast<std::uint64_t>(roofline.element_bytes);
    const double output = t.activation_bytes ? static_cast<double>(*t.activation_bytes)
                                             : layers[i].output_elements * roofline.element_bytes;
    piece.output_bytes = share.output == 1
                             ? static_cast<std::uint64_t>(output)
                             : static_cast<std::uint64_t>(std::llround(output * share.output));
    all_grad_bytes += static_cast<double>(t.param_bytes);
    rank_grad_bytes += static_cast<double>(piece.grad_bytes);
    model.pieces.push_back(std::move(piece));
  }
  // The optimizer updates this rank's share of the weights.
  model.optimizer_sec = rank_grad_bytes == all_grad_bytes || all_grad_bytes == 0
                            ? trace.optimizer_sec
                            : trace.optimizer_sec * rank_grad_bytes / all_grad_bytes;
  return model;
}

}  // namespace dtsim::sim
