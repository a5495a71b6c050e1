// What travels between a process pool and its workers (local processes or nodes on other hosts):
// batches of chunk requests one way, batches of replies the other.
#pragma once

#include "troupe/actors/detail/failure.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

struct chunk_request {
  std::uint64_t id = 0;
  std::string task;
  bool with_context = false; // call as task(worker's context, args...)
  std::vector<std::byte> calls;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, task, with_context, calls);
  }
};

/// How a context pool's worker gets its context: made by a registered factory from the worker's
/// index, or decoded from a value of a registered context type.
struct context_setup {
  std::string factory;
  std::string type;
  std::vector<std::byte> value;
  std::uint64_t index = 0; // the worker's index, the factory's argument
  template <class Archive>
  void serialize(Archive& ar) {
    ar(factory, type, value, index);
  }
};

struct chunk_reply {
  std::uint64_t id = 0;
  // The chunk could not be run, or its results could not travel (failure.hpp says
  // what becomes of it); without a type, the fault is in the request's bytes or its task's name.
  failure why;
  std::vector<std::byte> outcomes;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, why.message, why.type, outcomes);
  }
};

/// An actor placed in a worker process (process_pool::spawn with troupe::in_slot): the queues
/// and heartbeat of its own that the worker serves it through, on a thread of its own.
struct actor_channel {
  std::string queues; // the stem of its request (-req) and reply (-rep) queues' names
  std::string heartbeat; // the segment its thread beats in
  template <class Archive>
  void serialize(Archive& ar) {
    ar(queues, heartbeat);
  }
};

/// Several chunks travel in one message each way: the per-message costs (a lock, a wake-up)
/// are paid once per batch, whatever the chunk size.
struct request_batch {
  std::vector<chunk_request> chunks;
  std::optional<context_setup> context; // in a worker's first batch, for context pools
  std::optional<std::uint64_t> slot; // in a node's first batch: its index in the pool
  std::vector<actor_channel> actors; // actors placed in this worker since the last batch
  template <class Archive>
  void serialize(Archive& ar) {
    ar(chunks, context, slot, actors);
  }
};

/// A call a worker process makes, through a handle that travelled there, to an actor of the
/// process that started it: relayed on the worker's reply queue, answered on its channel's
/// answer queue by a chunk_reply of the same id (relay_host.cpp, relay_client.cpp).
struct relay_call {
  std::uint64_t id = 0;
  std::uint64_t actor = 0; // its number in that process (travelled_actors.hpp)
  std::string method; // the method's key; empty: stop the actor
  std::vector<std::byte> arguments; // encoded inline
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, actor, method, arguments);
  }
};

struct reply_batch {
  std::vector<chunk_reply> chunks;
  std::vector<relay_call> relayed;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(chunks, relayed);
  }
};

} // namespace troupe::detail
