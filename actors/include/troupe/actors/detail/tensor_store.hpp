// Where large tensors go while they are serialized: a tensor_store, active on one thread at a
// time, keeps their elements elsewhere (troupe's queues: shared-memory segments) and the
// encoded bytes hold only its handle.
#pragma once

#include <cstddef>
#include <string>

namespace troupe::detail {

class segment_store; // troupe/queues: shared-memory segments for a queue

/// Where large tensors go instead of into the blob, while one is active on this thread.
class tensor_store {
public:
  virtual ~tensor_store() = default;
  /// Whether a tensor of `bytes` element bytes should go to the store.
  virtual bool takes(std::size_t bytes) const = 0;
  /// Keeps a copy of `bytes` bytes at `data`; returns the handle that finds it again.
  virtual std::string keep(const void* data, std::size_t bytes) = 0;
  /// Copies the `bytes` bytes kept under `handle` to `out` (throws serialization_error if the
  /// handle is unknown or the sizes disagree).
  virtual void fetch(const std::string& handle, void* out, std::size_t bytes) = 0;
  /// How many bytes are kept under `handle` (throws serialization_error if it is unknown):
  /// checked before a tensor is sized for them, so a forged shape allocates nothing.
  virtual std::size_t kept_bytes(const std::string& handle) = 0;
  /// The segments of the queue a message being encoded goes to, for values that live in shared
  /// memory already (shared_tensor); null when there is no such queue.
  virtual segment_store* outgoing_segments() noexcept { return nullptr; }
  /// The segments of the queue a message being decoded came from.
  virtual segment_store* incoming_segments() noexcept { return nullptr; }
};

/// The store in effect on this thread (null: tensors are inline).
tensor_store*& active_tensor_store() noexcept;

/// Makes `store` the active one for its lifetime.
class tensor_store_scope {
public:
  explicit tensor_store_scope(tensor_store& store) : previous_(active_tensor_store()) {
    active_tensor_store() = &store;
  }
  ~tensor_store_scope() { active_tensor_store() = previous_; }
  tensor_store_scope(const tensor_store_scope&) = delete;
  tensor_store_scope& operator=(const tensor_store_scope&) = delete;

private:
  tensor_store* previous_;
};

/// Makes no store active for its lifetime: while a task's own code runs, what it serializes
/// stays inline, whatever store the call's arguments and outcome go through.
class tensor_store_pause {
public:
  tensor_store_pause() : previous_(active_tensor_store()) { active_tensor_store() = nullptr; }
  ~tensor_store_pause() { active_tensor_store() = previous_; }
  tensor_store_pause(const tensor_store_pause&) = delete;
  tensor_store_pause& operator=(const tensor_store_pause&) = delete;

private:
  tensor_store* previous_;
};

} // namespace troupe::detail
