#include "collective_core.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace troupe::detail {

namespace {

const char* kind_name(collective_kind kind) {
  static constexpr std::array<const char*, 9> names{"send",       "recv",    "broadcast",
                                                    "all_reduce", "reduce",  "all_gather",
                                                    "gather",     "scatter", "barrier"};
  return names[static_cast<std::size_t>(kind)];
}

bool is_point_to_point(collective_kind kind) {
  return kind == collective_kind::send || kind == collective_kind::recv;
}

bool is_rooted(collective_kind kind) {
  return kind == collective_kind::broadcast || kind == collective_kind::reduce ||
         kind == collective_kind::gather || kind == collective_kind::scatter;
}

/// What a member says of an operation before it runs: the same on every member,
/// or the members disagree. Fixed size, so the engine moves it as bytes.
struct signature {
  static constexpr std::size_t max_dims = 8;
  std::uint8_t kind = 0, type = 0, op = 0, unused = 0;
  std::int32_t root = -1;
  std::uint64_t count = 0;
  std::uint64_t ndim = 0;
  std::array<std::uint64_t, max_dims> dims{};

  static signature of(const collective_call& call) {
    signature s;
    s.kind = static_cast<std::uint8_t>(call.kind);
    s.type = static_cast<std::uint8_t>(call.tensor.type);
    if (call.kind == collective_kind::all_reduce || call.kind == collective_kind::reduce)
      s.op = static_cast<std::uint8_t>(call.op);
    s.root = is_rooted(call.kind) ? call.peer : -1;
    s.count = call.tensor.count;
    s.ndim = call.tensor.shape.size();
    for (std::size_t i = 0; i < std::min(s.ndim, std::uint64_t{max_dims}); ++i)
      s.dims[i] = call.tensor.shape[i];
    return s;
  }

  bool same_tensor(const signature& other) const {
    return type == other.type && count == other.count && ndim == other.ndim && dims == other.dims;
  }
  bool operator==(const signature&) const = default;

  std::string describe_tensor() const {
    tensor_view view;
    view.type = static_cast<element_type>(type);
    view.shape.assign(dims.begin(), dims.begin() + std::min(ndim, std::uint64_t{max_dims}));
    auto text = view.describe();
    if (ndim > max_dims)
      text += " (" + std::to_string(ndim) + " dimensions, " + std::to_string(count) + " elements)";
    return text;
  }

  std::string describe() const {
    static constexpr std::array<const char*, 4> ops{"sum", "product", "min", "max"};
    auto kind_of = static_cast<collective_kind>(kind);
    std::string text = kind_name(kind_of);
    if (kind_of == collective_kind::barrier)
      return text;
    text += " of " + describe_tensor();
    if (kind_of == collective_kind::all_reduce || kind_of == collective_kind::reduce)
      text += std::string{" ("} + ops[op] + ")";
    if (root >= 0)
      text += " rooted at " + std::to_string(root);
    return text;
  }
};

std::span<const std::byte> bytes_of(const signature& s) {
  return {reinterpret_cast<const std::byte*>(&s), sizeof s};
}

/// Every member's signature, through the engine: invalid_argument naming both sides of the
/// first disagreement.
void compare_signatures(collective_engine& engine, const engine_setup& setup, const signature& mine,
                        std::uint32_t sequence) {
  const auto size = setup.world_ranks.size();
  std::vector<signature> all(size);
  std::vector<void*> outputs;
  for (auto& each : all)
    outputs.push_back(&each);
  engine.exchange_signatures(&mine, outputs, sizeof mine, sequence);
  for (std::size_t r = 0; r < size; ++r)
    if (!(all[r] == all[0]))
      throw invalid_argument(setup.group + ": the members disagree: rank 0 calls " +
                             all[0].describe() + ", rank " + std::to_string(r) + " calls " +
                             all[r].describe());
}

} // namespace

collective_core::collective_core(std::unique_ptr<collective_engine> engine, engine_setup setup)
  : setup(std::move(setup)), engine_(std::move(engine)) {}

collective_core::~collective_core() { destroy(); }

void collective_core::validate(const collective_call& call) {
  const int size = static_cast<int>(setup.world_ranks.size());
  // Spelled only when something is wrong: this runs before every operation.
  const auto refuse = [&](const std::string& why) {
    throw invalid_argument(setup.group + ": " + kind_name(call.kind) + ": " + why);
  };
  {
    std::lock_guard guard{mutex_};
    if (destroyed_)
      throw state_error(setup.group + " is destroyed");
    if (!failure_.empty())
      throw state_error(setup.group + " broke earlier (" + failure_ +
                        "); destroy it and create another");
  }
  const bool any_allowed = call.kind == collective_kind::recv;
  if (is_point_to_point(call.kind) || is_rooted(call.kind)) {
    const bool any = any_allowed && call.peer == collective_group::any_source;
    if (!any && (call.peer < 0 || call.peer >= size))
      refuse("rank " + std::to_string(call.peer) + " is not in the group (ranks 0 to " +
             std::to_string(size - 1) + ")");
    if (is_point_to_point(call.kind) && call.peer == setup.rank)
      refuse("rank " + std::to_string(call.peer) + " is this member itself");
  }
  if (is_point_to_point(call.kind) && call.tag < 0)
    refuse("tag " + std::to_string(call.tag) + " is negative");
  const bool takes_list = call.kind == collective_kind::all_gather ||
                          (call.kind == collective_kind::gather && call.peer == setup.rank) ||
                          (call.kind == collective_kind::scatter && call.peer == setup.rank);
  if (!takes_list)
    return;
  const char* role = call.kind == collective_kind::scatter ? "input" : "output";
  if (call.list.size() != static_cast<std::size_t>(size))
    refuse(std::to_string(call.list.size()) + " " + role + "s for a group of " +
           std::to_string(size));
  for (std::size_t r = 0; r < call.list.size(); ++r)
    if (call.list[r].type != call.tensor.type || call.list[r].shape != call.tensor.shape)
      refuse(std::string{role} + " " + std::to_string(r) + " is " + call.list[r].describe() +
             ", the tensor " + call.tensor.describe());
}

int collective_core::run(collective_call call) {
  validate(call);
  if (is_point_to_point(call.kind))
    return run_point_to_point(call);
  {
    std::unique_lock lock{mutex_};
    turn_.wait(lock, [&] { return destroyed_ || (!busy_ && queue_.empty()); });
    if (destroyed_)
      throw state_error(setup.group + " is destroyed");
    busy_ = true;
    ++inside_;
  }
  struct release_turn {
    collective_core& core;
    ~release_turn() {
      std::lock_guard guard{core.mutex_};
      core.busy_ = false;
      --core.inside_;
      core.turn_.notify_all();
    }
  } release{*this};
  execute(call);
  return -1;
}

collective_handle collective_core::start(collective_call call) {
  validate(call);
  if (is_point_to_point(call.kind))
    return detach([this, call] { return run_point_to_point(call); });
  auto op = std::make_shared<collective_op>();
  std::lock_guard guard{mutex_};
  if (destroyed_)
    throw state_error(setup.group + " is destroyed");
  queue_.push_back({std::move(call), op});
  if (!queue_thread_.joinable())
    queue_thread_ = std::thread{[this] { serve_queue(); }};
  turn_.notify_all();
  return collective_handle{op};
}

void collective_core::serve_queue() {
  std::unique_lock lock{mutex_};
  for (;;) {
    turn_.wait(lock, [&] { return destroyed_ || (!busy_ && !queue_.empty()); });
    if (destroyed_) {
      for (auto& item : queue_)
        item.op->finish(
          -1, std::make_exception_ptr(state_error(setup.group + " was destroyed before " +
                                                  kind_name(item.call.kind) + " could run")));
      queue_.clear();
      return;
    }
    auto item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    ++inside_;
    lock.unlock();
    std::exception_ptr error;
    try {
      execute(item.call);
    } catch (...) {
      error = std::current_exception();
    }
    item.op->finish(-1, error);
    lock.lock();
    busy_ = false;
    --inside_;
    turn_.notify_all();
  }
}

void collective_core::execute(const collective_call& call) {
  // Only the holder of the turn gets here, so the sequence needs no lock of its
  // own.
  const std::uint32_t sequence = sequence_;
  sequence_ += 2;
  try {
    if (!setup.options.check_shapes || !check_ran_it(call, sequence))
      run_collective(call, sequence + 1);
  } catch (const invalid_argument&) {
    throw; // found before the engine moved anything: the group still works
  } catch (const std::exception& e) {
    broken(e);
    throw;
  }
}

bool collective_core::check_ran_it(const collective_call& call, std::uint32_t sequence) {
  const auto mine = signature::of(call);
  const auto* reduce = call.kind == collective_kind::all_reduce ? &call.tensor : nullptr;
  if (const auto outcome = engine_->check_fused(&mine, sizeof mine, reduce, call.op)) {
    if (*outcome != check_outcome::disagreed)
      return *outcome == check_outcome::agreed_and_reduced;
    sequence += 1; // the collective's own: it will not run, and the members must learn why
  }
  compare_signatures(*engine_, setup, mine, sequence);
  return false;
}

void collective_core::run_collective(const collective_call& call, std::uint32_t sequence) {
  const auto& t = call.tensor;
  std::vector<void*> list;
  for (const auto& each : call.list)
    list.push_back(each.data);
  switch (call.kind) {
  case collective_kind::broadcast: engine_->broadcast(t, call.peer, sequence); break;
  case collective_kind::all_reduce: engine_->all_reduce(t, call.op, sequence); break;
  case collective_kind::reduce: engine_->reduce(t, call.op, call.peer, sequence); break;
  case collective_kind::all_gather: engine_->all_gather(t.data, list, t.bytes(), sequence); break;
  case collective_kind::gather:
    if (call.peer != setup.rank)
      list.clear();
    engine_->gather(t.data, list, t.bytes(), call.peer, sequence);
    break;
  case collective_kind::scatter: {
    std::vector<const void*> inputs(list.begin(), list.end());
    if (call.peer != setup.rank)
      inputs.clear();
    engine_->scatter(inputs, t.data, t.bytes(), call.peer, sequence);
    break;
  }
  case collective_kind::barrier: engine_->barrier(sequence); break;
  case collective_kind::send:
  case collective_kind::recv: break; // not collectives: run_point_to_point
  }
}

int collective_core::run_point_to_point(const collective_call& call) {
  {
    std::lock_guard guard{mutex_};
    if (destroyed_)
      throw state_error(setup.group + " is destroyed");
    ++inside_;
  }
  struct leave {
    collective_core& core;
    ~leave() {
      std::lock_guard guard{core.mutex_};
      --core.inside_;
      core.turn_.notify_all();
    }
  } left{*this};
  try {
    if (call.kind == collective_kind::recv)
      return receive(call);
    const auto header = signature::of(call);
    engine_->send(bytes_of(header),
                  {static_cast<const std::byte*>(call.tensor.data), call.tensor.bytes()}, call.peer,
                  call.tag);
    return -1;
  } catch (const invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    broken(e);
    throw;
  }
}

int collective_core::receive(const collective_call& call) {
  // A header and its body are taken together, so two receives on one tag (from
  // any member) cannot take each other's bodies.
  std::lock_guard one_at_a_time{receive_lock(call.tag)};
  signature header;
  const int source = engine_->recv_header({reinterpret_cast<std::byte*>(&header), sizeof header},
                                          call.peer, call.tag);
  const auto mine = signature::of(call);
  if (header.same_tensor(mine)) {
    engine_->recv_body({static_cast<std::byte*>(call.tensor.data), call.tensor.bytes()}, source,
                       call.tag);
    return source;
  }
  // Take the body anyway, so the sender's send ends and the next message on
  // this tag is whole.
  std::vector<std::byte> unwanted(header.count *
                                  element_size(static_cast<element_type>(header.type)));
  engine_->recv_body(unwanted, source, call.tag);
  throw invalid_argument(setup.group + ": recv on tag " + std::to_string(call.tag) + ": rank " +
                         std::to_string(source) + " sent " + header.describe_tensor() +
                         ", this member's tensor is " + call.tensor.describe());
}

collective_handle collective_core::detach(std::function<int()> work) {
  auto op = std::make_shared<collective_op>();
  std::lock_guard guard{threads_mutex_};
  threads_.remove_if([](detached& each) {
    if (!each.op->ready())
      return false;
    each.thread.join(); // it has finished its operation: only its return is left
    return true;
  });
  threads_.push_back({op, std::thread{[op, work = std::move(work)] {
                        int source = -1;
                        std::exception_ptr error;
                        try {
                          source = work();
                        } catch (...) {
                          error = std::current_exception();
                        }
                        op->finish(source, error);
                      }}});
  return collective_handle{op};
}

std::mutex& collective_core::receive_lock(int tag) {
  std::lock_guard guard{threads_mutex_};
  return receive_locks_[tag];
}

void collective_core::broken(const std::exception& why) noexcept {
  std::lock_guard guard{mutex_};
  if (failure_.empty() && !destroyed_)
    failure_ = why.what();
}

void collective_core::destroy() noexcept {
  std::lock_guard one_destroyer{destroy_mutex_};
  if (!engine_)
    return;
  {
    std::lock_guard guard{mutex_};
    destroyed_ = true;
    turn_.notify_all();
  }
  if (engine_)
    engine_->abort();
  if (queue_thread_.joinable() && queue_thread_.get_id() != std::this_thread::get_id())
    queue_thread_.join();
  {
    std::unique_lock lock{mutex_};
    turn_.wait(lock, [&] { return inside_ == 0; });
  }
  std::list<detached> threads;
  {
    std::lock_guard guard{threads_mutex_};
    threads.swap(threads_);
  }
  for (auto& each : threads)
    each.thread.join();
  engine_.reset();
}

} // namespace troupe::detail
