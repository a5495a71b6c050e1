// A tensor store that keeps what it is given in a map (for tests): large tensors and blobs
// travel by handle through it, as through shared-memory segments.
#pragma once

#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/error.hpp"

#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace troupe::testing {

/// Takes anything of 64 bytes or more.
class map_store : public troupe::detail::tensor_store {
public:
  bool takes(std::size_t bytes) const override { return bytes >= 64; }
  std::string keep(const void* data, std::size_t bytes) override {
    auto name = "t" + std::to_string(kept.size());
    auto p = static_cast<const std::byte*>(data);
    kept[name].assign(p, p + bytes);
    return name;
  }
  void fetch(const std::string& handle, void* out, std::size_t bytes) override {
    auto it = kept.find(handle);
    if (it == kept.end() || it->second.size() != bytes)
      throw troupe::serialization_error("no tensor " + handle);
    std::memcpy(out, it->second.data(), bytes);
  }
  std::size_t kept_bytes(const std::string& handle) override {
    auto it = kept.find(handle);
    if (it == kept.end())
      throw troupe::serialization_error("no tensor " + handle);
    return it->second.size();
  }
  std::map<std::string, std::vector<std::byte>> kept;
};

} // namespace troupe::testing
