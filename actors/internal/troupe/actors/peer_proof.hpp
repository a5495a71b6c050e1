// Proving a shared secret without sending it: the listener sends a fresh nonce, the peer answers
// HMAC-SHA256(secret, nonce). A recorded answer is useless for the next nonce, and an
// eavesdropper learns nothing that lets it guess the secret faster than offline.
#pragma once

#include <string>
#include <string_view>

namespace troupe::detail {

/// 32 random bytes from OpenSSL's generator, hex-encoded.
std::string make_nonce();

/// HMAC-SHA256 of `nonce` keyed with `secret`, hex-encoded.
std::string proof_of(std::string_view secret, std::string_view nonce);

/// Compares two proofs in time independent of where they differ.
bool same_proof(std::string_view a, std::string_view b) noexcept;

} // namespace troupe::detail
