// Serialization of values into self-describing byte blobs, and back.
//
//   std::vector<std::byte> bytes = troupe::serialize(std::map<std::string, int>{{"a", 1}});
//   auto m = troupe::deserialize<std::map<std::string, int>>(bytes);
//
// Covers arithmetic types, std::string, std::vector, std::array, std::map, std::unordered_map,
// std::tuple, std::pair, std::optional, and any user type with a cereal `serialize` member:
//
//   struct job { int id; std::string name;
//                template <class Archive> void serialize(Archive& ar) { ar(id, name); } };
//
// Tensors (xt::xarray, xt::xtensor) need `troupe/actors/tensor_serialization.hpp` as well.
//
// A blob carries a header (format version, a tag of the value's type, the payload length and a
// checksum of the payload), so bytes that are truncated, corrupted, or were written for another
// type raise `troupe::serialization_error` instead of decoding into garbage. Length fields are
// checked against the bytes actually present before anything is allocated.
#pragma once

#include "troupe/actors/detail/byte_archive.hpp"
#include "troupe/actors/error.hpp"

#include <cstddef>
#include <exception>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

namespace troupe {

/// Encodes `value` into a blob that `deserialize<T>` turns back into an equal value.
template <class T>
std::vector<std::byte> serialize(const T& value) {
  std::vector<std::byte> blob(detail::blob_header_size);
  {
    detail::byte_output_archive archive{blob};
    archive(value);
  }
  detail::seal(blob, detail::tag_of<T>());
  return blob;
}

/// Decodes a blob written by `serialize<T>` into `value`, reusing what it can of it (a tensor of
/// the same shape keeps its memory). Throws `troupe::serialization_error` if the bytes are
/// truncated, corrupted, were written for another type, or carry trailing bytes; `value` is then
/// unspecified.
template <class T>
void deserialize_into(std::span<const std::byte> blob, T& value) {
  const auto payload = detail::unseal(blob, detail::tag_of<T>(), typeid(T).name());
  detail::byte_input_archive archive{payload};
  try {
    archive(value);
  } catch (const serialization_error&) {
    throw;
  } catch (const std::exception& e) {
    throw serialization_error("cannot decode " + detail::type_name<T>() + ": " + e.what());
  }
  if (archive.remaining() != 0)
    throw serialization_error("cannot decode " + detail::type_name<T>() + ": " +
                              std::to_string(archive.remaining()) +
                              " bytes left over after the value");
}

/// Decodes a blob written by `serialize<T>`. Throws `troupe::serialization_error` if the bytes are
/// truncated, corrupted, were written for another type, or carry trailing bytes.
template <class T>
T deserialize(std::span<const std::byte> blob) {
  T value{};
  deserialize_into(blob, value);
  return value;
}

} // namespace troupe
