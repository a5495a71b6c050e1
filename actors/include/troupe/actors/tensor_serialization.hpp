// Serialization of xtensor containers (xt::xarray, xt::xtensor) of any arithmetic element type and
// bool, any shape (0-d and empty included), row-major, column-major or dynamic layout.
//
//   xt::xarray<float> a = xt::ones<float>({2, 3});
//   auto bytes = troupe::serialize(a);
//   auto b = troupe::deserialize<xt::xarray<float>>(bytes);
//
// Wire format: layout byte, rank, extents, a storage byte, then either the elements as one
// block in storage order (no per-element work: one memcpy each way), or, while a tensor_store is
// active and the tensor is large, the store's handle for a copy of the elements kept elsewhere
// (the queues keep them in shared-memory segments).
#pragma once

#include "troupe/actors/detail/tensor_codec.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <cstddef>

namespace xt {

template <class EC, layout_type L, class SC, class Tag>
requires troupe::detail::tensor_element<typename EC::value_type>
void CEREAL_SAVE_FUNCTION_NAME(troupe::detail::byte_output_archive& ar,
                               const xarray_container<EC, L, SC, Tag>& tensor) {
  troupe::detail::save_tensor(ar, tensor);
}

template <class EC, layout_type L, class SC, class Tag>
requires troupe::detail::tensor_element<typename EC::value_type>
void CEREAL_LOAD_FUNCTION_NAME(troupe::detail::byte_input_archive& ar,
                               xarray_container<EC, L, SC, Tag>& tensor) {
  troupe::detail::load_tensor(ar, tensor);
}

template <class EC, std::size_t N, layout_type L, class Tag>
requires troupe::detail::tensor_element<typename EC::value_type>
void CEREAL_SAVE_FUNCTION_NAME(troupe::detail::byte_output_archive& ar,
                               const xtensor_container<EC, N, L, Tag>& tensor) {
  troupe::detail::save_tensor(ar, tensor);
}

template <class EC, std::size_t N, layout_type L, class Tag>
requires troupe::detail::tensor_element<typename EC::value_type>
void CEREAL_LOAD_FUNCTION_NAME(troupe::detail::byte_input_archive& ar,
                               xtensor_container<EC, N, L, Tag>& tensor) {
  troupe::detail::load_tensor(ar, tensor);
}

} // namespace xt
