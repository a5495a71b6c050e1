// bench/assigner's figures on a real export: a 24-layer nn.TransformerEncoder of width 768 (680
// MB) that tools/export_onnx_models.py exports with PyTorch, when Debian's python3-torch is
// installed (skipped with a message otherwise). troupe's read and placement of it (the bench
// run again as `--onnx-child MODEL`), and its peer ONNX's own `onnx.load` (Python, weights
// loaded), each in a process of its own that reports its own peak memory; in turns, medians of
// 3. The time is the read and placement (or the load) inside the process.
#pragma once

#include "median.hpp"

#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/devices.hpp>
#include <troupe/assigner/onnx_model.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace troupe::bench {

struct child_run {
  double ms = 0;
  double peak_bytes = 0;
  bool ok = false;
};

/// This process's peak resident memory (its own address space's: a process spawned from a large
/// one inherits the larger figure in getrusage's ru_maxrss).
inline double peak_resident_bytes() {
  std::ifstream status{"/proc/self/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stod(line.substr(6)) * 1024;
  return 0;
}

/// Runs `command`, which prints "MS PEAK_BYTES" as its last line.
inline child_run run_child(const std::string& command) {
  child_run run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr)
    return run;
  char line[256];
  std::string last;
  while (std::fgets(line, sizeof line, pipe) != nullptr)
    last = line;
  run.ok =
    ::pclose(pipe) == 0 && std::sscanf(last.c_str(), "%lf %lf", &run.ms, &run.peak_bytes) == 2;
  return run;
}

/// The child's side of troupe's turn: reads and places `model`, prints "MS PEAK_BYTES".
inline int onnx_child(const std::string& model) {
  const auto start = std::chrono::steady_clock::now();
  const auto read = troupe::model_from_onnx(model, {.group_depth = 3, .dims = {{"seq", 128}}});
  const auto placed = troupe::assign(read.modules, troupe::local_devices(), read.connections);
  const double ms =
    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.3f %.0f\n", ms, peak_resident_bytes());
  return placed.device_name.empty() ? 1 : 0;
}

/// Prints the export's lines, or why there are none.
inline void onnx_export_figures(const std::string& source_dir, const std::string& self) {
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import torch, onnx' 2>/dev/null").c_str()) != 0) {
    std::printf("\nONNX export: skipped (no python3-torch / python3-onnx: apt install them to "
                "export the 24-layer encoder)\n");
    return;
  }
  const auto folder =
    std::filesystem::temp_directory_path() / ("troupe_bench_onnx_" + std::to_string(::getpid()));
  const auto model = (folder / "encoder_24.onnx").string();
  const auto export_command = python + " " + source_dir + "/tools/export_onnx_models.py " +
                              folder.string() + " --full-encoder >/dev/null 2>&1";
  if (std::system(export_command.c_str()) != 0) {
    std::printf("\nONNX export: the export failed\n");
    std::filesystem::remove_all(folder);
    return;
  }
  const double file_bytes = static_cast<double>(std::filesystem::file_size(model));
  std::vector<double> ours_ms, ours_peak, peer_ms, peer_peak;
  for (int round = 0; round < 3; ++round) {
    const auto ours = run_child(self + " --onnx-child " + model);
    const auto peer =
      run_child(python +
                " -c 'import onnx, sys, time; t = time.time(); onnx.load(sys.argv[1]); "
                "ms = 1000 * (time.time() - t); "
                "peak = [l for l in open(\"/proc/self/status\") if l.startswith(\"VmHWM\")][0]; "
                "print(ms, 1024 * int(peak.split()[1]))' " +
                model);
    if (!ours.ok || !peer.ok) {
      std::printf("\nONNX export: a turn failed\n");
      std::filesystem::remove_all(folder);
      return;
    }
    ours_ms.push_back(ours.ms);
    ours_peak.push_back(ours.peak_bytes);
    peer_ms.push_back(peer.ms);
    peer_peak.push_back(peer.peak_bytes);
  }
  std::filesystem::remove_all(folder);
  std::printf("\nONNX export: 24-layer encoder, width 768, %.0f MiB; troupe reads and "
              "places it, onnx.load (Python) only loads it\n",
              file_bytes / (1 << 20));
  std::printf("assigner_onnx_transformer_ms %.1f ms\n", median(ours_ms));
  std::printf("assigner_onnx_peak_rss_ratio_to_file %.3f x\n", median(ours_peak) / file_bytes);
  std::printf("onnx_load_ms %.1f ms\n", median(peer_ms));
  std::printf("onnx_load_peak_rss_ratio_to_file %.3f x\n", median(peer_peak) / file_bytes);
}

} // namespace troupe::bench
