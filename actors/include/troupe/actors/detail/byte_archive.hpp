// The archives serialize and deserialize use: cereal's, over a blob of bytes whose header
// (version, type tag, length, checksum) seal writes and unseal checks, and whose reads are
// bounded by the bytes present, so that no length from a peer allocates more than it sent.
#pragma once

#include "troupe/actors/error.hpp"

#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

namespace troupe::detail {

/// Human-readable (demangled) name of a type, for error messages.
std::string demangle(const char* mangled_name);

/// T's name, demangled once per type: failures name their type on every reply that carries one.
template <class T>
const std::string& type_name() {
  static const std::string name = demangle(typeid(T).name());
  return name;
}

/// Stable tag of a type within one build of a program (all processes of a pool run the same
/// binary), derived from its mangled name.
std::uint64_t type_tag(const char* mangled_name) noexcept;

/// T's tag, hashed once per type rather than per value encoded.
template <class T>
std::uint64_t tag_of() noexcept {
  static const std::uint64_t tag = type_tag(typeid(T).name());
  return tag;
}

/// Size of the header `seal` puts in front of a payload.
inline constexpr std::size_t blob_header_size = 28;

/// Writes the header for `payload_size` bytes at `blob[0, blob_header_size)`; the payload must
/// already be at `blob[blob_header_size, ...)`.
void seal(std::span<std::byte> blob, std::uint64_t tag) noexcept;

/// Checks a blob's header and checksum against the expected type (its tag, and its mangled name
/// for the error message, demangled only then); returns its payload.
std::span<const std::byte> unseal(std::span<const std::byte> blob, std::uint64_t expected_tag,
                                  const char* expected_mangled_name);

/// A cereal output archive appending to a byte vector.
class byte_output_archive
  : public cereal::OutputArchive<byte_output_archive, cereal::AllowEmptyClassElision> {
public:
  explicit byte_output_archive(std::vector<std::byte>& out) : OutputArchive(this), out_(out) {}

  void save_bytes(const void* data, std::size_t size) {
    // resize + memcpy rather than insert: GCC 12 misreads insert after a sized construction
    // as writing out of bounds (-Warray-bounds).
    const auto at = out_.size();
    out_.resize(at + size);
    if (size != 0)
      std::memcpy(out_.data() + at, data, size);
  }

private:
  std::vector<std::byte>& out_;
};

/// A cereal input archive reading a byte span. It never reads past the end, and it rejects a
/// length field that claims more elements than bytes remain, so hostile input cannot make it
/// allocate more than a small multiple of the input's own size.
class byte_input_archive
  : public cereal::InputArchive<byte_input_archive, cereal::AllowEmptyClassElision> {
public:
  explicit byte_input_archive(std::span<const std::byte> in) : InputArchive(this), in_(in) {}

  void load_bytes(void* data, std::size_t size) {
    require(size, "value");
    if (size != 0) // an empty vector's data() may be null: memcpy from or to null is undefined
      std::memcpy(data, in_.data() + pos_, size);
    pos_ += size;
  }

  /// Throws unless `count` values of at least `each` encoded bytes can follow.
  void require_elements(std::uint64_t count, std::size_t each) const {
    if (each != 0 && count > remaining() / each)
      throw_too_many(count, each);
  }

  std::size_t remaining() const noexcept { return in_.size() - pos_; }
  std::size_t position() const noexcept { return pos_; }

  /// Throws unless `size` more bytes are present; `what` names the field for the message.
  void require(std::size_t size, const char* what) const {
    if (size > remaining())
      throw_truncated(size, what);
  }

private:
  [[noreturn]] void throw_truncated(std::size_t size, const char* what) const;
  [[noreturn]] void throw_too_many(std::uint64_t count, std::size_t each) const;

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

/// The fewest bytes one value of T can encode to: what a length field is checked against, so a
/// forged count cannot make a decoder allocate more than a small multiple of its input. Types
/// troupe does not know count 1 byte (0 if empty); specialize min_encoded_size for a type of
/// your own whose every value is large.
template <class T>
struct min_encoded_size : std::integral_constant<std::size_t, std::is_empty_v<T>        ? 0
                                                              : std::is_arithmetic_v<T> ? sizeof(T)
                                                                                        : 1> {};
template <class T, std::size_t N>
struct min_encoded_size<std::array<T, N>>
  : std::integral_constant<std::size_t, N * min_encoded_size<T>::value> {};
template <class A, class B>
struct min_encoded_size<std::pair<A, B>>
  : std::integral_constant<std::size_t, min_encoded_size<A>::value + min_encoded_size<B>::value> {};
template <class... Ts>
struct min_encoded_size<std::tuple<Ts...>>
  : std::integral_constant<std::size_t, (std::size_t{0} + ... + min_encoded_size<Ts>::value)> {};
template <class C, class Tr, class A>
struct min_encoded_size<std::basic_string<C, Tr, A>> : std::integral_constant<std::size_t, 8> {};
template <class T, class A>
struct min_encoded_size<std::vector<T, A>> : std::integral_constant<std::size_t, 8> {};
template <class K, class V, class C, class A>
struct min_encoded_size<std::map<K, V, C, A>> : std::integral_constant<std::size_t, 8> {};
template <class K, class V, class H, class E, class A>
struct min_encoded_size<std::unordered_map<K, V, H, E, A>>
  : std::integral_constant<std::size_t, 8> {};

} // namespace troupe::detail

// How troupe's archives read and write the primitives cereal builds everything else from.
namespace cereal {

template <class T>
requires std::is_arithmetic_v<T>
void CEREAL_SAVE_FUNCTION_NAME(troupe::detail::byte_output_archive& ar, const T& value) {
  ar.save_bytes(std::addressof(value), sizeof(value));
}

template <class T>
requires std::is_arithmetic_v<T>
void CEREAL_LOAD_FUNCTION_NAME(troupe::detail::byte_input_archive& ar, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    // Any byte other than 0 or 1 in a bool is undefined behaviour once read: reject it here.
    unsigned char byte = 0;
    ar.load_bytes(&byte, 1);
    if (byte > 1)
      throw troupe::serialization_error("corrupted bool: byte value " + std::to_string(byte) +
                                        " at offset " + std::to_string(ar.position() - 1));
    value = byte == 1;
  } else {
    ar.load_bytes(std::addressof(value), sizeof(value));
  }
}

template <class Archive, class T>
requires std::is_same_v<Archive, troupe::detail::byte_output_archive> ||
  std::is_same_v<Archive, troupe::detail::byte_input_archive>
void CEREAL_SERIALIZE_FUNCTION_NAME(Archive& ar, NameValuePair<T>& pair) { ar(pair.value); }

template <class T>
void CEREAL_SAVE_FUNCTION_NAME(troupe::detail::byte_output_archive& ar, const SizeTag<T>& tag) {
  ar(tag.size);
}

template <class T>
void CEREAL_LOAD_FUNCTION_NAME(troupe::detail::byte_input_archive& ar, SizeTag<T>& tag) {
  std::uint64_t size = 0;
  ar.load_bytes(&size, sizeof(size));
  // Every element takes at least one byte of input (empty element types aside), so a count
  // larger than what is left is corrupt; checking here keeps `resize(count)` bounded.
  if (size > ar.remaining())
    throw troupe::serialization_error("corrupted length: " + std::to_string(size) +
                                      " elements claimed at offset " +
                                      std::to_string(ar.position() - sizeof(size)) + ", only " +
                                      std::to_string(ar.remaining()) + " bytes left");
  tag.size = static_cast<std::remove_reference_t<T>>(size);
}

/// Vectors check their count against the smallest encoding of an element before they are sized
/// (cereal's own loader sizes first), so no input allocates much more than its own bytes.
template <class T, class A>
requires(!std::is_same_v<T, bool>) void CEREAL_LOAD_FUNCTION_NAME(
  troupe::detail::byte_input_archive& ar, std::vector<T, A>& vector) {
  typename std::vector<T, A>::size_type size = 0;
  ar(make_size_tag(size));
  ar.require_elements(size, troupe::detail::min_encoded_size<T>::value);
  vector.resize(static_cast<std::size_t>(size));
  if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::byte>)
    ar(binary_data(vector.data(), static_cast<std::size_t>(size) * sizeof(T)));
  else
    for (auto& element : vector)
      ar(element);
}

/// Bytes (encoded values nested in a message, a pool's calls and replies) are copied whole;
/// cereal would write a std::byte, an enum to it, one archive call at a time.
template <class A>
void CEREAL_SAVE_FUNCTION_NAME(troupe::detail::byte_output_archive& ar,
                               const std::vector<std::byte, A>& vector) {
  ar(make_size_tag(static_cast<std::uint64_t>(vector.size())));
  ar(binary_data(vector.data(), vector.size()));
}

template <class T>
void CEREAL_SAVE_FUNCTION_NAME(troupe::detail::byte_output_archive& ar, const BinaryData<T>& data) {
  ar.save_bytes(data.data, static_cast<std::size_t>(data.size));
}

template <class T>
void CEREAL_LOAD_FUNCTION_NAME(troupe::detail::byte_input_archive& ar, BinaryData<T>& data) {
  ar.load_bytes(data.data, static_cast<std::size_t>(data.size));
}

} // namespace cereal

CEREAL_REGISTER_ARCHIVE(troupe::detail::byte_output_archive)
CEREAL_REGISTER_ARCHIVE(troupe::detail::byte_input_archive)
CEREAL_SETUP_ARCHIVE_TRAITS(troupe::detail::byte_input_archive, troupe::detail::byte_output_archive)
