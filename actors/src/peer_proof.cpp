#include "troupe/actors/peer_proof.hpp"

#include "troupe/actors/error.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>

namespace troupe::detail {

namespace {

std::string hex(const unsigned char* data, std::size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 0xf];
  }
  return out;
}

} // namespace

std::string make_nonce() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw network_error("OpenSSL could not make a random nonce");
  return hex(bytes.data(), bytes.size());
}

std::string proof_of(std::string_view secret, std::string_view nonce) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(nonce.data()), nonce.size(), mac.data(),
           &size) == nullptr)
    throw network_error("OpenSSL could not compute an HMAC");
  return hex(mac.data(), size);
}

bool same_proof(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace troupe::detail
