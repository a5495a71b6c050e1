#include "troupe/actors/detail/readable.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <string>

namespace troupe::detail {

namespace {

/// `value` (at least 1, or 0) with three significant digits at most, no exponent, no trailing
/// zeros: 10 -> "10", 1.5 -> "1.5", 123.4 -> "123", 3600 -> "3600".
std::string digits(double value) {
  std::array<char, 32> text{};
  if (value >= 100 || value == 0)
    std::snprintf(text.data(), text.size(), "%.0f", value);
  else
    std::snprintf(text.data(), text.size(), "%.3g", value);
  return text.data();
}

} // namespace

std::string readable(std::chrono::duration<double, std::nano> duration) {
  const double ns = std::abs(duration.count());
  const char* sign = duration.count() < 0 ? "-" : "";
  if (ns >= 1e9)
    return sign + digits(ns / 1e9) + " s";
  if (ns >= 1e6)
    return sign + digits(ns / 1e6) + " ms";
  if (ns >= 1e3)
    return sign + digits(ns / 1e3) + " us";
  return sign + digits(ns) + " ns";
}

std::string readable_bytes(std::uint64_t bytes) {
  constexpr std::array units{"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  auto value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < units.size()) {
    value /= 1024;
    ++unit;
  }
  auto text = digits(value) + " " + units[unit];
  // Rounded, a size could read as the limit it exceeds ("4 KiB" for 4,097 bytes): the exact
  // count follows whenever the short form is not exact.
  if (std::stod(digits(value)) * std::pow(1024.0, static_cast<double>(unit + 1)) !=
      static_cast<double>(bytes))
    text += " (" + std::to_string(bytes) + " bytes)";
  return text;
}

} // namespace troupe::detail
