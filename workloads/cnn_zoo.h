// The model zoo's CNNs (model_zoo.h is the interface; GENERATOR.md lists them with the figures
// they are checked against). Internal to the workloads library.
#ifndef DTSIM_WORKLOADS_CNN_ZOO_H_
#define DTSIM_WORKLOADS_CNN_ZOO_H_

#include <optional>
#include <string>
#include <vector>

#include "workloads/model_zoo.h"

namespace dtsim::workloads::zoo {

// "resnet18", ..., "vgg11" ... "vgg19_bn", "alexnet", "inception_v3", "cosmoflow".
[[nodiscard]] const std::vector<std::string>& cnn_names();

// The layers of the CNN called shape.model, or nothing when the zoo has no CNN of that name.
// Throws GeneratorError("image_size", ...) for an input the model cannot take.
[[nodiscard]] std::optional<std::vector<LayerCost>> cnn_layers(const ModelShape& shape);

}  // namespace dtsim::workloads::zoo

#endif  // DTSIM_WORKLOADS_CNN_ZOO_H_
