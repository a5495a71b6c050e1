// What a change of membership runs: the callbacks users gave (world::on_member_lost,
// world::on_member_joined), in turn; one that throws is reported and the others still run.
#pragma once

#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace troupe::detail {

using member_callback = std::function<void(const std::string& name, int rank)>;

/// Runs each of `callbacks` for member `name` of `rank`; `kind` ("on_member_lost") names them
/// in what a throwing one reports on stderr.
inline void run_member_callbacks(const std::vector<member_callback>& callbacks,
                                 const std::string& name, int rank, const char* kind) noexcept {
  for (const auto& callback : callbacks) {
    try {
      callback(name, rank);
    } catch (const std::exception& e) {
      std::cerr << "troupe: an " << kind << " callback threw: " << e.what() << "\n";
    } catch (...) {
      std::cerr << "troupe: an " << kind << " callback threw\n";
    }
  }
}

} // namespace troupe::detail
