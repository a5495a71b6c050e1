// The hosts tests' members of a world's store (etcd, a server on three of five hosts): the
// partition rule at the store's level. Members claim their ranks in the store's member table
// (world/src/store/member_registry.hpp); the test cuts two hosts, one etcd server among them,
// from the other three; the side of three goes on and sees the two lost, the two learn that
// they lost their leases, and after the cut heals they claim their ranks again, as new
// incarnations the others see join.
#include "host_roles.hpp"

#include "store/member_registry.hpp"
#include "store/store_address.hpp"

#include "troupe/actors/error.hpp"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>

namespace troupe::hosts {

namespace {

namespace etcd = troupe::detail::etcd;

constexpr int members = 5;

/// What this member's registry told it: who joined and who was lost (by rank and incarnation),
/// and whether it was cut off.
class registry_events {
public:
  etcd::registry_handlers handlers() {
    return {[this](const etcd::member_record& r) { add(joined_, r); },
            [](const etcd::member_record&) {}, // no member here leaves on purpose
            [this](const etcd::member_record& r) { add(lost_, r); },
            [this](const std::string&) {
              std::scoped_lock lock{mutex_};
              cut_off_ = true;
              changed_.notify_all();
            }};
  }
  /// Waits up to `limit` until `done(joined, lost, cut_off)` holds.
  template <class Done>
  bool wait(std::chrono::seconds limit, Done done) {
    std::unique_lock lock{mutex_};
    return changed_.wait_for(lock, limit, [&] { return done(joined_, lost_, cut_off_); });
  }

private:
  using seen = std::set<std::pair<int, std::string>>;
  void add(seen& into, const etcd::member_record& r) {
    std::scoped_lock lock{mutex_};
    into.emplace(r.rank, r.incarnation);
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  seen joined_;
  seen lost_;
  bool cut_off_ = false;
};

using seen = std::set<std::pair<int, std::string>>;

bool has_rank(const seen& events, int rank, const std::string& not_incarnation = {}) {
  for (const auto& [r, incarnation] : events)
    if (r == rank && incarnation != not_incarnation)
      return true;
  return false;
}

etcd::registry_settings store_settings() {
  const char* address = std::getenv("TROUPE_TEST_STORE");
  require(address != nullptr, "TROUPE_TEST_STORE is set");
  // Requests wait out a leader election (etcd's 1 s election timeout here).
  return {{detail::parse_store_address(address), nullptr, 6s}, "hosts", members, 3s};
}

int my_rank() { return std::atoi(std::getenv("TROUPE_RANK")); }

/// "0:rank-0-turn-1 1:..." for a failed check's message.
std::string members_of(const etcd::member_registry& registry) {
  std::string text;
  for (const auto& r : registry.members())
    text += " " + std::to_string(r.rank) + ":" + r.incarnation;
  return text;
}

std::string incarnation(int rank, int turn) {
  return "rank-" + std::to_string(rank) + "-turn-" + std::to_string(turn);
}

/// Claims `rank` in a new registry (a new incarnation); a claim may fail while the store still
/// holds the last incarnation's record (its lease not yet expired there): tried again for 30 s.
std::unique_ptr<etcd::member_registry> claim_again(int rank, int turn, registry_events& events) {
  const auto until = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    try {
      auto registry = std::make_unique<etcd::member_registry>(store_settings(), events.handlers());
      registry->claim({rank, std::to_string(rank), incarnation(rank, turn), "-", {"cpu"}});
      return registry;
    } catch (const troupe::error& e) {
      require(std::chrono::steady_clock::now() < until,
              std::string{"rank claimed again within 30 s: "} + e.what());
      std::this_thread::sleep_for(500ms);
    }
  }
}

} // namespace

// Ranks 0-2 stay on the side with the quorum (etcd servers on hosts 0 and 1); ranks 3 and 4
// (an etcd server on host 3) are cut off.
TROUPE_HOST_ROLE(store_member) {
  const int rank = my_rank();
  const bool cut = rank >= 3;
  registry_events events;
  auto registry = claim_again(rank, 1, events);
  require(events.wait(30s, [&](const seen&, const seen&,
                               bool) { return registry->members().size() == members; }),
          "all five members in the store");
  mark("in_" + std::to_string(rank));
  if (!cut) {
    require(events.wait(30s, [](const seen&, const seen& lost,
                                bool) { return has_rank(lost, 3) && has_rank(lost, 4); }),
            "ranks 3 and 4 lost on the side with the quorum");
    mark("saw_cut_" + std::to_string(rank));
    require(events.wait(60s,
                        [](const seen& joined, const seen&, bool cut_off) {
                          return !cut_off && has_rank(joined, 3, incarnation(3, 1)) &&
                                 has_rank(joined, 4, incarnation(4, 1));
                        }),
            "ranks 3 and 4 back as new incarnations, and this member never cut off");
    await_mark("done_3", 60s);
    await_mark("done_4", 60s);
    return;
  }
  require(events.wait(30s, [](const seen&, const seen&, bool cut_off) { return cut_off; }),
          "a member on the side without the quorum learns that its lease is gone");
  etcd::client store{store_settings().store};
  require(failure_of([&] { store.put("/hosts/probe", "x"); }, 10s) == "network_error",
          "the store refuses writes on the side without the quorum");
  mark("cut_off_" + std::to_string(rank));
  await_mark("restored", 60s);
  registry.reset();
  registry_events again;
  registry = claim_again(rank, 2, again);
  require(again.wait(30s, [&](const seen&, const seen&,
                              bool) { return registry->members().size() == members; }),
          "all five members in the store after the cut healed; seen:" + members_of(*registry));
  mark("done_" + std::to_string(rank));
}

} // namespace troupe::hosts
