#include "workloads/cnn_zoo.h"

#include "workloads/cnn_builder.h"
#include "workloads/generator_error.h"

namespace dtsim::workloads::zoo {

namespace {

// torchvision's ResNet family. Bottleneck blocks are `width` = planes * width_per_group / 64 *
// groups wide in their grouped 3x3 convolution: ResNet (1, 64), ResNeXt-50 32x4d (32, 4),
// ResNeXt-101 32x8d (32, 8), Wide ResNet-50-2 (1, 128).
struct ResNetShape {
  std::vector<int> blocks;
  bool bottleneck = true;
  int groups = 1;
  int width_per_group = 64;
};

std::vector<LayerCost> resnet(const ModelShape& shape, const ResNetShape& net) {
  const std::vector<int>& blocks = net.blocks;
  const bool bottleneck = net.bottleneck;
  CnnBuilder b(shape.batch, 3, shape.image_size);
  b.conv("conv1", 64, 7, 2, 3);
  b.batch_norm("bn1");
  b.relu("relu");
  b.max_pool("maxpool", 3, 2, 1);
  const int expansion = bottleneck ? 4 : 1;
  int inplanes = 64;
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    const int planes = 64 << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const int stride = (i == 0 && stage > 0) ? 2 : 1;
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i) + ".";
      const int in_channels = b.channels();
      const int in_size = b.size();
      if (bottleneck) {
        const int width = planes * net.width_per_group / 64 * net.groups;
        b.conv(p + "conv1", width, 1, 1, 0);
        b.batch_norm(p + "bn1");
        b.relu(p + "relu1");
        b.conv(p + "conv2", width, 3, stride, 1, false, net.groups);
        b.batch_norm(p + "bn2");
        b.relu(p + "relu2");
        b.conv(p + "conv3", planes * expansion, 1, 1, 0);
        b.batch_norm(p + "bn3");
      } else {
        b.conv(p + "conv1", planes, 3, stride, 1);
        b.batch_norm(p + "bn1");
        b.relu(p + "relu1");
        b.conv(p + "conv2", planes, 3, 1, 1);
        b.batch_norm(p + "bn2");
      }
      if (stride != 1 || inplanes != planes * expansion) {
        const int out_size = b.size();
        b.set_shape(in_channels, in_size);
        b.conv(p + "downsample.0", planes * expansion, 1, stride, 0);
        b.batch_norm(p + "downsample.1");
        b.set_shape(planes * expansion, out_size);
      }
      b.residual_add(p + "add");
      b.relu(p + "relu3");
      inplanes = planes * expansion;
    }
  }
  b.global_avg_pool("avgpool");
  b.linear("fc", 1000);
  return b.take();
}

// VGG's and AlexNet's classifier: 4096, ReLU, 4096, ReLU, 1000, as torchvision's Sequential
// numbers them from `first` (its dropouts, which cost nothing here, take the gaps).
void classifier(CnnBuilder& b, int first) {
  const auto name = [](int index) {
    return "classifier." + std::to_string(index);
  };
  b.linear(name(first), 4096);
  b.relu(name(first + 1));
  b.linear(name(first + 3), 4096);
  b.relu(name(first + 4));
  b.linear(name(6), 1000);
}

// torchvision's VGG configurations "A" (vgg11), "B" (vgg13), "D" (vgg16), "E" (vgg19): the
// filters of each 3x3 convolution, kPool for a 2x2 max pool; with BN, a batch norm after each
// convolution. features.<index> follows torchvision's Sequential numbering.
constexpr int kPool = 0;
const std::vector<int>& vgg_config(int depth) {
  static const std::vector<int> kA{64,  kPool, 128,   kPool, 256, 256,  kPool,
                                   512, 512,   kPool, 512,   512, kPool};
  static const std::vector<int> kB{64,    64,  kPool, 128,   128, kPool, 256,  256,
                                   kPool, 512, 512,   kPool, 512, 512,   kPool};
  static const std::vector<int> kD{64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                                   kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
  static const std::vector<int> kE{64,  64,  kPool, 128, 128,   kPool, 256, 256, 256, 256,  kPool,
                                   512, 512, 512,   512, kPool, 512,   512, 512, 512, kPool};
  return depth == 11 ? kA : depth == 13 ? kB : depth == 16 ? kD : kE;
}

std::vector<LayerCost> vgg(const ModelShape& shape, int depth, bool batch_norm) {
  CnnBuilder b(shape.batch, 3, shape.image_size);
  int index = 0;
  for (int v : vgg_config(depth)) {
    const auto name = [&index](int offset) {
      return "features." + std::to_string(index + offset);
    };
    if (v == kPool) {
      b.max_pool(name(0), 2, 2, 0);
      index += 1;
      continue;
    }
    b.conv(name(0), v, 3, 1, 1, /*bias=*/true);
    if (batch_norm) {
      b.batch_norm(name(1));
    }
    b.relu(name(batch_norm ? 2 : 1));
    index += batch_norm ? 3 : 2;
  }
  if (b.size() != 7) {
    throw GeneratorError("image_size", std::to_string(shape.image_size) + ": dtsim models " +
                                           shape.model +
                                           " on 224x224 inputs only (a 7x7 feature map)");
  }
  classifier(b, 0);
  return b.take();
}

// torchvision's AlexNet (the "one weird trick" variant torchvision ships: 64-192-384-256-256
// filters); its adaptive 6x6 average pooling is the identity at 224x224.
std::vector<LayerCost> alexnet(const ModelShape& shape) {
  if (shape.image_size != 224) {
    throw GeneratorError("image_size", std::to_string(shape.image_size) +
                                           ": dtsim models alexnet on 224x224 inputs only");
  }
  CnnBuilder b(shape.batch, 3, shape.image_size);
  b.conv("features.0", 64, 11, 4, 2, /*bias=*/true);
  b.relu("features.1");
  b.max_pool("features.2", 3, 2, 0);
  b.conv("features.3", 192, 5, 1, 2, true);
  b.relu("features.4");
  b.max_pool("features.5", 3, 2, 0);
  b.conv("features.6", 384, 3, 1, 1, true);
  b.relu("features.7");
  b.conv("features.8", 256, 3, 1, 1, true);
  b.relu("features.9");
  b.conv("features.10", 256, 3, 1, 1, true);
  b.relu("features.11");
  b.max_pool("features.12", 3, 2, 0);
  classifier(b, 1);
  return b.take();
}

// The MLPerf HPC CosmoFlow reference (model_zoo.h): 4 channels in, 4 parameters out.
std::vector<LayerCost> cosmoflow(const ModelShape& shape) {
  constexpr int kBlocks = 5;
  if (shape.image_size % (1 << kBlocks) != 0) {
    throw GeneratorError("image_size", std::to_string(shape.image_size) +
                                           ": cosmoflow's volume side must be a multiple of 32 "
                                           "(five 2x2x2 poolings; the benchmark uses 128)");
  }
  CnnBuilder b(shape.batch, 4, shape.image_size, /*dims=*/3);
  for (int i = 0; i < kBlocks; ++i) {
    const std::string p = "conv_blocks." + std::to_string(i) + ".";
    b.conv(p + "conv", 32 << i, 3, 1, 1, /*bias=*/true);
    b.relu(p + "act");
    b.max_pool(p + "pool", 2, 2, 0);
  }
  b.linear("l1", 128);
  b.relu("act1");
  b.linear("l2", 64);
  b.relu("act2");
  b.linear("lO", 4);
  return b.take();
}

// torchvision's Inception v3 (Szegedy et al. 2016) with its auxiliary classifier, which runs in
// training. Every convolution is a BasicConv2d: conv without bias, batch norm, ReLU. Module
// names follow torchvision's (Mixed_5b.branch5x5_2.conv).
class Inception {
 public:
  explicit Inception(const ModelShape& shape) : b_(shape.batch, 3, shape.image_size) {}

  std::vector<LayerCost> layers() {
    basic("Conv2d_1a_3x3", 32, 3, 2, 0);
    basic("Conv2d_2a_3x3", 32, 3, 1, 0);
    basic("Conv2d_2b_3x3", 64, 3, 1, 1);
    b_.max_pool("maxpool1", 3, 2, 0);
    basic("Conv2d_3b_1x1", 80, 1, 1, 0);
    basic("Conv2d_4a_3x3", 192, 3, 1, 0);
    b_.max_pool("maxpool2", 3, 2, 0);
    block_a("Mixed_5b", 32);
    block_a("Mixed_5c", 64);
    block_a("Mixed_5d", 64);
    block_b("Mixed_6a");
    for (const auto& [name, c7] : {std::pair{"Mixed_6b", 128}, std::pair{"Mixed_6c", 160},
                                   std::pair{"Mixed_6d", 160}, std::pair{"Mixed_6e", 192}}) {
      block_c(name, c7);
    }
    aux("AuxLogits");
    block_d("Mixed_7a");
    block_e("Mixed_7b");
    block_e("Mixed_7c");
    b_.global_avg_pool("avgpool");
    b_.linear("fc", 1000);
    return b_.take();
  }

 private:
  // The block's input, which every branch starts from.
  struct Input {
    int channels, size;
  };

  void basic(const std::string& name, int out, int k, int stride, int pad) {
    b_.conv(name + ".conv", out, k, stride, pad);
    norm_relu(name);
  }
  void rect(const std::string& name, int out, int kh, int kw) {
    b_.conv_rect(name + ".conv", out, kh, kw, kh / 2, kw / 2);
    norm_relu(name);
  }
  void norm_relu(const std::string& name) {
    b_.batch_norm(name + ".bn");
    b_.relu(name + ".relu");
  }
  [[nodiscard]] Input input() const { return {b_.channels(), b_.size()}; }
  void from(const Input& in) { b_.set_shape(in.channels, in.size); }
  void pool_branch(const std::string& p, const Input& in, int out) {
    from(in);
    b_.avg_pool(p + "avg_pool", 3, 1, 1);
    basic(p + "branch_pool", out, 1, 1, 0);
  }

  void block_a(const std::string& name, int pool_features) {
    const std::string p = name + ".";
    const Input in = input();
    basic(p + "branch1x1", 64, 1, 1, 0);
    from(in);
    basic(p + "branch5x5_1", 48, 1, 1, 0);
    basic(p + "branch5x5_2", 64, 5, 1, 2);
    from(in);
    basic(p + "branch3x3dbl_1", 64, 1, 1, 0);
    basic(p + "branch3x3dbl_2", 96, 3, 1, 1);
    basic(p + "branch3x3dbl_3", 96, 3, 1, 1);
    pool_branch(p, in, pool_features);
    b_.concat(p + "cat", 64 + 64 + 96 + pool_features);
  }
  void block_b(const std::string& name) {  // 35x35 -> 17x17
    const std::string p = name + ".";
    const Input in = input();
    basic(p + "branch3x3", 384, 3, 2, 0);
    from(in);
    basic(p + "branch3x3dbl_1", 64, 1, 1, 0);
    basic(p + "branch3x3dbl_2", 96, 3, 1, 1);
    basic(p + "branch3x3dbl_3", 96, 3, 2, 0);
    from(in);
    b_.max_pool(p + "max_pool", 3, 2, 0);
    b_.concat(p + "cat", 384 + 96 + in.channels);
  }
  void block_c(const std::string& name, int c7) {
    const std::string p = name + ".";
    const Input in = input();
    basic(p + "branch1x1", 192, 1, 1, 0);
    from(in);
    basic(p + "branch7x7_1", c7, 1, 1, 0);
    rect(p + "branch7x7_2", c7, 1, 7);
    rect(p + "branch7x7_3", 192, 7, 1);
    from(in);
    basic(p + "branch7x7dbl_1", c7, 1, 1, 0);
    rect(p + "branch7x7dbl_2", c7, 7, 1);
    rect(p + "branch7x7dbl_3", c7, 1, 7);
    rect(p + "branch7x7dbl_4", c7, 7, 1);
    rect(p + "branch7x7dbl_5", 192, 1, 7);
    pool_branch(p, in, 192);
    b_.concat(p + "cat", 4 * 192);
  }
  void block_d(const std::string& name) {  // 17x17 -> 8x8
    const std::string p = name + ".";
    const Input in = input();
    basic(p + "branch3x3_1", 192, 1, 1, 0);
    basic(p + "branch3x3_2", 320, 3, 2, 0);
    from(in);
    basic(p + "branch7x7x3_1", 192, 1, 1, 0);
    rect(p + "branch7x7x3_2", 192, 1, 7);
    rect(p + "branch7x7x3_3", 192, 7, 1);
    basic(p + "branch7x7x3_4", 192, 3, 2, 0);
    from(in);
    b_.max_pool(p + "max_pool", 3, 2, 0);
    b_.concat(p + "cat", 320 + 192 + in.channels);
  }
  // Two 1x3 / 3x1 convolutions side by side on one input.
  void split(const std::string& name, const std::string& a, const std::string& b) {
    const Input in = input();
    rect(name + a, 384, 1, 3);
    from(in);
    rect(name + b, 384, 3, 1);
  }
  void block_e(const std::string& name) {
    const std::string p = name + ".";
    const Input in = input();
    basic(p + "branch1x1", 320, 1, 1, 0);
    from(in);
    basic(p + "branch3x3_1", 384, 1, 1, 0);
    split(p, "branch3x3_2a", "branch3x3_2b");
    from(in);
    basic(p + "branch3x3dbl_1", 448, 1, 1, 0);
    basic(p + "branch3x3dbl_2", 384, 3, 1, 1);
    split(p, "branch3x3dbl_3a", "branch3x3dbl_3b");
    pool_branch(p, in, 192);
    b_.concat(p + "cat", 320 + 2 * 384 + 2 * 384 + 192);
  }
  // The auxiliary classifier on Mixed_6e's 17x17 map; the main path goes on from that map.
  void aux(const std::string& name) {
    const std::string p = name + ".";
    const Input in = input();
    b_.avg_pool(p + "avg_pool", 5, 3, 0);
    basic(p + "conv0", 128, 1, 1, 0);
    basic(p + "conv1", 768, 5, 1, 0);
    b_.global_avg_pool(p + "adaptive_avg_pool");
    b_.linear(p + "fc", 1000);
    from(in);
  }

  CnnBuilder b_;
};

std::vector<LayerCost> inception_v3(const ModelShape& shape) {
  if (shape.image_size != 299) {
    throw GeneratorError("image_size", std::to_string(shape.image_size) +
                                           ": dtsim models inception_v3 on 299x299 inputs only");
  }
  return Inception(shape).layers();
}

}  // namespace

const std::vector<std::string>& cnn_names() {
  static const std::vector<std::string> kNames{
      "resnet18",        "resnet34",         "resnet50",        "resnet101", "resnet152",
      "resnext50_32x4d", "resnext101_32x8d", "wide_resnet50_2", "vgg11",     "vgg11_bn",
      "vgg13",           "vgg13_bn",         "vgg16",           "vgg16_bn",  "vgg19",
      "vgg19_bn",        "alexnet",          "inception_v3",    "cosmoflow"};
  return kNames;
}

std::optional<std::vector<LayerCost>> cnn_layers(const ModelShape& shape) {
  const std::string& m = shape.model;
  if (m == "resnet18")
    return resnet(shape, {.blocks = {2, 2, 2, 2}, .bottleneck = false});
  if (m == "resnet34")
    return resnet(shape, {.blocks = {3, 4, 6, 3}, .bottleneck = false});
  if (m == "resnet50")
    return resnet(shape, {.blocks = {3, 4, 6, 3}});
  if (m == "resnet101")
    return resnet(shape, {.blocks = {3, 4, 23, 3}});
  if (m == "resnet152")
    return resnet(shape, {.blocks = {3, 8, 36, 3}});
  if (m == "resnext50_32x4d")
    return resnet(shape, {.blocks = {3, 4, 6, 3}, .groups = 32, .width_per_group = 4});
  if (m == "resnext101_32x8d")
    return resnet(shape, {.blocks = {3, 4, 23, 3}, .groups = 32, .width_per_group = 8});
  if (m == "wide_resnet50_2")
    return resnet(shape, {.blocks = {3, 4, 6, 3}, .width_per_group = 128});
  for (int depth : {11, 13, 16, 19}) {
    const std::string name = "vgg" + std::to_string(depth);
    if (m == name || m == name + "_bn") {
      return vgg(shape, depth, m.ends_with("_bn"));
    }
  }
  if (m == "alexnet")
    return alexnet(shape);
  if (m == "inception_v3")
    return inception_v3(shape);
  if (m == "cosmoflow")
    return cosmoflow(shape);
  return std::nullopt;
}

}  // namespace dtsim::workloads::zoo
