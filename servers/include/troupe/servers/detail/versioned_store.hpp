// What an ordered_server's host keeps: each key's versions as shared, immutable blobs of
// troupe::serialize's bytes, behind one lock, the oldest dropped past the depth it was given.
#pragma once

#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/world/rpc_group.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace troupe::detail {

/// A value as the store keeps it: the bytes of troupe::serialize, immutable and shared, so that
/// keeping, pulling and sending a 10 MiB model copies it only where it crosses a process.
class blob {
public:
  blob() = default;
  explicit blob(std::vector<std::byte> bytes)
    : bytes_(std::make_shared<const std::vector<std::byte>>(std::move(bytes))) {}

  std::span<const std::byte> bytes() const noexcept {
    return bytes_ ? std::span<const std::byte>{*bytes_} : std::span<const std::byte>{};
  }
  bool operator==(const blob& other) const noexcept {
    return std::ranges::equal(bytes(), other.bytes());
  }

  // A large blob goes where large tensors go while a tensor store is active (a call between
  // members of one host: a shared-memory segment), not inline through the inbox.
  template <class Archive>
  void save(Archive& ar) const {
    const auto data = bytes();
    if (auto* store = active_tensor_store(); store != nullptr && store->takes(data.size())) {
      ar(std::uint8_t{1}, static_cast<std::uint64_t>(data.size()),
         store->keep(data.data(), data.size()));
      return;
    }
    ar(std::uint8_t{0});
    ar(cereal::make_size_tag(static_cast<std::uint64_t>(data.size())));
    ar(cereal::binary_data(data.data(), data.size()));
  }
  template <class Archive>
  void load(Archive& ar) {
    std::uint8_t kept = 0;
    ar(kept);
    if (kept > 1)
      throw serialization_error("corrupted blob: storage byte " + std::to_string(kept));
    std::uint64_t size = 0;
    if (kept == 1) {
      std::string handle;
      ar(size, handle);
      auto* store = active_tensor_store();
      if (store == nullptr)
        throw serialization_error("blob kept outside the message (" + handle +
                                  "), and no store to fetch it from");
      if (store->kept_bytes(handle) < size) // a forged size allocates nothing
        throw serialization_error("corrupted blob: " + std::to_string(size) + " bytes, " + handle +
                                  " keeps fewer");
      std::vector<std::byte> data(size);
      store->fetch(handle, data.data(), size);
      bytes_ = std::make_shared<const std::vector<std::byte>>(std::move(data));
      return;
    }
    ar(cereal::make_size_tag(size));
    if constexpr (requires { ar.require_elements(size, 1); })
      ar.require_elements(size, 1); // a forged length allocates nothing
    std::vector<std::byte> data(size);
    ar(cereal::binary_data(data.data(), data.size()));
    bytes_ = std::make_shared<const std::vector<std::byte>>(std::move(data));
  }

private:
  std::shared_ptr<const std::vector<std::byte>> bytes_;
};

/// The store's table, apart from any group (machin's semantics; one lock).
class versioned_store {
public:
  explicit versioned_store(int version_depth);

  bool push(const std::string& key, blob value, std::int64_t version,
            std::optional<std::int64_t> prev_version);
  std::optional<std::pair<blob, std::int64_t>> pull(const std::string& key,
                                                    std::optional<std::int64_t> version) const;
  /// The newest version, with its value only if that version is above `than`; nothing for an
  /// unknown key.
  std::optional<std::pair<std::optional<blob>, std::int64_t>> pull_newer(const std::string& key,
                                                                         std::int64_t than) const;

private:
  using versions = std::deque<std::pair<std::int64_t, blob>>; // oldest stored first

  mutable std::mutex mutex_;
  const std::size_t kept_;
  std::map<std::string, versions> entries_;
};

} // namespace troupe::detail
