// model_from_onnx on real exports: the models in data/onnx, made by PyTorch 1.13's own exporter
// (tools/export_onnx_models.py, random weights, shrunk widths). For each: the module count,
// the parameter bytes against PyTorch's own count (data/onnx/manifest.json, recorded here),
// the FLOPs of one named module against a hand computation from the export's operators, and a
// placement that fits.
#include "troupe/actors/error.hpp"
#include "troupe/assigner/assigner.hpp"
#include "troupe/assigner/onnx_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace troupe {
namespace {

std::string exported(const std::string& name) {
  return std::string{TROUPE_ONNX_DATA} + "/" + name + ".onnx";
}

const module_spec& module_named(const onnx_model& m, const std::string& name) {
  auto at = std::find_if(m.modules.begin(), m.modules.end(),
                         [&](const module_spec& s) { return s.name == name; });
  if (at == m.modules.end())
    throw std::runtime_error("no module '" + name + "'");
  return *at;
}

std::vector<std::string> names_of(const onnx_model& m) {
  std::vector<std::string> names;
  for (const auto& s : m.modules)
    names.push_back(s.name);
  return names;
}

void expect_placed(const onnx_model& m) {
  const auto placed = assign(
    m.modules, {{"gpu0", device_kind::gpu, 64e6}, {"gpu1", device_kind::gpu, 64e6}}, m.connections);
  EXPECT_TRUE(placed.feasible);
}

// One encoder layer (width 64, 4 heads, feed-forward 128) over 2 x 16 tokens (T = 32), by the
// operators PyTorch exports for it and the FLOP table of onnx_model.hpp.
constexpr double tokens = 2 * 16;
constexpr double layer_norm = 7 * tokens * 64 + 2 * tokens; // ReduceMean, Sub, Pow, ReduceMean,
                                                            // Div, Mul, Add; Add and Sqrt per token
constexpr double encoder_layer =
  2 * tokens * 192 * 64 + tokens * 192 // in-projection MatMul and its bias
  + 5 + 1 // the head split's shape arithmetic: 5 scalar ops, a Gather
  + 8 * 16 * 16 // q / sqrt(head width): 8 (batch x heads) of 16 x 16
  + 2 * (2.0 * 8 * 16 * 16 * 16) // q k^T and (softmax) v
  + 5 * 8 * 16 * 16 // Softmax
  + 2 * tokens * 64 * 64 + tokens * 64 // out-projection Gemm with its bias
  + tokens * 64 // residual
  + layer_norm // norm1
  + 2 * tokens * 128 * 64 + tokens * 128 // linear1 and its bias
  + tokens * 128 // Relu
  + 2 * tokens * 64 * 128 + tokens * 64 // linear2 and its bias
  + tokens * 64 // residual
  + layer_norm; // norm2

TEST(onnx_exports, a_transformer_encoder_with_static_shapes) {
  const auto m = model_from_onnx(exported("encoder_static"), {.group_depth = 3});
  EXPECT_EQ(names_of(m), (std::vector<std::string>{"enc.layers.0", "enc.layers.1"}));
  EXPECT_EQ(m.parameter_bytes, 267'776) << "PyTorch: 66,944 parameters";
  EXPECT_EQ(*module_named(m, "enc.layers.0").complexity, encoder_layer);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  expect_placed(m);
}

// The same layer exported with dynamic batch and sequence axes: the exporter computes every
// reshape's target at run time (Shape, Gather, Unsqueeze, Concat), which troupe evaluates.
TEST(onnx_exports, a_transformer_encoder_with_dynamic_axes) {
  const auto m = model_from_onnx(exported("encoder_dynamic"),
                                 {.group_depth = 3, .batch_size = 2, .dims = {{"seq", 16}}});
  EXPECT_EQ(m.modules.size(), 2u);
  EXPECT_EQ(m.parameter_bytes, 267'776);
  // The layer's sums, and the shape arithmetic that reads batch and sequence off shapes at run
  // time: 6 more Gathers, 2 more Muls and 1 more Div than the static export, one element each.
  EXPECT_EQ(*module_named(m, "enc.layers.1").complexity, encoder_layer + 9);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  expect_placed(m);
  // One group per layer follows the depth: a layer's parts at depth 4.
  const auto parts = model_from_onnx(exported("encoder_dynamic"),
                                     {.group_depth = 4, .batch_size = 2, .dims = {{"seq", 16}}});
  EXPECT_EQ(*module_named(parts, "enc.layers.0.linear1").complexity,
            2 * tokens * 128 * 64 + tokens * 128);
}

TEST(onnx_exports, a_symbolic_dim_nothing_binds_is_named_with_its_input) {
  try {
    model_from_onnx(exported("encoder_dynamic"), {.group_depth = 3});
    FAIL() << "an unbound sequence length was accepted";
  } catch (const invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'seq'"), std::string::npos) << what;
    EXPECT_NE(what.find("input 'x'"), std::string::npos) << what;
    EXPECT_NE(what.find("--dim seq=SIZE"), std::string::npos) << what;
  }
  try {
    model_from_onnx(exported("encoder_dynamic"), {.dims = {{"seq", 16}, {"sequence", 8}}});
    FAIL() << "a dim the model does not have was accepted";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("'sequence'"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("batch, seq"), std::string::npos) << e.what();
  }
}

// Embedding, a 2-layer nn.LSTM of width 64, a projection onto 500 words; 2 x 32 tokens.
TEST(onnx_exports, an_lstm_language_model) {
  const auto m = model_from_onnx(exported("lstm_lm"),
                                 {.group_depth = 1, .batch_size = 2, .dims = {{"seq", 32}}});
  EXPECT_EQ(names_of(m), (std::vector<std::string>{"embed", "lstm", "head"}));
  EXPECT_EQ(m.parameter_bytes, 524'240) << "PyTorch: 131,060 parameters";
  // Per layer: 64 steps (32 x 2) of 4 gates, each 2 * 64 * (64 + 64) multiply-adds and 5 per
  // gate element; and the Gather that reads the batch size off the input's shape.
  constexpr double lstm_layer = 64 * (2 * 4 * 64 * (64 + 64) + 5 * 4 * 64);
  EXPECT_EQ(*module_named(m, "lstm").complexity, 2 * lstm_layer + 1);
  EXPECT_EQ(*module_named(m, "embed").complexity, 2 * 32 * 64) << "the lookup's elements";
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  expect_placed(m);
}

// A GPT-2-style decoder (opset 14): token and position embeddings (positions from Range over
// the sequence length), 2 blocks with a causal mask (Trilu, Where), GELU through Erf.
TEST(onnx_exports, a_causal_decoder) {
  const onnx_options options{.group_depth = 2, .batch_size = 2, .dims = {{"seq", 32}}};
  const auto m = model_from_onnx(exported("gpt_decoder"), options);
  EXPECT_EQ(names_of(m),
            (std::vector<std::string>{"wte", "wpe", "blocks.0", "blocks.1", "ln_f", "head"}));
  EXPECT_EQ(m.parameter_bytes, 672'768) << "PyTorch: 168,192 parameters";
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  expect_placed(m);
  auto deeper = options;
  deeper.group_depth = 3;
  // The MLP's first Linear over 2 x 32 tokens: 64 -> 256, and its bias.
  EXPECT_EQ(
    *module_named(model_from_onnx(exported("gpt_decoder"), deeper), "blocks.0.fc").complexity,
    2.0 * 64 * 256 * 64 + 64 * 256);
}

// With no depth given, modules are the model's repeated blocks where it has them (the encoder's
// layers at depth 3, the decoder's blocks at 2), else its top-level parts; depth 0 stays one
// module per operator (140 on the encoder, Shape and Gather operators among them).
TEST(onnx_exports, a_model_is_cut_into_its_repeated_blocks_by_default) {
  const auto encoder = model_from_onnx(exported("encoder_static"), {.group_depth = std::nullopt});
  EXPECT_EQ(encoder.group_depth, 3u);
  EXPECT_EQ(encoder.repeated_blocks, (std::vector<std::string>{"enc.layers.0", "enc.layers.1"}));
  EXPECT_EQ(names_of(encoder), (std::vector<std::string>{"enc.layers.0", "enc.layers.1"}));
  const auto decoder = model_from_onnx(
    exported("gpt_decoder"), {.group_depth = std::nullopt, .batch_size = 2, .dims = {{"seq", 32}}});
  EXPECT_EQ(decoder.group_depth, 2u);
  EXPECT_EQ(names_of(decoder),
            (std::vector<std::string>{"wte", "wpe", "blocks.0", "blocks.1", "ln_f", "head"}));
  const auto lstm = model_from_onnx(
    exported("lstm_lm"), {.group_depth = std::nullopt, .batch_size = 2, .dims = {{"seq", 32}}});
  EXPECT_EQ(lstm.group_depth, 1u) << "no repeated block: its top-level parts";
  EXPECT_TRUE(lstm.repeated_blocks.empty());
  EXPECT_EQ(names_of(lstm), (std::vector<std::string>{"embed", "lstm", "head"}));
  const auto operators = model_from_onnx(exported("encoder_static"), {.group_depth = 0});
  EXPECT_EQ(operators.group_depth, 0u);
  EXPECT_GT(operators.modules.size(), 100u);
}

// A CNN exported in eval mode: the exporter folds each BatchNorm into its Conv, so the model has
// PyTorch's parameters less the BatchNorms' 2 x (16 + 32) weights and biases.
TEST(onnx_exports, a_cnn_with_grouped_dilated_convolutions) {
  const auto m = model_from_onnx(exported("cnn"), {.group_depth = 1});
  EXPECT_EQ(names_of(m), (std::vector<std::string>{"stem", "body", "head"}));
  EXPECT_EQ(m.parameter_bytes, 8'232 - 2 * (16 + 32) * 4) << "PyTorch: 2,058 parameters";
  // body: a 3x3 Conv, 4 groups, dilation 2, 16 -> 32 channels at 16 x 16 (8,192 outputs, each
  // 4 x 9 multiply-adds, plus the bias), Relu, 2x2 MaxPool to 8 x 8.
  EXPECT_EQ(*module_named(m, "body").complexity, 2.0 * 8192 * 4 * 9 + 8192 + 8192 + 32 * 8 * 8 * 4);
  expect_placed(m);
}

// The same CNN saved with its weights in an external file, which is not even there: sizes come
// from the initializers' dims.
TEST(onnx_exports, weights_in_external_data_are_never_read) {
  const auto m = model_from_onnx(exported("cnn_external"), {.group_depth = 1});
  EXPECT_EQ(m.parameter_bytes, 8'232 - 2 * (16 + 32) * 4);
  EXPECT_EQ(*module_named(m, "body").complexity,
            *module_named(model_from_onnx(exported("cnn"), {.group_depth = 1}), "body").complexity);
}

} // namespace
} // namespace troupe
