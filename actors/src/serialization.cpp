#include "troupe/actors/serialization.hpp"
#include "troupe/actors/tensor_serialization.hpp"

#include <cxxabi.h>

#include <array>
#include <bit>
#include <cstdlib>
#include <memory>

namespace troupe::detail {

namespace {

// Header layout: "trp" + format version, type tag, payload length, payload checksum.
constexpr std::array<std::byte, 4> blob_magic{std::byte{'t'}, std::byte{'r'}, std::byte{'p'},
                                              std::byte{1}};
constexpr std::size_t tag_offset = 4;
constexpr std::size_t length_offset = 12;
constexpr std::size_t checksum_offset = 20;
static_assert(checksum_offset + 8 == blob_header_size);

std::uint64_t load_u64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

void store_u64(std::byte* p, std::uint64_t v) noexcept { std::memcpy(p, &v, sizeof(v)); }

constexpr std::uint64_t mix_prime_1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t mix_prime_2 = 0xC2B2AE3D27D4EB4FULL;

std::uint64_t mix(std::uint64_t acc, std::uint64_t word) noexcept {
  acc += word * mix_prime_2;
  acc = std::rotl(acc, 31);
  return acc * mix_prime_1;
}

// An integrity check, not a cryptographic hash: four independent lanes over 8-byte words keep it
// near memory speed, and every input bit reaches the result through a multiply.
std::uint64_t checksum(std::span<const std::byte> bytes) noexcept {
  std::array<std::uint64_t, 4> lanes{mix_prime_1 + mix_prime_2, mix_prime_2, 0, mix_prime_1};
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  for (; n >= 32; p += 32, n -= 32)
    for (std::size_t lane = 0; lane < 4; ++lane)
      lanes[lane] = mix(lanes[lane], load_u64(p + 8 * lane));
  std::uint64_t h = std::rotl(lanes[0], 1) + std::rotl(lanes[1], 7) + std::rotl(lanes[2], 12) +
                    std::rotl(lanes[3], 18);
  for (; n >= 8; p += 8, n -= 8)
    h = mix(h, load_u64(p));
  for (; n > 0; ++p, --n)
    h = mix(h, std::to_integer<std::uint64_t>(*p) + 0x100);
  h ^= bytes.size();
  h ^= h >> 33;
  h *= mix_prime_2;
  h ^= h >> 29;
  return h;
}

} // namespace

std::string demangle(const char* mangled_name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name{
    abi::__cxa_demangle(mangled_name, nullptr, nullptr, &status), &std::free};
  return status == 0 && name ? std::string{name.get()} : std::string{mangled_name};
}

std::uint64_t type_tag(const char* mangled_name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a
  for (const char* c = mangled_name; *c != '\0'; ++c) {
    h ^= static_cast<unsigned char>(*c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

void seal(std::span<std::byte> blob, std::uint64_t tag) noexcept {
  const auto payload = blob.subspan(blob_header_size);
  std::memcpy(blob.data(), blob_magic.data(), blob_magic.size());
  store_u64(blob.data() + tag_offset, tag);
  store_u64(blob.data() + length_offset, payload.size());
  store_u64(blob.data() + checksum_offset, checksum(payload));
}

std::span<const std::byte> unseal(std::span<const std::byte> blob, std::uint64_t expected_tag,
                                  const char* expected_mangled_name) {
  const auto fail = [&](const std::string& why) -> serialization_error {
    return serialization_error("cannot decode " + demangle(expected_mangled_name) + ": " + why);
  };
  if (blob.size() < blob_header_size)
    throw fail("blob of " + std::to_string(blob.size()) + " bytes is shorter than its " +
               std::to_string(blob_header_size) + "-byte header");
  if (std::memcmp(blob.data(), blob_magic.data(), blob_magic.size()) != 0)
    throw fail("not a troupe blob, or written by another format version");
  if (load_u64(blob.data() + tag_offset) != expected_tag)
    throw fail("the bytes were written for another type");
  const auto length = load_u64(blob.data() + length_offset);
  const auto payload = blob.subspan(blob_header_size);
  if (length != payload.size())
    throw fail("header says " + std::to_string(length) + " payload bytes, blob has " +
               std::to_string(payload.size()));
  if (load_u64(blob.data() + checksum_offset) != checksum(payload))
    throw fail("checksum mismatch: the bytes were corrupted");
  return payload;
}

tensor_store*& active_tensor_store() noexcept {
  thread_local tensor_store* store = nullptr;
  return store;
}

void byte_input_archive::throw_truncated(std::size_t size, const char* what) const {
  throw serialization_error("truncated input: " + std::string{what} + " needs " +
                            std::to_string(size) + " bytes at offset " + std::to_string(pos_) +
                            ", only " + std::to_string(remaining()) + " left");
}

void byte_input_archive::throw_too_many(std::uint64_t count, std::size_t each) const {
  throw serialization_error("corrupted length: " + std::to_string(count) +
                            " elements of at least " + std::to_string(each) +
                            " bytes each claimed at offset " + std::to_string(pos_) + ", only " +
                            std::to_string(remaining()) + " bytes left");
}

} // namespace troupe::detail
