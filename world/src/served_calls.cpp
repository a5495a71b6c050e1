#include "served_calls.hpp"

#include "actor_wire.hpp"

#include "troupe/actors/serialization.hpp"

#include <thread>
#include <type_traits>

namespace troupe::detail {

served served_calls::run(const std::string& group, incoming_call& request,
                         const late_answer& later) {
  try {
    switch (request.kind) {
    case call_kind::actor_spawn:
    case call_kind::actor_resolve:
    case call_kind::actor_call:
    case call_kind::actor_stop:
    case call_kind::actor_count: return run_actor_call(group, request, later);
    case call_kind::task:
    case call_kind::service:
    case call_kind::on_value: return run_invoker(group, request);
    case call_kind::keep: {
      if (!held.has_room_for(request.from))
        return served::refused(failure::of<state_error>(
          label_(request.from) + " keeps " + std::to_string(held_values::max_kept_per_member) +
          " outcomes at " + label_(rank_) + " already: release some"));
      auto outcome = run_invoker(group, request);
      if (outcome.why.failed())
        return outcome;
      return served::ran(serialize(held.keep(request.from, std::move(outcome.payload))));
    }
    case call_kind::fetch: {
      if (auto value = held.paired(group, request.key)) {
        if (value->type != request.type)
          return served::refused(failure::of<invalid_argument>(
            "'" + request.key + "' holds a " + value->type + ", not a " + request.type));
        std::lock_guard one_at_a_time{*value->guard};
        return served::ran(value->encode());
      }
      if (auto kept = held.kept(request.key))
        return served::ran(std::move(*kept));
      return served::refused(failure::of<key_error>("'" + request.key + "' not found on group '" +
                                                    group + "' at " + label_(rank_)));
    }
    case call_kind::release: held.release(request.key); return {};
    case call_kind::holds_paired:
    case call_kind::holds_service:
      if (held.holds(table_asked(request.kind), group, request.key))
        return served::ran({});
      return served::refused(failure::of<key_error>("'" + request.key + "' not held on group '" +
                                                    group + "' at " + label_(rank_)));
    }
    return served::refused(failure::of<invalid_argument>("unknown call kind"));
  } catch (const serialization_error& e) {
    return served::refused(failure::of<serialization_error>(e.what()));
  } catch (const std::exception& e) {
    return served::refused(failure::of<state_error>(e.what()));
  }
}

/// Runs a task, a service, or a task on a paired value; its exceptions are in the outcome.
served served_calls::run_invoker(const std::string& group, const incoming_call& request) {
  const auto& registry = task_registry::instance();
  if (request.kind == call_kind::on_value) {
    auto value = held.paired(group, request.key);
    if (!value)
      return served::refused(
        failure::of<key_error>("'" + request.key + "' not found on group '" + group + "'"));
    if (value->type != request.type)
      return served::refused(failure::of<invalid_argument>(
        "'" + request.key + "' holds a " + value->type + ", not a " + request.type));
    const auto* invoker = registry.find_context_task(request.name);
    if (invoker == nullptr)
      return served::refused(failure::of<serialization_error>(
        "no task '" + request.name + "' taking a value first is registered at " + label_(rank_)));
    std::lock_guard one_at_a_time{*value->guard};
    return served::ran((*invoker)(value->object.get(), from_wire(request.payload)));
  }
  if (request.kind == call_kind::service || !request.key.empty()) {
    const auto service = held.service(group, request.key);
    if (!service)
      return served::refused(failure::of<key_error>(
        "service '" + request.key + "' not found on group '" + group + "' at " + label_(rank_)));
    return served::ran((*service)(from_wire(request.payload)));
  }
  const auto* task = registry.find(request.name);
  if (task == nullptr)
    return served::refused(failure::of<serialization_error>("no task '" + request.name +
                                                            "' is registered at " + label_(rank_) +
                                                            " (is it the same program?)"));
  return served::ran((*task)(from_wire(request.payload)));
}

namespace {

/// The outcome of a call that returns `value`, as a task's invoker encodes one.
template <class V>
bytes outcome_of(V value) {
  chunk_outcomes<V> outcome;
  outcome.first.push_back(std::move(value));
  return serialize(outcome);
}

/// Runs `make` and answers with what it returns or throws (a constructor's exception goes back as
/// itself), both encoded as an outcome of the type it returns, which is what the asker decodes:
/// a failure encoded for another type would reach the asker as a serialization_error.
template <class Make>
served answer_of(Make&& make) {
  using value = std::invoke_result_t<Make&>;
  try {
    return served::ran(outcome_of(make()));
  } catch (...) {
    return served::ran(failed_as<value>(std::current_exception()));
  }
}

} // namespace

served served_calls::run_actor_call(const std::string& group, incoming_call& request,
                                    const late_answer& later) {
  switch (request.kind) {
  case call_kind::actor_spawn: {
    const auto spawn = deserialize<actor_spawn_request>(from_wire(request.payload));
    return answer_of([&] {
      const auto incarnation = actors.spawn(group, request.key, request.name, spawn);
      try {
        claim_actor_name(group, request.key, spawn.replaces);
      } catch (...) {
        actors.stop(group, request.key, incarnation);
        throw;
      }
      return incarnation;
    });
  }
  case call_kind::actor_resolve:
    return answer_of([&] { return actors.resolve(group, request.key, request.name); });
  case call_kind::actor_call:
    actors.call(group, request.key, request.name, request.from,
                deserialize<actor_call_envelope>(from_wire(request.payload)),
                [later](reply_encoder encode) { later(served::encoded_later(std::move(encode))); });
    return served::later();
  case call_kind::actor_stop:
    actors.stop(group, request.key, deserialize<std::uint64_t>(from_wire(request.payload)));
    try {
      withdraw_actor_name(group, request.key);
    } catch (const key_error&) {
      // withdrawn already
    }
    return {};
  default: return served::ran(serialize(std::uint64_t{actors.count()}));
  }
}

void served_calls::claim_actor_name(const std::string& group, const std::string& name,
                                    int replaces) {
  const auto until = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    try {
      ask_rank0_(key_operation::add, group, actor_name_key(name));
      return;
    } catch (const key_error&) {
      // A restart's name is held for the lost member until rank 0 sees that loss too.
      if (replaces < 0 || std::chrono::steady_clock::now() > until)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
}

void served_calls::withdraw_actor_name(const std::string& group, const std::string& name) {
  ask_rank0_(key_operation::remove, group, actor_name_key(name));
}

} // namespace troupe::detail
