#include "troupe/actors/task.hpp"

#include <cxxabi.h>

#include <exception>
#include <typeinfo>

namespace troupe::detail {

task_registry& task_registry::instance() {
  static task_registry registry; // filled during static initialisation, read-only after
  return registry;
}

void task_registry::add(const std::string& name, chunk_invoker invoker) {
  auto [it, inserted] = tasks_.emplace(name, std::move(invoker));
  if (!inserted)
    it->second = [name](std::span<const std::byte>) -> std::vector<std::byte> {
      throw serialization_error("task name '" + name + "' is registered twice in this program");
    };
}

const chunk_invoker* task_registry::find(const std::string& name) const {
  auto it = tasks_.find(name);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::pair<std::string, std::string> describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return {demangle(typeid(e).name()), e.what()};
  } catch (...) {
    const auto* type = abi::__cxa_current_exception_type();
    return {type != nullptr ? demangle(type->name()) : "unknown", ""};
  }
}

} // namespace troupe::detail
