#include "troupe/actors/async_result.hpp"

#include <iostream>

namespace troupe::detail {

void report_callback_failure(const char* which) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "troupe: an " << which << " callback threw: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "troupe: an " << which << " callback threw a non-standard exception\n";
  }
}

} // namespace troupe::detail
