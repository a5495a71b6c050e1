// How a pool tells the worker process it starts who it is: one flag,
// `--troupe-worker=<queues>,<heartbeat segment>,<parent pid>,<index>,<initializer>`, written and
// read here, side by side.
#pragma once

#include <sys/types.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace troupe::detail {

struct worker_spec {
  std::string queues; // the stem of its request (-req) and reply (-rep) queues' names
  std::string heartbeat; // the segment it beats in
  pid_t parent = 0; // the pool's process: the worker dies with it
  std::size_t index = 0;
  std::string initializer; // a registered task's name, or empty

  /// The value of --troupe-worker (the names hold no commas: see validate_queue_name).
  std::string to_flag_value() const {
    return queues + "," + heartbeat + "," + std::to_string(parent) + "," + std::to_string(index) +
           "," + initializer;
  }

  static std::optional<worker_spec> parse(const std::string& value) {
    std::vector<std::string> fields;
    std::stringstream in{value};
    for (std::string field; std::getline(in, field, ',');)
      fields.push_back(field);
    if (fields.size() < 4 || fields.size() > 5)
      return std::nullopt;
    fields.resize(5);
    worker_spec spec{fields[0], fields[1], 0, 0, fields[4]};
    try {
      spec.parent = static_cast<pid_t>(std::stol(fields[2]));
      spec.index = std::stoul(fields[3]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    return spec;
  }
};

} // namespace troupe::detail
