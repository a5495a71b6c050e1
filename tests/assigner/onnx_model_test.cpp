// model_from_onnx on models built here with ONNX's own protobuf types: sizes from initializers,
// FLOPs by the header's table, connections from the crossing tensors, grouping, errors.
#include "troupe/actors/error.hpp"
#include "troupe/assigner/assigner.hpp"
#include "troupe/assigner/onnx_model.hpp"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

namespace troupe {
namespace {

/// A float tensor's type; a dim below 0 is symbolic, named "N"; no dims: no shape at all.
void set_type(onnx::ValueInfoProto& v, const std::string& name,
              const std::vector<std::int64_t>& dims) {
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    d < 0 ? dim->set_dim_param("N") : dim->set_dim_value(d);
  }
}

class model_builder {
public:
  model_builder() {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
  }
  model_builder& input(const std::string& name, const std::vector<std::int64_t>& dims) {
    set_type(*graph().add_input(), name, dims);
    return *this;
  }
  model_builder& output(const std::string& name, const std::vector<std::int64_t>& dims) {
    set_type(*graph().add_output(), name, dims);
    return *this;
  }
  model_builder& weight(const std::string& name, const std::vector<std::int64_t>& dims) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t count = 1;
    for (auto d : dims) {
      t->add_dims(d);
      count *= d;
    }
    for (std::int64_t i = 0; i < count; ++i)
      t->add_float_data(0.5F);
    return *this;
  }
  model_builder& node(const std::string& op, const std::string& name,
                      const std::vector<std::string>& inputs, const std::string& output,
                      const std::map<std::string, std::vector<std::int64_t>>& ints = {}) {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs)
      n->add_input(i);
    n->add_output(output);
    for (const auto& [key, values] : ints) {
      auto* a = n->add_attribute();
      a->set_name(key);
      if (values.size() == 1) {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(values[0]);
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (auto v : values)
          a->add_ints(v);
      }
    }
    return *this;
  }
  std::string bytes() const { return model_.SerializeAsString(); }

private:
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto model_;
};

/// x(N, 16) -> fc1 (Gemm 16x32, Relu) -> fc2 (Gemm 32x8).
std::string mlp() {
  return model_builder{}
    .input("x", {-1, 16})
    .weight("w1", {16, 32})
    .weight("b1", {32})
    .weight("w2", {32, 8})
    .weight("b2", {8})
    .node("Gemm", "/fc1/Gemm", {"x", "w1", "b1"}, "h")
    .node("Relu", "/fc1/Relu", {"h"}, "a")
    .node("Gemm", "/fc2/Gemm", {"a", "w2", "b2"}, "y")
    .output("y", {-1, 8})
    .bytes();
}

TEST(onnx_model, an_mlp_by_module_with_a_symbolic_batch) {
  const auto m = model_from_onnx_bytes(mlp(), {.group_depth = 1, .batch_size = 4});
  ASSERT_EQ(m.modules.size(), 2u);
  EXPECT_EQ(m.modules[0].name, "fc1");
  EXPECT_EQ(m.modules[1].name, "fc2");
  // Parameters, then what the module's operators produce (4 rows of 32 floats, twice).
  EXPECT_EQ(m.modules[0].size_bytes, (16 * 32 + 32) * 4 + 2 * (4 * 32 * 4));
  EXPECT_EQ(m.modules[1].size_bytes, (32 * 8 + 8) * 4 + 4 * 8 * 4);
  EXPECT_EQ(*m.modules[0].complexity, 2.0 * 16 * (4 * 32) + 4 * 32 + 4 * 32);
  EXPECT_EQ(*m.modules[1].complexity, 2.0 * 32 * (4 * 8) + 4 * 8);
  ASSERT_EQ(m.connections.size(), 1u);
  EXPECT_EQ(m.connections[0].from, 0u);
  EXPECT_EQ(m.connections[0].to, 1u);
  EXPECT_EQ(m.connections[0].weight, 4 * 32 * 4) << "a: 4 x 32 floats";

  const auto each = model_from_onnx_bytes(mlp(), {.batch_size = 4});
  EXPECT_EQ(each.modules.size(), 3u) << "a module per operator";
  const auto doubled = model_from_onnx_bytes(mlp(), {.group_depth = 1, .size_multiplier = 2});
  EXPECT_EQ(doubled.modules[1].size_bytes, 2 * (32 * 8 + 8) * 4 + 8 * 4);
}

TEST(onnx_model, conv_and_batched_matmul_flops) {
  const auto m = model_builder{}
                   .input("x", {1, 3, 8, 8})
                   .weight("k", {4, 3, 3, 3})
                   .input("a", {2, 5, 6})
                   .weight("b", {6, 7})
                   .node("Conv", "conv", {"x", "k"}, "c", {{"pads", {1, 1, 1, 1}}})
                   .node("MatMul", "matmul", {"a", "b"}, "p")
                   .output("c", {1, 4, 8, 8})
                   .output("p", {2, 5, 7})
                   .bytes();
  const auto model = model_from_onnx_bytes(m);
  ASSERT_EQ(model.modules.size(), 2u);
  EXPECT_EQ(*model.modules[0].complexity, 2.0 * (4 * 8 * 8) * 3 * 9);
  EXPECT_EQ(*model.modules[1].complexity, 2.0 * 6 * (2 * 5 * 7));
}

/// 4 blocks, each a MatMul and the skip connection's Add, over x(N, 8).
std::string transformer_like() {
  model_builder b;
  b.input("x", {-1, 8});
  std::string last = "x";
  for (int i = 0; i < 4; ++i) {
    const auto layer = "/layers." + std::to_string(i);
    const auto w = "w" + std::to_string(i), h = "h" + std::to_string(i),
               s = "s" + std::to_string(i);
    b.weight(w, {8, 8}).node("MatMul", layer + "/attn/MatMul", {last, w}, h);
    b.node("Add", layer + "/Add", {h, last}, s);
    last = s;
  }
  b.output(last, {-1, 8});
  return b.bytes();
}

TEST(onnx_model, blocks_with_skip_connections_group_by_depth) {
  const auto m = model_from_onnx_bytes(transformer_like(), {.group_depth = 2, .batch_size = 2});
  ASSERT_EQ(m.modules.size(), 4u);
  EXPECT_EQ(m.modules[2].name, "layers.2");
  ASSERT_EQ(m.connections.size(), 3u) << "each block reads the one before";
  for (const auto& c : m.connections) {
    EXPECT_EQ(c.to, c.from + 1);
    EXPECT_EQ(c.weight, 2 * 8 * 4) << "the sum, read by both MatMul and Add, counted once";
  }
  const auto deeper = model_from_onnx_bytes(transformer_like(), {.group_depth = 3});
  EXPECT_EQ(deeper.modules.size(), 8u) << "layers.i.attn and layers.i.Add";
  // And it places: 4 modules on 2 devices.
  const auto placed =
    assign(m.modules, {{"a", device_kind::gpu, 1e6}, {"b", device_kind::gpu, 1e6}}, m.connections);
  EXPECT_TRUE(placed.feasible);
}

/// What `command` prints, and its exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr)
    out += buffer.data();
  return {out, ::pclose(pipe)};
}

// troupe-assign on an ONNX file and a devices file: the modules by name, placed, in JSON.
TEST(onnx_model, troupe_assign_places_an_onnx_file) {
  const auto folder =
    std::filesystem::temp_directory_path() / ("troupe-onnx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  std::ofstream{folder / "model.onnx", std::ios::binary} << transformer_like();
  std::ofstream{folder / "devices.json"}
    << R"([{"name": "gpu0", "kind": "gpu", "memory_bytes": 1e6},
           {"name": "gpu1", "kind": "gpu", "memory_bytes": 1e6}])";
  const auto [json, status] =
    run(std::string{TROUPE_ASSIGN_CLI} + " " + (folder / "model.onnx").string() +
        " --group-depth 2 --batch-size 2 --format json --devices " +
        (folder / "devices.json").string());
  EXPECT_EQ(status, 0) << json;
  EXPECT_NE(json.find(R"("module_names":["layers.0","layers.1","layers.2","layers.3"])"),
            std::string::npos)
    << json;
  EXPECT_NE(json.find(R"("feasible":true)"), std::string::npos) << json;
  const auto [text, text_status] =
    run(std::string{TROUPE_ASSIGN_CLI} + " " + (folder / "model.onnx").string() +
        " --group-depth 2 --devices " + (folder / "devices.json").string());
  EXPECT_NE(text.find("compute"), std::string::npos) << text;
  const auto [bad, bad_status] =
    run(std::string{TROUPE_ASSIGN_CLI} + " " + (folder / "model.onnx").string() +
        " --group-depth 1 --devices " + (folder / "devices.json").string() + " 2>&1");
  EXPECT_NE(bad_status, 0);
  EXPECT_NE(bad.find("one module"), std::string::npos) << bad;
  std::filesystem::remove_all(folder);
}

TEST(onnx_model, bad_input_is_named) {
  EXPECT_THROW(model_from_onnx_bytes("not a model"), troupe::invalid_argument);
  EXPECT_THROW(model_from_onnx("/nonexistent/model.onnx"), troupe::invalid_argument);
  try {
    model_from_onnx_bytes(mlp(), {.group_depth = 0, .batch_size = 4}); // fine
    model_from_onnx_bytes(model_builder{}
                            .input("x", {-1, 16})
                            .weight("w1", {16, 32})
                            .node("Gemm", "/model/a", {"x", "w1"}, "h")
                            .node("Relu", "/model/b", {"h"}, "y")
                            .bytes(),
                          {.group_depth = 1});
    FAIL() << "one module was accepted";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("one module"), std::string::npos) << e.what();
  }
  // An input of no known shape (no shape at all): what the first operator makes of it has
  // none either, and its bytes are needed.
  try {
    model_from_onnx_bytes(model_builder{}
                            .input("x", {}) // a tensor type without a shape
                            .node("Relu", "first", {"x"}, "h")
                            .node("Relu", "second", {"h"}, "y")
                            .bytes());
    FAIL() << "an unknown shape was counted";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("tensor 'h'"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe
