#include "troupe/actors/async_result.hpp"

#include <iostream>

namespace troupe::detail {

void report_escaped_exception(const std::string& source) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "troupe: " << source << " threw: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "troupe: " << source << " threw a non-standard exception\n";
  }
}

} // namespace troupe::detail
