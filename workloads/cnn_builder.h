// The builder of the model zoo's CNNs (model_zoo.cpp, cnn_zoo.cpp): layer by layer, each with
// its FLOPs, activation traffic, parameters and shape (CnnGeometry). Internal to the workloads
// library.
#ifndef DTSIM_WORKLOADS_CNN_BUILDER_H_
#define DTSIM_WORKLOADS_CNN_BUILDER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/model_zoo.h"

namespace dtsim::workloads::zoo {

// FLOPs per element of a batch or layer norm: statistics, normalise, affine (GENERATOR.md).
inline constexpr double kNormFlopsPerElement = 8;

// Builds a CNN layer by layer, tracking the activation shape: channels and the extent of each
// spatial dimension (height, width, and depth for a volume; a 2-D input has depth 1).
class CnnBuilder {
 public:
  CnnBuilder(int batch, int channels, int size, int dims = 2)
      : n_(batch), c_(channels), dims_(dims), e_{size, size, dims == 3 ? size : 1} {}

  // A convolution; with `groups` > 1, each output channel sees c_/groups input channels.
  void conv(const std::string& name, int out, int k, int stride, int pad, bool bias = false,
            int groups = 1) {
    conv_window(name, out,
                {.height = k, .width = k, .stride = stride, .pad_height = pad, .pad_width = pad},
                bias, groups);
  }
  // A convolution of a rectangular window (Inception's 1x7 and 7x1), stride 1, no bias.
  void conv_rect(const std::string& name, int out, int kh, int kw, int ph, int pw) {
    conv_window(name, out,
                {.height = kh, .width = kw, .stride = 1, .pad_height = ph, .pad_width = pw}, false,
                1);
  }
  void batch_norm(const std::string& name) {
    add({.name = name,
         .forward_flops = kNormFlopsPerElement * elements(),
         .activation_elements = 2 * elements(),
         .params = 2 * static_cast<std::uint64_t>(c_),
         .output_elements = elements(),
         .cnn = same_shape(CnnOp::kNorm)});
  }
  void relu(const std::string& name) { elementwise(name, 1, 2); }
  // The residual add of two tensors of the current shape.
  void residual_add(const std::string& name) { elementwise(name, 1, 3); }
  void max_pool(const std::string& name, int k, int stride, int pad) {
    pool(name, CnnOp::kPool, k, stride, pad);
  }
  // Average pooling over a window (Inception's 3x3 stride-1 branch pools), padding counted.
  void avg_pool(const std::string& name, int k, int stride, int pad) {
    pool(name, CnnOp::kAvgPool, k, stride, pad);
  }
  void global_avg_pool(const std::string& name) {
    const double in = elements();
    CnnGeometry g = geometry(CnnOp::kGlobalPool, 1, 1, 0);
    g.out_extent = {1, 1, 1};
    e_ = {1, 1, 1};
    add({.name = name,
         .forward_flops = in,
         .activation_elements = in + elements(),
         .backward_factor = 1,
         .output_elements = elements(),
         .cnn = g});
  }
  // Fully connected on the flattened map: c_ x extent inputs per sample.
  void linear(const std::string& name, int out) {
    const double in = 1.0 * c_ * volume(e_);
    CnnGeometry g = geometry(CnnOp::kLinear, 1, 1, 0);
    g.out_channels = out;
    g.out_extent = {1, 1, 1};
    add({.name = name,
         .forward_flops = 2.0 * n_ * in * out,
         .activation_elements = 1.0 * n_ * (in + out),
         .params = static_cast<std::uint64_t>(in) * out + out,
         .backward_factor = layers_.empty() ? 1.0 : 2.0,
         .output_elements = 1.0 * n_ * out,
         .cnn = g});
    c_ = out;
    e_ = {1, 1, 1};
  }

  [[nodiscard]] int channels() const { return c_; }
  [[nodiscard]] int size() const { return e_[0]; }
  void set_shape(int channels, int size) {
    c_ = channels;
    e_ = {size, size, dims_ == 3 ? size : 1};
  }
  // torch.cat of branches along the channels, `channels` in all at the current extent: a copy
  // that reads and writes the output once (its backward is counted like an elementwise op's).
  void concat(const std::string& name, int channels) {
    c_ = channels;
    elementwise(name, 0, 2);
  }
  [[nodiscard]] std::vector<LayerCost> take() { return std::move(layers_); }

 private:
  static long long volume(const std::array<int, 3>& e) { return 1LL * e[0] * e[1] * e[2]; }
  [[nodiscard]] double elements() const { return 1.0 * n_ * c_ * volume(e_); }
  struct Window {
    int height, width, stride, pad_height, pad_width;
  };
  // The output extent of `w`: its height and padding serve the depth too for a volume.
  [[nodiscard]] std::array<int, 3> window_extent(const Window& w) const {
    std::array<int, 3> out = e_;
    for (std::size_t d = 0; d < static_cast<std::size_t>(dims_); ++d) {
      const int k = d == 1 ? w.width : w.height;
      const int pad = d == 1 ? w.pad_width : w.pad_height;
      out[d] = (e_[d] + 2 * pad - k) / w.stride + 1;
    }
    return out;
  }
  [[nodiscard]] std::array<int, 3> window_extent(int k, int stride, int pad) const {
    return window_extent(
        {.height = k, .width = k, .stride = stride, .pad_height = pad, .pad_width = pad});
  }
  void conv_window(const std::string& name, int out, const Window& w, bool bias, int groups) {
    CnnGeometry g = geometry(CnnOp::kConv, w.height, w.stride, w.pad_height);
    if (w.width != w.height || w.pad_width != w.pad_height) {
      g.kernel_width = w.width;
      g.pad_width = w.pad_width;
    }
    g.groups = groups;
    g.out_channels = out;
    g.out_extent = window_extent(w);
    const int in_per_group = c_ / groups;
    const double window = 1.0 * w.height * w.width * (dims_ == 3 ? w.height : 1);
    const double out_elements = 1.0 * n_ * out * volume(g.out_extent);
    const double macs = window * in_per_group * out_elements;
    const auto params = static_cast<std::uint64_t>(window) * in_per_group * out + (bias ? out : 0);
    add({.name = name,
         .forward_flops = 2 * macs,
         .activation_elements = elements() + out_elements,
         .params = params,
         .backward_factor = layers_.empty() ? 1.0 : 2.0,  // the input needs no gradient
         .output_elements = out_elements,
         .cnn = g});
    c_ = out;
    e_ = g.out_extent;
  }
  void pool(const std::string& name, CnnOp op, int k, int stride, int pad) {
    const double in = elements();
    CnnGeometry g = geometry(op, k, stride, pad);
    g.out_channels = c_;
    g.out_extent = window_extent(k, stride, pad);
    e_ = g.out_extent;
    add({.name = name,
         .forward_flops = 1.0 * volume({k, k, dims_ == 3 ? k : 1}) * elements(),
         .activation_elements = in + elements(),
         .backward_factor = 1,
         .output_elements = elements(),
         .cnn = g});
  }
  [[nodiscard]] CnnGeometry geometry(CnnOp op, int k, int stride, int pad) const {
    return {.op = op,
            .batch = n_,
            .in_channels = c_,
            .out_channels = c_,
            .in_extent = e_,
            .out_extent = e_,
            .kernel = k,
            .stride = stride,
            .pad = pad,
            .dims = dims_};
  }
  [[nodiscard]] CnnGeometry same_shape(CnnOp op) const { return geometry(op, 1, 1, 0); }
  void elementwise(const std::string& name, double flops_per_element, double tensors) {
    add({.name = name,
         .forward_flops = flops_per_element * elements(),
         .activation_elements = tensors * elements(),
         .backward_factor = 1,
         .output_elements = elements(),
         .cnn = same_shape(CnnOp::kElementwise)});
  }
  void add(LayerCost layer) { layers_.push_back(std::move(layer)); }

  int n_, c_, dims_;
  std::array<int, 3> e_;
  std::vector<LayerCost> layers_;
};

}  // namespace dtsim::workloads::zoo

#endif  // DTSIM_WORKLOADS_CNN_BUILDER_H_
