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

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
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
}

// An input of no known shape (no shape at all): what the first operator makes of it is
// estimated (what follows is computed from the estimate), listed in one warning, and the model
// still places.
TEST(onnx_model, unknown_shapes_are_estimated_and_listed) {
  const auto m = model_from_onnx_bytes(model_builder{}
                                         .input("x", {}) // a tensor type without a shape
                                         .node("Relu", "first", {"x"}, "h")
                                         .node("Relu", "second", {"h"}, "y")
                                         .bytes());
  ASSERT_EQ(m.modules.size(), 2u);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("estimates"), std::string::npos) << m.warnings[0];
  EXPECT_NE(m.warnings[0].find(": h"), std::string::npos) << m.warnings[0];
}

// An operator the FLOP table does not know counts its output elements, and is named.
TEST(onnx_model, an_unknown_operator_is_counted_and_named) {
  const auto m = model_from_onnx_bytes(model_builder{}
                                         .input("x", {2, 8})
                                         .node("Relu", "/a/Relu", {"x"}, "h")
                                         .node("Frobnicate", "/b/Frobnicate", {"h"}, "y")
                                         .output("y", {2, 8})
                                         .bytes(),
                                       {.group_depth = 1});
  ASSERT_EQ(m.modules.size(), 2u);
  EXPECT_EQ(*m.modules[1].complexity, 16) << "its output elements (the graph's output says 2 x 8)";
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("Frobnicate"), std::string::npos) << m.warnings[0];
}

// ConvTranspose and GRU by the header's table; their outputs' shapes (read by the next
// operator) by troupe's rules.
TEST(onnx_model, transposed_convolution_and_gru_flops) {
  const auto m = model_builder{}
                   .input("x", {1, 8, 4, 4})
                   .weight("k", {8, 4, 3, 3}) // 8 in, 4 out per group
                   .node("ConvTranspose", "/up/ConvTranspose", {"x", "k"}, "u",
                         {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}})
                   .node("Relu", "/up/Relu", {"u"}, "r")
                   .input("seq", {5, 2, 3})
                   .weight("w", {1, 12, 3})
                   .weight("rw", {1, 12, 4})
                   .node("GRU", "/gru/GRU", {"seq", "w", "rw"}, "y", {{"hidden_size", {4}}})
                   .node("Relu", "/gru/Relu", {"y"}, "z")
                   .bytes();
  const auto model = model_from_onnx_bytes(m, {.group_depth = 1});
  ASSERT_EQ(model.modules.size(), 2u);
  // 2 x (8 x 4 x 4 inputs) x 4 outputs x 9 taps; then a Relu over 1 x 4 x 8 x 8: (4 - 1) * 2 - 2
  // + 3 + 1 = 8 wide.
  EXPECT_EQ(*model.modules[0].complexity, 2.0 * 128 * 4 * 9 + 4 * 8 * 8);
  // 5 steps x 2 sequences of 3 gates: 2 x 4 x (3 + 4) multiply-adds and 5 per gate element;
  // then a Relu over Y (5 x 1 x 2 x 4).
  EXPECT_EQ(*model.modules[1].complexity, 10.0 * (2 * 3 * 4 * (3 + 4) + 5 * 3 * 4) + 5 * 2 * 4);
  EXPECT_TRUE(model.warnings.empty()) << model.warnings.front();
}

/// A graph's value, named and typed as float of `dims` (none: no shape).
void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
               const std::string& name, const std::vector<std::int64_t>& dims,
               int type = onnx::TensorProto::FLOAT) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  for (auto d : dims)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

// A Loop whose trip count is computed (Shape -> Gather) and whose body multiplies its carried
// value by a weight and stacks a scanned output; an If whose branches differ in cost.
TEST(onnx_model, control_flow_has_shapes_and_flops) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto& g = *model.mutable_graph();
  add_value(g.mutable_input(), "x", {2, 4});
  add_value(g.mutable_input(), "steps", {3}); // its length is the trip count
  add_value(g.mutable_input(), "flag", {}, onnx::TensorProto::BOOL);
  auto* w = g.add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(4);
  auto add_node = [](onnx::GraphProto& graph, const std::string& op, const std::string& name,
                     std::vector<std::string> in,
                     std::vector<std::string> out) -> onnx::NodeProto& {
    auto* n = graph.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in)
      n->add_input(i);
    for (auto& o : out)
      n->add_output(o);
    return *n;
  };
  add_node(g, "Shape", "/count/Shape", {"steps"}, {"shape"});
  auto& zero = add_node(g, "Constant", "/count/Constant", {}, {"zero"});
  auto* value = zero.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_int64_data(0);
  add_node(g, "Gather", "/count/Gather", {"shape", "zero"}, {"trips"});
  auto& loop = add_node(g, "Loop", "/loop/Loop", {"trips", "", "x"}, {"final", "stacked"});
  auto* body_attr = loop.add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  auto& body = *body_attr->mutable_g();
  add_value(body.mutable_input(), "i", {}, onnx::TensorProto::INT64);
  add_value(body.mutable_input(), "cond", {}, onnx::TensorProto::BOOL);
  add_value(body.mutable_input(), "carried", {});
  add_node(body, "MatMul", "/loop/body/MatMul", {"carried", "w"}, {"next"});
  add_node(body, "Identity", "/loop/body/Identity", {"cond"}, {"cond_out"});
  add_node(body, "Relu", "/loop/body/Relu", {"next"}, {"scanned"});
  add_value(body.mutable_output(), "cond_out", {}, onnx::TensorProto::BOOL);
  add_value(body.mutable_output(), "next", {});
  add_value(body.mutable_output(), "scanned", {});
  auto& branch = add_node(g, "If", "/pick/If", {"flag"}, {"picked"});
  for (const auto* name : {"then_branch", "else_branch"}) {
    auto* a = branch.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto& b = *a->mutable_g();
    if (std::string{name} == "then_branch")
      add_node(b, "MatMul", "/pick/then/MatMul", {"final", "w"}, {"branch_out"});
    else
      add_node(b, "Relu", "/pick/else/Relu", {"final"}, {"branch_out"});
    add_value(b.mutable_output(), "branch_out", {});
  }
  // Scan over the 3 rows of `rows`: a running sum (the state) and each row squared.
  add_value(g.mutable_input(), "rows", {3, 4});
  add_value(g.mutable_input(), "start", {4});
  auto& scan = add_node(g, "Scan", "/scan/Scan", {"start", "rows"}, {"total", "squares"});
  auto* scanned = scan.add_attribute();
  scanned->set_name("num_scan_inputs");
  scanned->set_type(onnx::AttributeProto::INT);
  scanned->set_i(1);
  auto* scan_body = scan.add_attribute();
  scan_body->set_name("body");
  scan_body->set_type(onnx::AttributeProto::GRAPH);
  auto& sb = *scan_body->mutable_g();
  add_value(sb.mutable_input(), "state", {});
  add_value(sb.mutable_input(), "row", {});
  add_node(sb, "Add", "/scan/body/Add", {"state", "row"}, {"state_next"});
  add_node(sb, "Mul", "/scan/body/Mul", {"row", "row"}, {"square"});
  add_value(sb.mutable_output(), "state_next", {});
  add_value(sb.mutable_output(), "square", {});
  add_node(g, "Relu", "/after/Relu", {"squares"}, {"relu_squares"});
  add_value(g.mutable_output(), "picked", {});
  add_value(g.mutable_output(), "stacked", {});
  add_value(g.mutable_output(), "relu_squares", {});
  const auto m = model_from_onnx_bytes(model.SerializeAsString(), {.group_depth = 1});
  ASSERT_EQ(m.modules.size(), 5u) << "count, loop, pick, scan, after";
  EXPECT_EQ(*m.modules[3].complexity, 3 * (4 + 4)) << "3 rows of an Add and a Mul of 4";
  EXPECT_EQ(*m.modules[4].complexity, 3 * 4) << "the scan's output: 3 x 4";
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  // 3 trips of a 2x4 by 4x4 MatMul (64) and a Relu over 2x4 (8); the Gather reads one element.
  EXPECT_EQ(*m.modules[1].complexity, 3 * (2.0 * 2 * 4 * 4 + 2 * 4));
  EXPECT_EQ(*m.modules[0].complexity, 1);
  EXPECT_EQ(*m.modules[2].complexity, 2.0 * 2 * 4 * 4) << "the costlier branch";
  // The loop's outputs: the final carried value and the 3 stacked Relu outputs, 2x4 floats each.
  EXPECT_EQ(m.modules[1].size_bytes, (2 * 4 + 3 * 2 * 4) * 4 + 4 * 4 * 4)
    << "the weight, first read in the loop's body, belongs to the loop";
}

// A model's own numbers cannot make a negative size: a Reshape to (-5, 2) (no -1) is left to
// ONNX's inference, here estimated, and every module's size stays at or above zero.
TEST(onnx_model, a_reshape_to_a_negative_size_is_estimated_not_taken) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto& g = *model.mutable_graph();
  add_value(g.mutable_input(), "x", {5, 2});
  auto* target = g.add_initializer();
  target->set_name("target");
  target->set_data_type(onnx::TensorProto::INT64);
  target->add_dims(2);
  target->add_int64_data(-5);
  target->add_int64_data(2);
  for (const auto& [op, name, in, out] :
       std::vector<std::array<std::string, 4>>{{"Relu", "/a/Relu", "x", "h"},
                                               {"Reshape", "/b/Reshape", "h", "r"},
                                               {"Relu", "/c/Relu", "r", "y"}}) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->add_input(in);
    if (op == "Reshape")
      n->add_input("target");
    n->add_output(out);
  }
  const auto m = model_from_onnx_bytes(model.SerializeAsString(), {.group_depth = 1});
  ASSERT_EQ(m.modules.size(), 3u);
  for (const auto& module : m.modules) {
    EXPECT_GE(module.size_bytes, 0) << module.name;
    EXPECT_GE(*module.complexity, 0) << module.name;
  }
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings[0].find(": r"), std::string::npos) << m.warnings[0];
}

/// Writes a model of `x` (1 x rows) through "/a/MatMul" with a weight of rows x 16 floats, whose
/// data is streamed to the file: this process never holds it.
void write_large_model(const std::filesystem::path& path, std::int64_t rows) {
  const auto header = model_builder{}
                        .input("x", {1, rows})
                        .node("MatMul", "/a/MatMul", {"x", "w"}, "h")
                        .node("Relu", "/b/Relu", {"h"}, "y")
                        .output("y", {1, 16})
                        .bytes();
  onnx::TensorProto weight;
  weight.set_name("w");
  weight.set_data_type(onnx::TensorProto::FLOAT);
  weight.add_dims(rows);
  weight.add_dims(16);
  const auto data_bytes = static_cast<std::uint64_t>(rows) * 16 * 4;
  std::ofstream out{path, std::ios::binary};
  google::protobuf::io::OstreamOutputStream stream{&out};
  {
    google::protobuf::io::CodedOutputStream os{&stream};
    const auto tensor_head = weight.SerializeAsString();
    const auto tensor_bytes = tensor_head.size() + 1 +
                              google::protobuf::io::CodedOutputStream::VarintSize64(data_bytes) +
                              data_bytes;
    const auto graph_bytes =
      1 + google::protobuf::io::CodedOutputStream::VarintSize64(tensor_bytes) + tensor_bytes;
    os.WriteString(header); // ir_version, opset and the graph without the weight
    os.WriteTag((7 << 3) | 2); // ModelProto.graph again: parsers merge the two
    os.WriteVarint64(graph_bytes);
    os.WriteTag((5 << 3) | 2); // GraphProto.initializer
    os.WriteVarint64(tensor_bytes);
    os.WriteString(tensor_head);
    os.WriteTag((9 << 3) | 2); // TensorProto.raw_data
    os.WriteVarint64(data_bytes);
    const std::string zeros(1 << 20, '\0');
    for (std::uint64_t left = data_bytes; left > 0;
         left -= std::min<std::uint64_t>(left, zeros.size()))
      os.WriteRaw(zeros.data(), static_cast<int>(std::min<std::uint64_t>(left, zeros.size())));
  }
}

// A model's weights are skipped where they lie: troupe-assign places a model with a 256 MiB
// weight in a few MiB of memory (reading it whole took twice the file).
TEST(onnx_model, weights_are_never_loaded) {
  const auto folder =
    std::filesystem::temp_directory_path() / ("troupe-onnx-large-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto model = folder / "large.onnx";
  write_large_model(model, std::int64_t{1} << 22); // 4 Mi rows of 16 floats: 256 MiB
  ASSERT_GT(std::filesystem::file_size(model), 256u << 20);
  const std::string cli = TROUPE_ASSIGN_CLI;
  std::vector<std::string> args{cli, model.string(), "--group-depth", "1", "--devices", "local"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, cli.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  int status = 0;
  rusage usage{};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  std::filesystem::remove_all(folder);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_LT(usage.ru_maxrss, 64 * 1024) << "peak KiB of troupe-assign on a 256 MiB model";
}

} // namespace
} // namespace troupe
