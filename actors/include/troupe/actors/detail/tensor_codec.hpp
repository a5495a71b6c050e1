// How a tensor is written and read (tensor_serialization.hpp gives the wire format): its layout,
// shape and storage, each checked against what the tensor type can hold and the bytes present
// before anything is allocated.
#pragma once

#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/serialization.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace troupe::detail {

template <class T>
concept tensor_element = std::is_arithmetic_v<T>;

enum class tensor_storage : std::uint8_t { inline_bytes = 0, external = 1 };

template <class Tensor>
void save_tensor(byte_output_archive& ar, const Tensor& tensor) {
  using value_type = typename Tensor::value_type;
  ar(static_cast<std::uint8_t>(tensor.layout()));
  ar(cereal::make_size_tag(static_cast<std::uint64_t>(tensor.dimension())));
  for (auto extent : tensor.shape())
    ar(static_cast<std::uint64_t>(extent));
  const auto bytes = tensor.size() * sizeof(value_type);
  if (auto* store = active_tensor_store(); store != nullptr && store->takes(bytes)) {
    ar(static_cast<std::uint8_t>(tensor_storage::external));
    ar(store->keep(tensor.data(), bytes));
    return;
  }
  ar(static_cast<std::uint8_t>(tensor_storage::inline_bytes));
  ar(cereal::binary_data(tensor.data(), bytes));
}

/// A tensor's layout byte, checked against what `Tensor` can hold.
template <class Tensor>
xt::layout_type load_layout(byte_input_archive& ar) {
  std::uint8_t layout_byte = 0;
  ar(layout_byte);
  const auto layout = static_cast<xt::layout_type>(layout_byte);
  if (layout != xt::layout_type::row_major && layout != xt::layout_type::column_major)
    throw serialization_error("corrupted tensor: layout byte " + std::to_string(layout_byte));
  if constexpr (Tensor::static_layout != xt::layout_type::dynamic) {
    if (layout != Tensor::static_layout)
      throw serialization_error("corrupted tensor: layout differs from " + type_name<Tensor>());
  }
  return layout;
}

/// A tensor's shape, and the bytes of its elements: serialization_error for a rank `Tensor`
/// cannot have or extents whose products overflow.
template <class Tensor>
std::pair<typename Tensor::shape_type, std::uint64_t> load_shape(byte_input_archive& ar) {
  using shape_type = typename Tensor::shape_type;
  std::uint64_t rank = 0;
  ar(cereal::make_size_tag(rank));
  shape_type shape{};
  if constexpr (requires { shape.resize(std::size_t{}); }) {
    shape.resize(static_cast<std::size_t>(rank));
  } else if (rank != shape.size()) {
    throw serialization_error("corrupted tensor: rank " + std::to_string(rank) + " for " +
                              type_name<Tensor>());
  }
  // The strides are products of the extents, zero or not, so a zero extent that empties the
  // tensor must not hide huge others: the product of the non-zero extents must fit them.
  using value_type = typename Tensor::value_type;
  std::uint64_t count = 1, strided = 1;
  for (auto& extent : shape) {
    std::uint64_t e = 0;
    ar(e);
    if (__builtin_mul_overflow(count, e, &count) ||
        (e != 0 && __builtin_mul_overflow(strided, e, &strided)) ||
        strided > static_cast<std::uint64_t>(PTRDIFF_MAX) / sizeof(value_type))
      throw serialization_error("corrupted tensor: shape overflows");
    extent = static_cast<typename shape_type::value_type>(e);
  }
  return {std::move(shape), count * sizeof(value_type)};
}

/// Where a tensor's `bytes` of elements are: the handle of a tensor store's copy, or empty when
/// they follow inline (checked to be there before anything is allocated for them).
inline std::string load_storage(byte_input_archive& ar, std::uint64_t bytes) {
  std::uint8_t storage = 0;
  ar(storage);
  std::string handle;
  if (storage == static_cast<std::uint8_t>(tensor_storage::external)) {
    ar(handle);
    if (active_tensor_store() == nullptr)
      throw serialization_error("tensor kept outside the blob (" + handle +
                                "), and no tensor store to fetch it from");
    if (const auto kept = active_tensor_store()->kept_bytes(handle); kept < bytes)
      throw serialization_error("corrupted tensor: its shape needs " + std::to_string(bytes) +
                                " bytes, " + handle + " keeps " + std::to_string(kept));
  } else if (storage != static_cast<std::uint8_t>(tensor_storage::inline_bytes)) {
    throw serialization_error("corrupted tensor: storage byte " + std::to_string(storage));
  } else {
    // Checked before resize, so a forged shape cannot make us allocate.
    ar.require(bytes, "tensor elements");
  }
  return handle;
}

template <class Tensor>
void load_tensor(byte_input_archive& ar, Tensor& tensor) {
  const auto layout = load_layout<Tensor>(ar);
  const auto [shape, bytes] = load_shape<Tensor>(ar);
  const auto handle = load_storage(ar, bytes);
  if constexpr (Tensor::static_layout == xt::layout_type::dynamic)
    tensor.resize(shape, layout);
  else
    tensor.resize(shape);

  auto* first = reinterpret_cast<unsigned char*>(tensor.data());
  if (!handle.empty())
    active_tensor_store()->fetch(handle, first, bytes);
  else
    ar.load_bytes(first, bytes);
  if constexpr (std::is_same_v<typename Tensor::value_type, bool>) {
    // Validate the raw bytes before anything reads them as bool (other values are UB).
    if (std::any_of(first, first + bytes, [](unsigned char b) { return b > 1; })) {
      std::fill(first, first + bytes, 0);
      throw serialization_error("corrupted bool tensor: an element byte is neither 0 nor 1");
    }
  }
}

/// A tensor encodes at least its layout, rank and storage bytes, and 8 bytes per fixed extent.
template <class EC, xt::layout_type L, class SC, class Tag>
struct min_encoded_size<xt::xarray_container<EC, L, SC, Tag>>
  : std::integral_constant<std::size_t, 10> {};
template <class EC, std::size_t N, xt::layout_type L, class Tag>
struct min_encoded_size<xt::xtensor_container<EC, N, L, Tag>>
  : std::integral_constant<std::size_t, 10 + 8 * N> {};

} // namespace troupe::detail
