#include "process/chunk_runner.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/pools/detail/worker_scope.hpp"

#include <tuple>
#include <vector>

namespace troupe::detail {

chunk_runner::chunk_runner(std::size_t index, std::string label, const std::string& initializer)
  : index_(index), label_(std::move(label)) {
  const worker_scope identity{index_};
  // An initializer that throws makes every chunk fail with its exception, as in thread pools.
  if (initializer.empty())
    return;
  const auto* init = task_registry::instance().find(initializer);
  try {
    if (init == nullptr)
      throw serialization_error("no task named '" + initializer + "' to initialize workers");
    const auto outcomes =
      deserialize<chunk_outcomes<void>>((*init)(encode_calls(std::vector<std::tuple<>>(1))));
    if (!outcomes.second.empty())
      init_failure_ = outcomes.second[0].why;
  } catch (...) {
    init_failure_ = current_failure();
  }
}

void chunk_runner::install(const context_setup& setup) {
  // A context (or an actor placed in a slot) made here may want its slot: to open its device.
  const worker_scope identity{index_};
  try {
    if (!setup.factory.empty()) {
      const auto* make = task_registry::instance().find_context_factory(setup.factory);
      if (make == nullptr)
        throw serialization_error("no context factory named '" + setup.factory + "'");
      context_ = (*make)(setup.index);
    } else {
      const auto* decode = task_registry::instance().find_context_type(setup.type);
      if (decode == nullptr)
        throw serialization_error("no context type " + setup.type + " in this program");
      context_ = (*decode)(setup.value);
    }
  } catch (...) {
    context_failure_ = current_failure();
  }
}

chunk_reply chunk_runner::run(const chunk_request& request) {
  const worker_scope identity{index_};
  chunk_reply reply;
  reply.id = request.id;
  const auto failed = [&](const failure& why) {
    reply.why = why;
    return reply;
  };
  if (init_failure_.failed())
    return failed(init_failure_);
  try {
    if (request.with_context) {
      if (context_failure_.failed())
        return failed(context_failure_);
      if (!context_)
        throw serialization_error(label_ + " has no context for context task '" + request.task +
                                  "'");
      const auto* task = task_registry::instance().find_context_task(request.task);
      if (task == nullptr)
        throw serialization_error("no context task named '" + request.task + "' in " + label_);
      reply.outcomes = (*task)(context_.get(), request.calls);
    } else {
      const auto* task = task_registry::instance().find(request.task);
      if (task == nullptr)
        throw serialization_error("no task named '" + request.task + "' in " + label_ +
                                  " (is it registered with TROUPE_TASK, in the same program "
                                  "version?)");
      reply.outcomes = (*task)(request.calls);
    }
  } catch (...) {
    // The request's bytes or its task's name are at fault, whatever was thrown: no type.
    reply.why = {std::string{}, current_failure().message};
  }
  return reply;
}

} // namespace troupe::detail
