#include "gloo_mesh.hpp"

#include "troupe/actors/error.hpp"

#include <gloo/transport/context.h>

#include <algorithm>
#include <string>

namespace troupe::detail {

namespace {

std::chrono::milliseconds until(std::chrono::steady_clock::time_point deadline) {
  const auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(
    deadline - std::chrono::steady_clock::now());
  return std::max(rest, std::chrono::milliseconds{1});
}

} // namespace

void gloo_mesh::connect(gloo::rendezvous::Store& store,
                        const std::shared_ptr<gloo::transport::Device>& device,
                        std::chrono::steady_clock::time_point deadline) {
  auto transport = device->createContext(rank, size);
  // A pair keeps the timeout it was made with and waits five times that for its connection.
  transport->setTimeout(std::max(until(deadline) / 5, std::chrono::milliseconds{1}));
  std::vector<char> addresses; // of this member's pairs, by peer rank, this rank skipped
  std::size_t address_size = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank)
      continue;
    const auto bytes = transport->createPair(peer)->address().bytes();
    address_size = bytes.size();
    addresses.insert(addresses.end(), bytes.begin(), bytes.end());
  }
  store.set(std::to_string(rank), addresses);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank)
      continue;
    const auto published = store.get(std::to_string(peer));
    // The peer listed its pairs in rank order without itself: this member's is at `slot`.
    const auto slot = static_cast<std::size_t>(rank > peer ? rank - 1 : rank);
    if (published.size() != address_size * static_cast<std::size_t>(size - 1))
      throw network_error("gloo: member " + std::to_string(peer) + " published " +
                          std::to_string(published.size()) + " bytes of addresses, not " +
                          std::to_string(address_size * static_cast<std::size_t>(size - 1)));
    const auto first = published.begin() + static_cast<std::ptrdiff_t>(slot * address_size);
    transport->getPair(peer)->connect(
      std::vector<char>(first, first + static_cast<std::ptrdiff_t>(address_size)));
  }
  transport->setTimeout(getTimeout());
  device_ = device;
  transportContext_ = std::move(transport);
}

} // namespace troupe::detail
