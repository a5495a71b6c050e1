#include "troupe/actors/task.hpp"

#include "troupe/actors/error.hpp"

namespace troupe::detail {

task_registry& task_registry::instance() {
  // Filled during static initialisation, read-only after, and never destroyed: a call a world
  // let go past its stop_grace may still be running one of these tasks while the program's
  // statics are destroyed at exit.
  static auto* registry = new task_registry;
  return *registry;
}

void task_registry::add(const std::string& name, chunk_invoker invoker) {
  auto [it, inserted] = tasks_.emplace(name, std::move(invoker));
  if (!inserted)
    it->second = [name](std::span<const std::byte>) -> std::vector<std::byte> {
      throw serialization_error("task name '" + name + "' is registered twice in this program");
    };
}

void task_registry::add_context_task(const std::string& name, context_invoker invoker) {
  auto [it, inserted] = context_tasks_.emplace(name, std::move(invoker));
  if (!inserted)
    it->second = [name](void*, std::span<const std::byte>) -> std::vector<std::byte> {
      throw serialization_error("task name '" + name + "' is registered twice in this program");
    };
}

void task_registry::add_call_preparer(const std::string& name, call_preparer preparer) {
  auto [it, inserted] = call_preparers_.emplace(name, std::move(preparer));
  if (!inserted)
    it->second = [name](std::span<const std::byte>) -> prepared_call {
      throw serialization_error("actor method '" + name + "' is registered twice in this program");
    };
}

void task_registry::add_outcome_transcoder(const std::string& name, outcome_transcoder transcoder) {
  auto [it, inserted] = outcome_transcoders_.emplace(name, std::move(transcoder));
  if (!inserted)
    it->second = [name](std::span<const std::byte>) -> std::vector<std::byte> {
      throw serialization_error("actor method '" + name + "' is registered twice in this program");
    };
}

void task_registry::add_context_factory(const std::string& name, context_maker maker) {
  auto [it, inserted] = context_factories_.emplace(name, std::move(maker));
  if (!inserted)
    it->second = [name](std::size_t) -> std::shared_ptr<void> {
      throw serialization_error("context factory '" + name + "' is registered twice");
    };
}

void task_registry::add_context_type(const std::string& type, context_decoder decoder) {
  context_types_.emplace(type, std::move(decoder)); // the same type may register from many TUs
}

namespace {

template <class Map>
const typename Map::mapped_type* find_in(const Map& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

} // namespace

const chunk_invoker* task_registry::find(const std::string& name) const {
  return find_in(tasks_, name);
}

const context_invoker* task_registry::find_context_task(const std::string& name) const {
  return find_in(context_tasks_, name);
}

const call_preparer* task_registry::find_call_preparer(const std::string& name) const {
  return find_in(call_preparers_, name);
}

const outcome_transcoder* task_registry::find_outcome_transcoder(const std::string& name) const {
  return find_in(outcome_transcoders_, name);
}

const context_maker* task_registry::find_context_factory(const std::string& name) const {
  return find_in(context_factories_, name);
}

const context_decoder* task_registry::find_context_type(const std::string& type) const {
  return find_in(context_types_, type);
}

} // namespace troupe::detail
