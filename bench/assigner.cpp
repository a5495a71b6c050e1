// troupe's assigner on the 20 reference instances (data/assigner/instances): feasibility, the
// ratio J / J* to the best known value, and wall time, beside the recorded ratios of greedy,
// greedy + local search, a 10-second iterated local search and machin's own optimiser on the
// same instances (data/assigner/baselines.json). Then the gradient phase's time per Adam
// iteration against machin's on PyTorch, measured on the same 9 problems
// (data/assigner/machin_instances, where machin's time was recorded; PyTorch is not on this
// machine to run it again). Then the scale tier: n = 128 and 256, m = 8 and 16, the four
// variants (data/assigner/scale/instances, from gen_instances.py --family branchy --seed 1),
// against the J that greedy.py's iterated local search reached in 60 s, recorded once
// (data/assigner/scale/ils60.json: 16 minutes to run again). Last, an ONNX model of 70 blocks
// (210 modules at group depth 3) end to end: written, read with model_from_onnx, placed onto
// 8 GPUs and a CPU; and a 24-layer encoder exported by PyTorch, when it is installed
// (assigner_onnx_export.hpp).
//
//   build/bench/assigner [data/assigner]
//
// The last lines are `name value unit`, read by tooling.
#include "assigner_onnx_export.hpp"

#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/instance_file.hpp>
#include <troupe/assigner/onnx_model.hpp>
#include <troupe/assigner/placement_loss.hpp>

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>
#include <xtensor/xadapt.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

json read(const std::string& path) {
  std::ifstream in{path};
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return json::parse(in);
}

std::string ratio_text(const json& entry, const char* key) {
  if (!entry.contains(key) || entry[key].is_null())
    return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", entry[key].get<double>());
  return text;
}

/// Median time of one optimize_placement call on machin's recorded problem, in ms.
double troupe_ms_per_iteration(const json& doc) {
  troupe::placement_tensors t;
  const auto sizes = doc["model_sizes_mb"].get<std::vector<double>>();
  const auto caps = doc["derived"]["device_size_capacity"].get<std::vector<double>>();
  const auto powers = doc["derived"]["device_complexity_capacity"].get<std::vector<double>>();
  const std::size_t n = sizes.size(), m = caps.size();
  t.model_size = xt::adapt(sizes, {n});
  t.model_complexity = t.model_size;
  t.size_capacity = xt::adapt(caps, {m});
  t.complexity_capacity = xt::adapt(powers, {m});
  t.model_connection = xt::zeros<double>({n, n});
  for (const auto& c : doc["model_connection"])
    t.model_connection(c[0].get<std::size_t>(), c[1].get<std::size_t>()) = c[2].get<double>();
  t.device_distance = xt::zeros<double>({m, m});
  for (std::size_t a = 0; a < m; ++a)
    for (std::size_t b = 0; b < m; ++b)
      t.device_distance(a, b) = doc["derived"]["device_distance"][a][b].get<double>();
  xt::xtensor<double, 2> logits = xt::zeros<double>({n, m});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      logits(i, j) = doc["initial_placement_logits"][i][j].get<double>();
  std::vector<double> runs;
  for (int r = 0; r < 7; ++r) {
    troupe::adam_state adam;
    auto z = logits;
    const auto start = clock_type::now();
    const troupe::prepared_placement prepared{t}; // what assign() does, once per run
    for (int k = 0; k < 500; ++k)
      troupe::optimize_placement(adam, z, prepared, troupe::loss_weights{});
    runs.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count() /
                   500);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

} // namespace

struct scale_figures {
  double max_wall_ms = 0;
  double mean_ratio_to_ils = 0; // J / J of the 60 s iterated local search; below 1 is better
};

scale_figures scale_tier(const std::string& data) {
  const auto ils = read(data + "/scale/ils60.json");
  std::printf("\nscale tier: troupe (default options, seed 0) against the 60 s iterated local "
              "search\n%-22s %5s %12s %12s %8s %9s\n",
              "instance", "fits", "J", "J ILS 60 s", "ratio", "ms");
  scale_figures out;
  for (auto& [name, record] : ils.items()) {
    const auto instance =
      troupe::load_placement_instance(data + "/scale/instances/" + name + ".json");
    const auto start = clock_type::now();
    const auto a =
      troupe::assign(instance.modules, instance.devices, instance.connections, instance.options);
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    const double ratio = a.cost / record["J"].get<double>();
    out.max_wall_ms = std::max(out.max_wall_ms, ms);
    out.mean_ratio_to_ils += ratio / static_cast<double>(ils.size());
    std::printf("%-22s %5s %12.5g %12.5g %8.3f %9.1f\n", name.c_str(), a.feasible ? "yes" : "NO",
                a.cost, record["J"].get<double>(), ratio, ms);
  }
  return out;
}

/// `blocks` blocks of attention projection, feed-forward and residual over x(batch, 128), named
/// as PyTorch exports them ("/layers.7/mlp/up").
std::string blocks_model(int blocks) {
  constexpr std::int64_t width = 128;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto& g = *model.mutable_graph();
  const auto value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("batch");
    t->mutable_shape()->add_dim()->set_dim_value(width);
  };
  // An operator; with rows > 0 it also reads a weight of rows x cols.
  const auto op = [&](const char* type, const std::string& name, std::vector<std::string> in,
                      const std::string& out, std::int64_t rows = 0, std::int64_t cols = 0) {
    if (rows > 0) {
      auto* w = g.add_initializer();
      w->set_name(out + ".w");
      w->set_data_type(onnx::TensorProto::FLOAT);
      w->add_dims(rows);
      w->add_dims(cols);
      w->set_raw_data(std::string(static_cast<std::size_t>(rows * cols) * sizeof(float), '\0'));
      in.push_back(w->name());
    }
    auto* n = g.add_node();
    n->set_op_type(type);
    n->set_name(name);
    for (const auto& i : in)
      n->add_input(i);
    n->add_output(out);
  };
  value(g.add_input(), "x");
  std::string last = "x";
  for (int i = 0; i < blocks; ++i) {
    const auto b = "/layers." + std::to_string(i), k = std::to_string(i);
    op("MatMul", b + "/attn/MatMul", {last}, "q" + k, width, width);
    op("MatMul", b + "/mlp/up", {"q" + k}, "u" + k, width, 4 * width);
    op("Relu", b + "/mlp/act", {"u" + k}, "r" + k);
    op("MatMul", b + "/mlp/down", {"r" + k}, "d" + k, 4 * width, width);
    op("Add", b + "/residual", {"d" + k, last}, "h" + k);
    last = "h" + k;
  }
  value(g.add_output(), last);
  return model.SerializeAsString();
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string{argv[1]} == "--onnx-child")
    return troupe::bench::onnx_child(argv[2]);
  const std::string data = argc > 1 ? argv[1] : std::string{TROUPE_ASSIGNER_DATA};
  const auto optimum = read(data + "/optimum.json");
  const auto baselines = read(data + "/baselines.json");

  std::printf("assigner: troupe (default options, seed 0) on %zu instances; ratio = J / J*\n",
              optimum.size());
  std::printf("%-22s %5s %8s %8s | %7s %9s %7s %13s %7s\n", "instance", "fits", "ratio", "ms",
              "greedy", "greedy+LS", "ILS 10s", "machin median", "feasible");
  double total = 0, worst = 0, worst_ms = 0, big_total = 0, n64_worst = 0;
  int infeasible = 0, big = 0;
  for (auto& [name, record] : optimum.items()) {
    const auto instance = troupe::load_placement_instance(data + "/instances/" + name + ".json");
    const auto start = clock_type::now();
    const auto a =
      troupe::assign(instance.modules, instance.devices, instance.connections, instance.options);
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    const double ratio = a.cost / record["J_best"].get<double>();
    infeasible += a.feasible ? 0 : 1;
    total += ratio;
    worst = std::max(worst, ratio);
    if (instance.modules.size() >= 16) { // issue 15's lines: the larger instances
      big_total += ratio;
      ++big;
    }
    if (instance.modules.size() == 64)
      n64_worst = std::max(n64_worst, ratio);
    worst_ms = std::max(worst_ms, ms);
    const auto& b = baselines[name];
    const auto machin_feasible = b["machin_port"]["feasible_rate"].get<double>();
    std::printf("%-22s %5s %8.3f %8.1f | %7s %9s %7s %13s %6.0f%%\n", name.c_str(),
                a.feasible ? "yes" : "NO", ratio, ms, ratio_text(b["greedy"], "ratio").c_str(),
                ratio_text(b["greedy_ls"], "ratio").c_str(), ratio_text(b["ils"], "ratio").c_str(),
                ratio_text(b["machin_port"], "ratio_median_feasible").c_str(),
                100 * machin_feasible);
  }
  const double mean = total / static_cast<double>(optimum.size());

  std::printf("\ngradient phase, ms per Adam iteration (machin: PyTorch 1.13, recorded here)\n");
  std::printf("%-16s %10s %10s %10s\n", "problem", "machin", "troupe", "speedup");
  double speedup_64_8 = 0;
  for (const char* name :
       {"assign_n4_m2", "assign_n16_m4", "assign_n64_m2", "assign_n64_m4", "assign_n64_m8"}) {
    const auto doc = read(data + "/machin_instances/" + name + ".json");
    const double machin =
      doc["machin"]["wall_s_direct_loop"].get<double>() * 1000 / doc["iterations"].get<double>();
    const double ours = troupe_ms_per_iteration(doc);
    std::printf("%-16s %10.3f %10.4f %9.0fx\n", name, machin, ours, machin / ours);
    if (std::string{name} == "assign_n64_m8")
      speedup_64_8 = machin / ours;
  }

  const auto scale = scale_tier(data);

  const auto file = std::filesystem::temp_directory_path() /
                    ("troupe_bench_blocks_" + std::to_string(::getpid()) + ".onnx");
  std::ofstream{file, std::ios::binary} << blocks_model(70);
  std::vector<troupe::device_spec> gpus;
  for (int j = 0; j < 8; ++j)
    gpus.push_back({"cuda:" + std::to_string(j), troupe::device_kind::gpu, 64.0 * (1 << 20)});
  gpus.push_back({"cpu", troupe::device_kind::cpu, 4096.0 * (1 << 20)});
  const auto onnx_start = clock_type::now();
  const auto model = troupe::model_from_onnx(file, {.group_depth = 3, .batch_size = 32});
  const double load_ms =
    std::chrono::duration<double, std::milli>(clock_type::now() - onnx_start).count();
  const auto placed = troupe::assign(model.modules, gpus, model.connections);
  const double onnx_ms =
    std::chrono::duration<double, std::milli>(clock_type::now() - onnx_start).count();
  std::filesystem::remove(file);
  std::printf("\nONNX model, %zu modules, %zu connections: read in %.1f ms, placed %s in %.1f ms "
              "in all\n",
              model.modules.size(), model.connections.size(), load_ms,
              placed.feasible ? "(fits)" : "(DOES NOT FIT)", onnx_ms);

  std::printf("assigner_mean_ratio %.4f ratio\n", mean);
  std::printf("assigner_big_mean_ratio %.4f ratio\n", big_total / std::max(big, 1));
  std::printf("assigner_n64_max_ratio %.4f ratio\n", n64_worst);
  std::printf("assigner_max_ratio %.4f ratio\n", worst);
  std::printf("assigner_infeasible %d count\n", infeasible);
  std::printf("assigner_max_wall_ms %.1f ms\n", worst_ms);
  std::printf("assigner_iter_speedup_vs_machin %.1f x\n", speedup_64_8);
  std::printf("assigner_scale_max_wall_ms %.1f ms\n", scale.max_wall_ms);
  std::printf("assigner_scale_ratio_to_ils60 %.4f ratio\n", scale.mean_ratio_to_ils);
  std::printf("assigner_onnx_total_ms %.1f ms\n", onnx_ms);
  troupe::bench::onnx_export_figures(TROUPE_SOURCE_DIR,
                                     std::filesystem::read_symlink("/proc/self/exe").string());
}
