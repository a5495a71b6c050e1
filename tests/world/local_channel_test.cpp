// The shared-memory inboxes members on one host call each other through (world/src/
// local_channel.hpp), two of them in this process: a member that tried to reach another before
// that one's inboxes were made (a member that had just joined) still answers its calls.
#include "local_channel.hpp" // world/src

#include "troupe/actors/error.hpp"
#include "troupe/actors/serialization.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace troupe::detail {
namespace {

using namespace std::chrono_literals;

/// A member's side as the channel sees it: every call answers its payload back; work runs on
/// threads of its own, joined when it goes (after its channel).
class echo_host : public call_host {
public:
  ~echo_host() override { join(); }

  void post(std::function<void()> work) override {
    std::lock_guard guard{mutex_};
    threads_.emplace_back(std::move(work));
  }
  served run(const std::string&, incoming_call& request, const late_answer&) override {
    const auto* bytes = reinterpret_cast<const std::byte*>(request.payload.data());
    return served::ran({bytes, bytes + request.payload.size()});
  }
  late_answer late_local_answer(int, std::uint64_t) override { return {}; }
  std::string label(int rank) const override { return "rank " + std::to_string(rank); }

  void join() {
    for (;;) {
      std::thread next;
      {
        std::lock_guard guard{mutex_};
        if (threads_.empty())
          return;
        next = std::move(threads_.back());
        threads_.pop_back();
      }
      next.join();
    }
  }

private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

std::string fresh_world_id() {
  std::random_device random;
  return "test" + std::to_string(random());
}

call_request echo_of(const std::string& text) {
  call_request request;
  request.name = "echo";
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  request.payload.assign(bytes, bytes + text.size());
  return request;
}

TEST(local_channel, a_member_tried_before_its_inboxes_were_made_is_answered_all_the_same) {
  const auto world = fresh_world_id();
  echo_host first_host, joiner_host;
  {
    local_channel first{first_host, world, 0, 2};
    auto early = echo_of("too early");
    EXPECT_FALSE(first.call(1, "g", early, std::make_shared<result_state<reply_bytes>>()))
      << "rank 1 has no inboxes yet: the call goes another way";
    local_channel joiner{joiner_host, world, 1, 2};
    auto request = echo_of("hello");
    auto reply = std::make_shared<result_state<reply_bytes>>();
    ASSERT_TRUE(joiner.call(0, "g", request, reply));
    ASSERT_TRUE(reply->wait_until(std::chrono::steady_clock::now() + 20s))
      << "rank 0 answered the joiner it had tried to reach too early";
    const auto answer = reply->value();
    EXPECT_EQ(std::string(answer.begin(), answer.end()), "hello");
    joiner.stop();
    first.stop();
  }
  joiner_host.join();
  first_host.join();
}

} // namespace
} // namespace troupe::detail
