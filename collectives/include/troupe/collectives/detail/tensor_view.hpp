// What a collective group sees of a tensor: its bytes, its element type and its
// shape. Any contiguous container of arithmetic elements works: std::vector<T>
// (one dimension), xt::xarray<T> and xt::xtensor<T, N> (row-major), without
// this header including xtensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace troupe::detail {

enum class element_type : std::uint8_t {
  boolean,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64,
  float80
};

/// "float32", "int64", ...
const char* element_name(element_type type) noexcept;
std::size_t element_size(element_type type) noexcept;

template <class T>
constexpr element_type element_type_of() {
  static_assert(std::is_arithmetic_v<T>, "collective groups move tensors of arithmetic elements");
  if constexpr (std::is_same_v<T, bool>)
    return element_type::boolean;
  else if constexpr (std::is_floating_point_v<T>) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || std::is_same_v<T, long double>);
    if constexpr (sizeof(T) == 4)
      return element_type::float32;
    else if constexpr (sizeof(T) == 8)
      return element_type::float64;
    else
      return element_type::float80;
  } else {
    constexpr bool is_signed = std::is_signed_v<T>;
    if constexpr (sizeof(T) == 1)
      return is_signed ? element_type::int8 : element_type::uint8;
    else if constexpr (sizeof(T) == 2)
      return is_signed ? element_type::int16 : element_type::uint16;
    else if constexpr (sizeof(T) == 4)
      return is_signed ? element_type::int32 : element_type::uint32;
    else
      return is_signed ? element_type::int64 : element_type::uint64;
  }
}

struct tensor_view {
  void* data = nullptr;
  std::size_t count = 0;
  element_type type = element_type::uint8;
  std::vector<std::size_t> shape;

  std::size_t bytes() const noexcept { return count * element_size(type); }
  /// "float32[2,3]"
  std::string describe() const;
};

template <class C>
concept vector_tensor = requires(C& c) {
  typename C::value_type;
  requires std::is_same_v<C, std::vector<typename C::value_type, typename C::allocator_type>>;
};

template <class C>
concept shaped_tensor = !vector_tensor<C> && requires(C & c) {
  typename C::value_type;
  {c.data()};
  { c.size() } -> std::convertible_to<std::size_t>;
  {c.shape()};
  {c.layout()};
};

/// A std::vector, an xt::xarray or an xt::xtensor of arithmetic elements. std::vector<bool>
/// passes here only to be refused with a message by view_of, through which every collective
/// reads its tensors.
template <class C>
concept tensor = (vector_tensor<C> ||
                  shaped_tensor<C>)&&std::is_arithmetic_v<typename C::value_type>;

template <tensor C>
tensor_view view_of(const C& c) {
  static_assert(!std::is_same_v<C, std::vector<bool>>,
                "std::vector<bool> packs its elements a bit each, so no collective can send it in "
                "place: use xt::xarray<bool>, xt::xtensor<bool, N> or std::vector<std::uint8_t>");
  using T = typename C::value_type;
  tensor_view view;
  view.data = const_cast<T*>(c.data()); // written only through views of non-const tensors
  view.count = c.size();
  view.type = element_type_of<T>();
  if constexpr (vector_tensor<C>)
    view.shape = {c.size()};
  else
    view.shape.assign(c.shape().begin(), c.shape().end());
  return view;
}

/// Throws invalid_argument unless `c` is laid out row-major (a column-major
/// xtensor would travel in another order than its peers read it).
void require_row_major(bool row_major, const char* operation);

template <tensor C>
void check_layout(const C& c, const char* operation) {
  if constexpr (shaped_tensor<C>)
    require_row_major(static_cast<int>(c.layout()) == 1 /* xt::layout_type::row_major */,
                      operation);
}

template <tensor C>
std::vector<tensor_view> views_of(const std::vector<C>& list, const char* operation) {
  std::vector<tensor_view> views;
  views.reserve(list.size());
  for (const auto& c : list) {
    check_layout(c, operation);
    views.push_back(view_of(c));
  }
  return views;
}

} // namespace troupe::detail
