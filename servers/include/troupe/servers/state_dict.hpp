// A model as parameter servers move it: named tensors (a state dict) and the version the server
// gave them.
#pragma once

#include "troupe/actors/tensor_serialization.hpp"

#include <xtensor/xarray.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

namespace troupe {

using state_dict = std::map<std::string, xt::xarray<float>>;

/// A model's parameters and the server version they are at (machin's model with its pp_version).
struct versioned_model {
  /// The parameters, by name.
  state_dict state;
  /// None until the model is first pushed or pulled (then the server's version); a pull loads
  /// the newest state into a model without one whatever its number.
  std::optional<std::int64_t> version;

  /// The version a push builds on (machin's pp_version, which starts at 0).
  std::int64_t base() const noexcept { return version.value_or(0); }
};

/// The version below every version: what a model without one is "newer than".
inline constexpr std::int64_t no_version = std::numeric_limits<std::int64_t>::min();

} // namespace troupe
