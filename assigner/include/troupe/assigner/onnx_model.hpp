// A model to place, read from an ONNX file: modules with their bytes and FLOPs, and the bytes
// that flow between them. Written for what PyTorch's exporter emits (torch.onnx.export, opsets
// 13-17: transformers, recurrent networks, CNNs), and any other exporter's standard operators.
//
//   auto model = troupe::model_from_onnx("gpt2.onnx",
//                                        {.group_depth = 2, .batch_size = 8, .dims = {{"seq",
//                                        512}}});
//   auto placed = troupe::assign(model.modules, troupe::local_devices(), model.connections);
//
// Weights are never loaded: an initializer's size comes from its dims and type, its bytes are
// skipped unread, and weights kept in external data files (every model over 2 GB) are never
// opened. Reading a model costs little more memory than its graph.
//
// Modules: one per operator (group_depth 0), or the operators whose scope shares its first
// `group_depth` components. An operator's scope is its name without its last component, split at
// '/' and '.': PyTorch names "/enc/layers.3/self_attn/MatMul" after the module that ran it, so
// depth 3 gives "enc.layers.3", one module per encoder layer (for a GPT-2 export's
// "/blocks.7/attn/MatMul", depth 2 gives "blocks.7"). An operator without a scope (top-level glue
// such as "/Add", or an exporter's "Constant_12") joins the module of what it reads, else of what
// reads it. An initializer counts once, in the module of its first reader.
// A module's size is the bytes of the initializers it owns (times size_multiplier, as machin
// counts parameters and their gradients) plus the bytes of what its operators produce; its
// complexity is its FLOPs. Connections: the bytes of each tensor one module produces and another
// reads. Bytes of activations are elements times dtype_bytes.
//
// Shapes: every symbolic dim of the inputs is bound, from `dims` by name, else (the first axis
// of an input, the batch by every exporter's convention) from batch_size; any other is an
// invalid_argument naming it and its input, as is a name in `dims` that no input has. Then
// ONNX's shape inference, then troupe's own pass, which evaluates the small integer tensors that
// feed shapes (Shape, Size, Gather, Slice, Concat, Unsqueeze, Squeeze, Cast, Range,
// ConstantOfShape, Expand, Reshape, Where, comparisons and integer arithmetic, Constant,
// initializers) and follows shapes through the rest, If, Loop and Scan and LSTM, GRU, RNN
// included. A tensor whose shape still cannot be known takes the shape of its producer's largest
// input, and `warnings` lists such tensors.
//
// FLOPs, per operator (output elements: E):
//   MatMul                 2 * E * K (K: the shared dim; broadcast batch dims included in E)
//   Gemm                   2 * E * K (+ E with C)
//   Conv                   2 * E * (input channels / group) * kernel elements (+ E with a bias)
//   ConvTranspose          2 * input elements * (output channels / group) * kernel elements
//   LSTM, GRU, RNN         seq * batch * directions * (2 * gates * hidden * (input + hidden)
//                          + 5 * gates * hidden), gates 4, 3 and 1
//   Softmax, LogSoftmax, LayerNormalization, BatchNormalization, InstanceNormalization,
//   GroupNormalization     5 * E
//   MaxPool, AveragePool   E * kernel elements; Global pools and Reduce*: input elements
//   elementwise (Add Mul Div Pow Sqrt Erf Gelu Relu Where Equal Not Trilu ..., and Gather:
//   an embedding's lookup)     E
//   If: its costlier branch; Loop: its body times its trip count (once if unknown); Scan: its
//   body times its length
//   data movement (Reshape Transpose Shape Concat Slice Split Expand Cast Constant ...): 0
//   any other operator: E, and `warnings` names it
//
// Errors (troupe::invalid_argument, naming what): a file that is not ONNX, an unbound symbolic
// dim, a grouping that makes one module.
#pragma once

#include "troupe/assigner/specs.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace troupe {

/// How model_from_onnx reads a model: how operators group into modules, and the sizes of the dims
/// the model leaves symbolic.
struct onnx_options {
  /// 0: a module per operator; else the name components that make a module; nothing: the depth
  /// that makes one module per repeated block (the smallest at which two scopes differ only in a
  /// last number, as "enc.layers.0" and "enc.layers.1"), or 1 if the model repeats none.
  std::optional<std::size_t> group_depth = 0;
  /// The size of a symbolic first axis (the batch) not named in `dims`.
  std::int64_t batch_size = 1;
  /// The bytes of an element of the tensors operators produce and pass between modules.
  double dtype_bytes = 4;
  /// What a module's weights are multiplied by in its size.
  double size_multiplier = 1;
  /// Sizes of the inputs' symbolic dims by name, as {"seq", 512}; a first axis not named here
  /// takes batch_size.
  std::map<std::string, std::int64_t> dims;
};

/// A model read from ONNX: its modules (sizes and FLOPs) and the connections between them, ready
/// for troupe::assign.
struct onnx_model {
  /// The modules, in order of their first operator.
  std::vector<module_spec> modules;
  /// The tensors crossing modules, weighted by their bytes.
  std::vector<connection> connections;
  /// The bytes of every initializer (the weights), each counted once, without size_multiplier.
  double parameter_bytes = 0;
  /// What the reading had to guess: estimated shapes, operators without a FLOP count (one line
  /// each). troupe-assign prints them.
  std::vector<std::string> warnings;
  /// The depth the modules were grouped at (onnx_options::group_depth, or the one it picked).
  std::size_t group_depth = 0;
  /// Two of the repeated blocks a picked depth was picked by ("enc.layers.0", "enc.layers.1");
  /// empty when the depth was given, or the model repeats no block.
  std::vector<std::string> repeated_blocks;
};

/// Reads the model at `path`. invalid_argument for what is wrong with the file, or if this build
/// of troupe has no ONNX reader (onnx_available()).
onnx_model model_from_onnx(const std::filesystem::path& path, const onnx_options& options = {});
/// The same from the file's bytes.
onnx_model model_from_onnx_bytes(const std::string& bytes, const onnx_options& options = {});

/// Whether this build of troupe reads ONNX models (configured with TROUPE_WITH_ONNX, on where
/// Debian's libonnx-dev is installed).
bool onnx_available() noexcept;

} // namespace troupe
