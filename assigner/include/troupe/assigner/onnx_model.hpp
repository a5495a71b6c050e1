// A model to place, read from an ONNX file: modules with their bytes and FLOPs, and the bytes
// that flow between them.
//
//   auto model = troupe::model_from_onnx("model.onnx", {.group_depth = 2, .batch_size = 8});
//   auto placed = troupe::assign(model.modules, troupe::local_devices(), model.connections);
//
// Modules: one per operator (group_depth 0), or the operators whose names share their first
// `group_depth` components (split at '/' and '.': "/layers.3/attn/MatMul" is in "layers.3" at
// depth 2); an operator without a name is a module of its own. A module's size is the bytes of
// the initializers its operators read (times size_multiplier, as machin counts parameters and
// their gradients) plus the bytes of what its operators produce; its complexity is its FLOPs.
// Connections: the bytes of each tensor one module produces and another reads. Shapes come from
// ONNX's shape inference; a symbolic dim ("batch", "N") of the inputs takes batch_size. Bytes
// are elements times dtype_bytes.
//
// FLOPs, per operator (output elements: E):
//   MatMul            2 * M * K * N per matrix product (times the broadcast batch)
//   Gemm              2 * M * K * N (+ M * N with C)
//   Conv              2 * E * (input channels / group) * kernel elements
//   Softmax           5 * E (exp, sum, divide, max, subtract)
//   LayerNormalization, BatchNormalization, InstanceNormalization: 5 * E
//   Add Sub Mul Div Relu Sigmoid Tanh Gelu Erf Sqrt Pow Exp Neg, ...: E (one per element)
//   everything else (Reshape, Transpose, Gather, Concat, ...): 0
//
// Errors (troupe::invalid_argument, naming what): a file that is not ONNX, a tensor whose shape
// is unknown where its bytes are needed, a grouping that makes one module.
#pragma once

#include "troupe/assigner/specs.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace troupe {

struct onnx_options {
  /// 0: a module per operator; else the name components that make a module.
  std::size_t group_depth = 0;
  std::int64_t batch_size = 1;
  double dtype_bytes = 4;
  double size_multiplier = 1;
};

struct onnx_model {
  std::vector<module_spec> modules;
  std::vector<connection> connections;
};

onnx_model model_from_onnx(const std::filesystem::path& path, const onnx_options& options = {});
/// The same from the file's bytes.
onnx_model model_from_onnx_bytes(const std::string& bytes, const onnx_options& options = {});

} // namespace troupe
