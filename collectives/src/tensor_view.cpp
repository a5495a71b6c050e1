#include "troupe/collectives/detail/tensor_view.hpp"

#include "troupe/actors/error.hpp"

#include <array>

namespace troupe::detail {

namespace {

struct element_facts {
  const char* name;
  std::size_t size;
};

constexpr std::array<element_facts, 12> facts{{{"bool", sizeof(bool)},
                                               {"int8", 1},
                                               {"uint8", 1},
                                               {"int16", 2},
                                               {"uint16", 2},
                                               {"int32", 4},
                                               {"uint32", 4},
                                               {"int64", 8},
                                               {"uint64", 8},
                                               {"float32", 4},
                                               {"float64", 8},
                                               {"float80", sizeof(long double)}}};

} // namespace

const char* element_name(element_type type) noexcept {
  return facts[static_cast<std::size_t>(type)].name;
}

std::size_t element_size(element_type type) noexcept {
  return facts[static_cast<std::size_t>(type)].size;
}

std::string tensor_view::describe() const {
  std::string text = element_name(type);
  text += '[';
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i == 0 ? "" : ",") + std::to_string(shape[i]);
  return text + ']';
}

void require_row_major(bool row_major, const char* operation) {
  if (!row_major)
    throw invalid_argument(std::string{operation} +
                           ": tensors must be row-major (a column-major one would travel in "
                           "another order than its peers read it)");
}

} // namespace troupe::detail
