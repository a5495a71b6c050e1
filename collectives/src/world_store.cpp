#include "world_store.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <thread>

namespace troupe::detail {

void world_store::set(const std::string& key, const std::vector<char>& data) {
  group_.pair(key, data);
}

std::vector<char> world_store::get(const std::string& key) {
  wait({key});
  return group_.get_paired<std::vector<char>>(key).to_here(left());
}

void world_store::close() {
  group_.barrier(left());
  group_.destroy();
}

std::chrono::milliseconds world_store::left() const {
  const auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - clock::now());
  return std::max(rest, std::chrono::milliseconds{1});
}

void world_store::wait(const std::vector<std::string>& keys) { wait(keys, left()); }

void world_store::wait(const std::vector<std::string>& keys,
                       const std::chrono::milliseconds& timeout) {
  // A key is set once a member reaches that point of gloo's rendezvous: poll
  // rank 0's table, backing off, as gloo's own stores do.
  const auto deadline = std::min(deadline_, clock::now() + timeout);
  auto pause = std::chrono::milliseconds{1};
  for (const auto& key : keys) {
    while (!group_.is_paired(key)) {
      check_members_();
      if (clock::now() >= deadline)
        throw timeout_error(group_.name() + ": gloo's rendezvous key '" + key +
                            "' was not set in time");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds{50});
    }
  }
}

} // namespace troupe::detail
