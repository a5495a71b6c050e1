// Build a small transformer-like model as an ONNX file (12 blocks: attention projection,
// feed-forward up and down, a skip connection each), read it back with troupe::model_from_onnx
// grouped by block, and place it onto 4 GPUs and a CPU.
//
//   ./build/examples/assign_onnx_model
#include <troupe/assigner/onnx_model.hpp>
#include <troupe/troupe.hpp>

#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

constexpr std::int64_t width = 256, hidden = 1024, blocks = 12;

void add_value(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch"); // the batch size is chosen when read
  t->mutable_shape()->add_dim()->set_dim_value(width);
}

void add_weight(onnx::GraphProto& g, const std::string& name, std::int64_t rows,
                std::int64_t cols) {
  auto* w = g.add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(rows);
  w->add_dims(cols);
  w->set_raw_data(std::string(static_cast<std::size_t>(rows * cols) * sizeof(float), '\0'));
}

void add_node(onnx::GraphProto& g, const std::string& op, const std::string& name,
              std::initializer_list<std::string> inputs, const std::string& output) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs)
    n->add_input(i);
  n->add_output(output);
}

/// Blocks named as PyTorch exports them: "/layers.3/attn/MatMul".
std::string transformer_onnx() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto& g = *model.mutable_graph();
  add_value(g.add_input(), "x");
  std::string last = "x";
  for (int i = 0; i < blocks; ++i) {
    const auto b = "/layers." + std::to_string(i), k = std::to_string(i);
    add_weight(g, "wq" + k, width, width);
    add_weight(g, "wup" + k, width, hidden);
    add_weight(g, "wdown" + k, hidden, width);
    add_node(g, "MatMul", b + "/attn/MatMul", {last, "wq" + k}, "q" + k);
    add_node(g, "MatMul", b + "/mlp/up", {"q" + k, "wup" + k}, "u" + k);
    add_node(g, "Relu", b + "/mlp/act", {"u" + k}, "a" + k);
    add_node(g, "MatMul", b + "/mlp/down", {"a" + k, "wdown" + k}, "d" + k);
    add_node(g, "Add", b + "/residual", {"d" + k, last}, "h" + k);
    last = "h" + k;
  }
  add_value(g.add_output(), last);
  return model.SerializeAsString();
}

} // namespace

int main() {
  constexpr double mib = 1 << 20;
  const auto file = std::filesystem::temp_directory_path() /
                    ("troupe_example_model_" + std::to_string(::getpid()) + ".onnx");
  std::ofstream{file, std::ios::binary} << transformer_onnx();

  const auto model = troupe::model_from_onnx(file, {.group_depth = 2, .batch_size = 64});
  std::filesystem::remove(file);
  std::printf("%zu modules, %zu connections\n", model.modules.size(), model.connections.size());

  std::vector<troupe::device_spec> devices;
  for (int g = 0; g < 4; ++g)
    devices.push_back({"cuda:" + std::to_string(g), troupe::device_kind::gpu, 40 * mib});
  devices.push_back({"cpu", troupe::device_kind::cpu, 1024 * mib});

  troupe::assigner_options options; // machin's: sizes doubled, half of each device usable
  options.seed = 1;
  const auto placed = troupe::assign(model.modules, devices, model.connections, options);
  for (std::size_t i = 0; i < model.modules.size(); ++i)
    std::printf("%-10s %6.1f MiB %8.0f MFLOP  -> %s\n", model.modules[i].name.c_str(),
                model.modules[i].size_bytes / mib, *model.modules[i].complexity / 1e6,
                placed.device_name[i].c_str());
  for (std::size_t j = 0; j < devices.size(); ++j)
    std::printf("%-7s %6.1f of %6.1f MiB\n", devices[j].name.c_str(),
                placed.device_load_bytes[j] / mib, placed.device_capacity_bytes[j] / mib);
  std::printf("%s, cost %.4g\n", placed.feasible ? "fits" : "DOES NOT FIT", placed.cost);
  return placed.feasible ? 0 : 1;
}
