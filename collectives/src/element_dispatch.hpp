// Calls a generic lambda with the C++ type of a tensor's elements, so that
// engines that need it (gloo's reduce functions, MPI's datatypes) are written
// once for every type.
#pragma once

#include "troupe/collectives/detail/tensor_view.hpp"

#include <cstdint>
#include <utility>

namespace troupe::detail {

template <class F>
decltype(auto) with_element_type(element_type type, F&& f) {
  switch (type) {
  case element_type::boolean: return f.template operator()<bool>();
  case element_type::int8: return f.template operator()<std::int8_t>();
  case element_type::uint8: return f.template operator()<std::uint8_t>();
  case element_type::int16: return f.template operator()<std::int16_t>();
  case element_type::uint16: return f.template operator()<std::uint16_t>();
  case element_type::int32: return f.template operator()<std::int32_t>();
  case element_type::uint32: return f.template operator()<std::uint32_t>();
  case element_type::int64: return f.template operator()<std::int64_t>();
  case element_type::uint64: return f.template operator()<std::uint64_t>();
  case element_type::float32: return f.template operator()<float>();
  case element_type::float64: return f.template operator()<double>();
  case element_type::float80: return f.template operator()<long double>();
  }
  return f.template operator()<std::uint8_t>(); // not reached: every type is listed
}

} // namespace troupe::detail
