#include "member_callbacks.hpp"

#include <exception>
#include <iostream>

namespace troupe::detail {

void member_callbacks::add(callback added) {
  std::lock_guard guard{mutex_};
  callbacks_.push_back(std::move(added));
}

void member_callbacks::run(const std::string& name, int rank) const noexcept {
  std::vector<callback> callbacks;
  {
    std::lock_guard guard{mutex_}; // copied: a callback may add another
    callbacks = callbacks_;
  }
  for (const auto& each : callbacks) {
    try {
      each(name, rank);
    } catch (const std::exception& e) {
      std::cerr << "troupe: an " << kind_ << " callback threw: " << e.what() << "\n";
    } catch (...) {
      std::cerr << "troupe: an " << kind_ << " callback threw\n";
    }
  }
}

} // namespace troupe::detail
