// What a worker does with requests, wherever they come from (its queues, or a socket): runs the
// initializer once, keeps the context, and runs chunks with the registered tasks.
#pragma once

#include "process/worker_wire.hpp"

#include <memory>
#include <string>
#include <utility>

namespace troupe::detail {

class chunk_runner {
public:
  /// `index`: the worker's slot, which its tasks see through this_worker().
  chunk_runner(std::size_t index, std::string label, const std::string& initializer);
  void install(const context_setup& setup);
  /// A node learns its slot from its first batch.
  void set_index(std::size_t index) noexcept { index_ = index; }
  chunk_reply run(const chunk_request& request);

private:
  std::size_t index_;
  std::string label_;
  failure init_failure_, context_failure_;
  std::shared_ptr<void> context_;
};

} // namespace troupe::detail
