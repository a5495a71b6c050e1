// A model as parameter servers move it: named tensors (a state dict) and the version the server
// gave them.
#pragma once

#include "troupe/actors/tensor_serialization.hpp"

#include <xtensor/xarray.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace troupe {

using state_dict = std::map<std::string, xt::xarray<float>>;

struct versioned_model {
  state_dict state;
  /// 0 until the model is first pushed or pulled.
  std::int64_t version = 0;
};

} // namespace troupe
