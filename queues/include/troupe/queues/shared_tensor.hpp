// troupe::shared_tensor<T>: a tensor that lives in shared memory from the start, so handing it
// to another process through a queue copies nothing: the receiver maps the same memory.
//
//   troupe::shared_tensor<float> frame{{1080, 1920, 3}};    // allocated in a segment
//   frame.view() = camera.read();                            // an xtensor view over it
//   auto q = troupe::queue<troupe::shared_tensor<float>>::create("frames");
//   q.put(frame);                                            // a handle travels, not the bytes
//   // receiver: auto f = q.get(); f.view() ... same memory, any size, microseconds
//
// Copies of a shared_tensor share the memory (like a shared_ptr); a tensor moved from is left
// empty. The memory is freed when the last holder, in any process, drops it, or has died (see
// shm_segment.hpp).
//
// Each shared_tensor is a segment of its own, made and mapped with system calls: worth it from
// about a megabyte (1 MiB: twice copy mode's rate here), not for small tensors (1 KiB: some
// 90 k messages a second against copy mode's 2 M; see BENCHMARKS.md, queue_throughput).
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/queues/detail/segment_store.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <xtensor/xadapt.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

/// A tensor allocated in shared memory from the start (torch.multiprocessing's shared tensors): it
/// crosses queues and process pools without a copy, the receiver mapping the same memory, and is
/// freed when its last holder, in any process, drops it.
template <class T>
requires std::is_arithmetic_v<T>
class shared_tensor {
public:
  /// Its element type.
  using value_type = T;
  /// Its shape: one extent an axis.
  using shape_type = std::vector<std::size_t>;

  /// An empty, unallocated tensor (what a receiver default-constructs before decoding): no
  /// shape, size() 0, data() null; view() and segment() throw state_error, as they do on a
  /// tensor moved from, which is left empty.
  shared_tensor() = default;

  /// A new zero-filled tensor of `shape` in its own segment, held by this process.
  explicit shared_tensor(shape_type shape)
    : shape_(std::move(shape)), segment_(shm_segment::create(bytes_for(shape_))) {
    std::memset(segment_->data(), 0, segment_->size());
  }

  /// Another holder of the same memory (no copy).
  shared_tensor(const shared_tensor&) = default;
  /// Holds `other`'s memory instead (no copy).
  shared_tensor& operator=(const shared_tensor&) = default;
  /// Takes `other`'s memory; `other` is left empty.
  shared_tensor(shared_tensor&& other) noexcept
    : shape_(std::exchange(other.shape_, {})), segment_(std::exchange(other.segment_, {})) {}
  /// Takes `other`'s memory; `other` is left empty.
  shared_tensor& operator=(shared_tensor&& other) noexcept {
    shape_ = std::exchange(other.shape_, {});
    segment_ = std::exchange(other.segment_, {});
    return *this;
  }

  /// Its shape.
  const shape_type& shape() const noexcept { return shape_; }
  /// Its elements: the product of its shape (0 when empty).
  std::size_t size() const noexcept {
    if (!segment_)
      return 0;
    return std::accumulate(shape_.begin(), shape_.end(), std::size_t{1}, std::multiplies<>{});
  }
  /// Its elements, row-major, in shared memory; null when empty.
  T* data() const noexcept { return segment_ ? reinterpret_cast<T*>(segment_->data()) : nullptr; }

  /// An xtensor view over the shared memory (row-major).
  auto view() const {
    return xt::adapt(reinterpret_cast<T*>(segment().data()), size(), xt::no_ownership(), shape_);
  }

  /// The segment holding the elements.
  const shm_segment& segment() const {
    if (!segment_)
      detail::throw_empty_handle("troupe::shared_tensor", "a view of its memory");
    return *segment_;
  }

  template <class Archive>
  void save(Archive& ar) const {
    auto* active = detail::active_tensor_store();
    auto* store = active == nullptr ? nullptr : active->outgoing_segments();
    if (store == nullptr || !segment_)
      throw serialization_error(
        "a shared_tensor can only be sent through a troupe::queue or process pool");
    store->carry(*segment_);
    ar(segment_->name(), shape_);
  }

  template <class Archive>
  void load(Archive& ar) {
    std::string name;
    ar(name, shape_);
    auto* active = detail::active_tensor_store();
    auto* store = active == nullptr ? nullptr : active->incoming_segments();
    if (store == nullptr)
      throw serialization_error(
        "a shared_tensor can only be received from a troupe::queue or process pool");
    auto segment = store->adopt(name);
    if (segment.size() != bytes_for(shape_))
      throw serialization_error("segment " + name + " holds " + std::to_string(segment.size()) +
                                " bytes, the shape needs " + std::to_string(bytes_for(shape_)));
    segment_.emplace(std::move(segment));
  }

private:
  static std::size_t bytes_for(const shape_type& shape) {
    std::size_t elements = 1;
    for (auto extent : shape)
      if (__builtin_mul_overflow(elements, extent, &elements))
        throw invalid_argument("shared_tensor shape overflows");
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(elements, sizeof(T), &bytes))
      throw invalid_argument("shared_tensor shape overflows");
    return bytes;
  }

  shape_type shape_;
  std::optional<shm_segment> segment_;
};

} // namespace troupe
