// Calls between members on one host, through troupe's shared-memory queues instead of loopback
// TCP. Each member has two inboxes, named after the world and its rank: requests, read by one
// of the world's executor threads at a time, which hands the reading on to another and answers
// the call itself, putting the answer into the caller's replies inbox; and replies, whose
// reader thread hands them to their waiting results. No actor hop on either side; replies never
// wait behind long calls, so calls may nest. One reader per inbox: a queue wakes every waiting
// reader for each message, and on two cores the losers' spinning costs more than it saves.
// Large tensors skip the messages: a call's go into segments of the callee's request inbox,
// an answer's into segments of the caller's reply inbox, each read once into its destination.
// A peer whose inbox this process cannot open is on another host (or not ready yet): its calls
// go through the member actor over CAF.
//
// Liveness still comes from CAF: when the member actor sees a member lost, lost() fails the
// calls pending here on it, and puts to it stop waiting for room.
#pragma once

#include "call_host.hpp"

#include "troupe/queues/detail/segment_store.hpp"
#include "troupe/queues/queue.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace troupe::detail {

/// What travels between inboxes: a request (status unused) or a reply (call fields unused).
struct local_message {
  bool is_reply = false;
  std::uint64_t id = 0;
  std::int32_t from = 0;
  std::uint8_t kind = 0;
  std::string group, key, name, type;
  std::uint8_t status = 0;
  std::string text;
  std::vector<char> payload;

  /// A reply's `why` (nothing failed: ok), as status and text.
  void set_failure(const failure& why) {
    status = wire_status(why);
    text = why.message;
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(is_reply, id, from, kind, group, key, name, type, status, text, payload);
  }
};

class local_channel {
public:
  /// Creates the inboxes of member `rank` of a world of up to `capacity` members, served by `host`,
  /// and starts the threads that read them.
  local_channel(call_host& host, const std::string& world_id, int rank, int capacity);
  ~local_channel();

  /// Sends a call to `rank` through its inbox, its reply to arrive in `reply`; false (nothing
  /// sent) if that inbox cannot be opened here.
  bool call(int rank, const std::string& group, call_request& request, const bytes_result& reply);

  /// `rank` is gone: fail what is pending on it, stop waiting to put to it.
  void lost(int rank, const std::string& why);
  /// This member is out of its world: every call pending here fails with `why`.
  void fail_all(const std::exception_ptr& why);
  /// `rank` joined again as a new process: its calls go over TCP from now on (its inboxes'
  /// names are its old process's, whose inboxes may still be there).
  void rejoined(int rank);

  /// Fails everything pending, closes the inboxes and joins their readers.
  void stop() noexcept;

  /// Answers call `id` of `rank` after the executor thread that read it went on (an actor's
  /// call, once it has run), from whatever thread ends it.
  void answer_late(int rank, std::uint64_t id, served outcome) noexcept;

private:
  struct peer {
    std::optional<queue<local_message>> requests, replies;
    std::chrono::steady_clock::time_point retry_after{};
  };

  std::string inbox_name(int rank, bool replies) const;
  /// Where member `rank`'s inboxes are, opened on first use; null if they cannot be (on another
  /// host, not made yet: tried again a second later) or `rank` joined again (TCP only).
  /// `answering`: `rank` sent this member a request, so its inboxes exist: opened now, whenever
  /// it was last tried.
  peer* peer_of(int rank, bool answering = false);
  /// Whether `rank` joined the world again (rejoined): reached over TCP only.
  bool joined_again(int rank);
  bool put(peer& to, int rank, bool reply, const local_message& message);
  /// On an executor thread: waits for the next request, posts the next read, answers it.
  void read_request();
  void answer(local_message& request);

  /// Puts an answer into `rank`'s replies inbox; false if it did not go (an answer too large
  /// for the shared memory left goes as an error instead).
  bool reply_to(peer& caller, int rank, local_message& reply);
  void settle_replies();
  void settle(local_message& reply);

  call_host& host_;
  const std::string world_id_;
  const int rank_, capacity_;
  queue<local_message> requests_, replies_;
  std::vector<std::unique_ptr<std::atomic<bool>>> lost_; // by rank
  std::mutex mutex_;
  std::map<int, peer> peers_;
  std::map<std::uint64_t, std::pair<int, bytes_result>> pending_;
  std::uint64_t next_id_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread replies_reader_;
  bool reading_requests_ = true; // a read_request is posted or running (under mutex_)
  std::condition_variable requests_read_;
};

} // namespace troupe::detail
