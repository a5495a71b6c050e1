// The MPI engine: a communicator split from MPI_COMM_WORLD, whose ranks must be the world's
// (the world comes from mpirun's environment). Collectives are MPI's blocking ones (OpenMPI's
// non-blocking collectives take another, slower path: half the speed at 1 MiB and 64 MiB here),
// watched by a thread that aborts the job when one outlasts the group's timeout: MPI cannot
// cancel a collective, and aborting is what MPI does when a rank dies anyway. Point-to-point
// messages are non-blocking, polled with the deadline: a receive that times out is cancelled
// and throws timeout_error.
#include "collective_engine.hpp"
#include "element_dispatch.hpp"
#include "group_state.hpp"
#include "mpi_shape_check.hpp"
#include "troupe/actors/detail/readable.hpp"
#include "world_core.hpp"

#include "troupe/actors/error.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

namespace troupe::detail {

namespace {

/// Initializes MPI once per process (with MPI_THREAD_MULTIPLE, since groups run
/// on several threads), unless the program did; troupe then finalizes it at
/// exit.
void ensure_mpi() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = 0;
    if (initialized) {
      MPI_Query_thread(&provided);
    } else {
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      std::atexit([] {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
          MPI_Finalize();
      });
    }
    if (provided < MPI_THREAD_MULTIPLE)
      throw invalid_argument("the MPI backend needs MPI_THREAD_MULTIPLE; this MPI provides "
                             "level " +
                             std::to_string(provided) +
                             " (a program that initializes MPI itself must ask for it)");
  });
}

template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, bool>)
    return MPI_C_BOOL;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return MPI_INT8_T;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return MPI_UINT8_T;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return MPI_INT16_T;
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return MPI_UINT16_T;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return MPI_UINT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else
    return MPI_LONG_DOUBLE;
}

MPI_Op mpi_op(element_type type, reduce_op op) {
  if (type == element_type::boolean)
    return op == reduce_op::sum || op == reduce_op::max ? MPI_LOR : MPI_LAND;
  switch (op) {
  case reduce_op::sum: return MPI_SUM;
  case reduce_op::product: return MPI_PROD;
  case reduce_op::min: return MPI_MIN;
  case reduce_op::max: return MPI_MAX;
  }
  return MPI_SUM;
}

[[noreturn]] void abort_job(const std::string& group, const char* operation,
                            std::chrono::milliseconds timeout) {
  std::cerr << "troupe: " << group << ": " << operation << " did not finish within "
            << timeout.count()
            << " ms and MPI cannot cancel it: aborting the job, as MPI does when a rank dies"
            << std::endl;
  MPI_Abort(MPI_COMM_WORLD, 70);
  std::abort();
}

/// Watches the group's running collective (one runs at a time): a thread that wakes a few times
/// per timeout, so that starting and ending an operation costs two atomic stores, not a wake-up.
class collective_watch {
public:
  collective_watch(std::string group, std::chrono::milliseconds timeout)
    : group_(std::move(group)), timeout_(timeout), thread_([this] { watch(); }) {}
  ~collective_watch() {
    {
      std::lock_guard guard{mutex_};
      stopping_ = true;
    }
    stop_.notify_all();
    thread_.join();
  }
  collective_watch(const collective_watch&) = delete;
  collective_watch& operator=(const collective_watch&) = delete;

  void begin(const char* operation) noexcept {
    operation_.store(operation, std::memory_order_relaxed);
    started_.store(clock_type::now().time_since_epoch().count(), std::memory_order_release);
  }
  void end() noexcept { started_.store(0, std::memory_order_release); }

private:
  using clock_type = std::chrono::steady_clock;

  void watch() {
    const auto period =
      std::clamp(timeout_ / 4, std::chrono::milliseconds{10}, std::chrono::milliseconds{1000});
    std::unique_lock lock{mutex_};
    while (!stop_.wait_for(lock, period, [&] { return stopping_; })) {
      const auto started = started_.load(std::memory_order_acquire);
      if (started != 0 &&
          clock_type::now() - clock_type::time_point{clock_type::duration{started}} > timeout_)
        abort_job(group_, operation_.load(std::memory_order_relaxed), timeout_);
    }
  }

  const std::string group_;
  const std::chrono::milliseconds timeout_;
  std::atomic<const char*> operation_{""};
  std::atomic<clock_type::rep> started_{0}; // 0: no collective is running
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

/// Watches one collective while it lives.
class watched {
public:
  watched(collective_watch& watch, const char* operation) : watch_(watch) {
    watch_.begin(operation);
  }
  ~watched() { watch_.end(); }
  watched(const watched&) = delete;
  watched& operator=(const watched&) = delete;

private:
  collective_watch& watch_;
};

class mpi_engine final : public collective_engine {
public:
  mpi_engine(MPI_Comm comm, const engine_setup& setup)
    : comm_(comm), group_(setup.group), timeout_(setup.options.timeout),
      watch_(setup.group, setup.options.timeout) {
    void* bound = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found);
    tag_bound_ = found ? *static_cast<int*>(bound) : 32767;
    MPI_Comm_dup(comm_, &direct_);
  }
  ~mpi_engine() override {
    MPI_Comm_free(&direct_);
    MPI_Comm_free(&comm_);
  }

  void all_reduce(const tensor_view& t, reduce_op op, std::uint32_t) override {
    const int n = count(t.count, "all_reduce");
    watched running{watch_, "all_reduce"};
    MPI_Allreduce(MPI_IN_PLACE, t.data, n, datatype(t.type), mpi_op(t.type, op), comm_);
  }

  std::optional<check_outcome> check_fused(const void* mine, std::size_t bytes,
                                           const tensor_view* reduce, reduce_op op) override {
    watched running{watch_, "the shape check"};
    return mpi_shape_check(comm_, mine, bytes, reduce, op);
  }

  void reduce(const tensor_view& t, reduce_op op, int root, std::uint32_t) override {
    const int n = count(t.count, "reduce");
    const bool at_root = rank() == root;
    watched running{watch_, "reduce"};
    MPI_Reduce(at_root ? MPI_IN_PLACE : t.data, at_root ? t.data : nullptr, n, datatype(t.type),
               mpi_op(t.type, op), root, comm_);
  }

  void broadcast(const tensor_view& t, int root, std::uint32_t) override {
    const int n = count(t.count, "broadcast");
    watched running{watch_, "broadcast"};
    MPI_Bcast(t.data, n, datatype(t.type), root, comm_);
  }

  // MPI's gathers take one contiguous buffer, which troupe's lists of tensors are not: staging
  // 2 x 64 MiB and copying it out took six times MPI_Allgather's time. Messages on a
  // communicator of their own go straight into each output instead.
  void all_gather(const void* in, std::span<void* const> outputs, std::size_t bytes,
                  std::uint32_t) override {
    exchange(in, outputs, bytes, -1, "all_gather");
  }

  void gather(const void* in, std::span<void* const> outputs, std::size_t bytes, int root,
              std::uint32_t) override {
    exchange(in, outputs, bytes, root, "gather");
  }

  void scatter(std::span<const void* const> inputs, void* out, std::size_t bytes, int root,
               std::uint32_t) override {
    const int n = count(bytes, "scatter");
    std::vector<MPI_Request> requests;
    if (rank() == root) {
      for (int r = 0; r < size(); ++r) {
        if (r == root) {
          std::memcpy(out, inputs[static_cast<std::size_t>(r)], bytes);
          continue;
        }
        requests.emplace_back();
        MPI_Isend(inputs[static_cast<std::size_t>(r)], n, MPI_BYTE, r, 0, direct_,
                  &requests.back());
      }
    } else {
      requests.emplace_back();
      MPI_Irecv(out, n, MPI_BYTE, root, 0, direct_, &requests.back());
    }
    watched running{watch_, "scatter"};
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  void barrier(std::uint32_t) override {
    watched running{watch_, "barrier"};
    MPI_Barrier(comm_);
  }

  void send(std::span<const std::byte> header, std::span<const std::byte> body, int dst,
            int tag) override {
    MPI_Request requests[2];
    MPI_Isend(header.data(), count(header.size(), "send"), MPI_BYTE, dst, header_tag(tag), comm_,
              &requests[0]);
    MPI_Isend(body.data(), count(body.size(), "send"), MPI_BYTE, dst, header_tag(tag) + 1, comm_,
              &requests[1]);
    finish(requests[0], "send", false);
    finish(requests[1], "send", false);
  }

  int recv_header(std::span<std::byte> header, int src, int tag) override {
    MPI_Request request;
    MPI_Irecv(header.data(), count(header.size(), "recv"), MPI_BYTE,
              src == collective_group::any_source ? MPI_ANY_SOURCE : src, header_tag(tag), comm_,
              &request);
    return finish(request, "recv");
  }

  void recv_body(std::span<std::byte> body, int src, int tag) override {
    MPI_Request request;
    MPI_Irecv(body.data(), count(body.size(), "recv"), MPI_BYTE, src, header_tag(tag) + 1, comm_,
              &request);
    finish(request, "recv");
  }

  void abort() noexcept override { aborted_ = true; }

private:
  int rank() const {
    int r = 0;
    MPI_Comm_rank(comm_, &r);
    return r;
  }
  int size() const {
    int s = 0;
    MPI_Comm_size(comm_, &s);
    return s;
  }

  static MPI_Datatype datatype(element_type type) {
    return with_element_type(type, []<class T>() { return mpi_type<T>(); });
  }

  int count(std::size_t n, const char* operation) const {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw invalid_argument(group_ + ": " + operation + " of " + std::to_string(n) +
                             " elements is more than MPI takes in one call (" +
                             std::to_string(INT_MAX) + ")");
    return static_cast<int>(n);
  }

  int header_tag(int tag) const {
    if (tag < 0 || tag > (tag_bound_ - 1) / 2)
      throw invalid_argument(group_ + ": tag " + std::to_string(tag) +
                             " is out of range for MPI: from 0 to " +
                             std::to_string((tag_bound_ - 1) / 2));
    return 2 * tag;
  }

  /// Everyone's (`root` < 0) or `root`'s outputs[r] get member r's `in`.
  void exchange(const void* in, std::span<void* const> outputs, std::size_t bytes, int root,
                const char* operation) {
    const int n = count(bytes, operation);
    const int me = rank();
    std::vector<MPI_Request> requests;
    for (int r = 0; r < size(); ++r) {
      if (r == me)
        continue;
      if (root < 0 || root == me) {
        requests.emplace_back();
        MPI_Irecv(outputs[static_cast<std::size_t>(r)], n, MPI_BYTE, r, 0, direct_,
                  &requests.back());
      }
      if (root < 0 || root == r) {
        requests.emplace_back();
        MPI_Isend(in, n, MPI_BYTE, r, 0, direct_, &requests.back());
      }
    }
    if ((root < 0 || root == me) && outputs[static_cast<std::size_t>(me)] != in)
      std::memcpy(outputs[static_cast<std::size_t>(me)], in, bytes);
    watched running{watch_, operation};
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  /// Polls `request` until it completes; returns the source it came from. A receive that
  /// outlasts the deadline, or is aborted, is cancelled; a send (MPI cannot cancel one
  /// reliably) aborts the job.
  int finish(MPI_Request& request, const char* operation, bool cancellable = true) {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    MPI_Status status;
    for (unsigned spins = 1;; ++spins) {
      int done = 0;
      MPI_Test(&request, &done, &status);
      if (done)
        return status.MPI_SOURCE;
      if (cancellable && aborted_) {
        cancel(request);
        throw state_error(group_ + " is destroyed");
      }
      if (spins % 256 != 0)
        continue;
      if (std::chrono::steady_clock::now() >= deadline) {
        if (!cancellable)
          abort_job(group_, operation, timeout_);
        cancel(request);
        throw timeout_error(group_ + ": " + operation + " did not finish within " +
                            readable(timeout_));
      }
      std::this_thread::yield();
    }
  }

  static void cancel(MPI_Request& request) {
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }

  MPI_Comm comm_;
  MPI_Comm direct_; // the gathers' messages, apart from the members' own sends and receives
  std::string group_;
  std::chrono::milliseconds timeout_;
  int tag_bound_ = 32767;
  std::atomic<bool> aborted_{false};
  collective_watch watch_;
};

} // namespace

std::unique_ptr<collective_engine> make_mpi_engine(const std::shared_ptr<world_core>& world,
                                                   const engine_setup& setup, bool member) {
  ensure_mpi();
  int mpi_rank = 0;
  int mpi_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  if (mpi_rank != world->options.rank || mpi_size != world->options.world_size)
    throw invalid_argument(setup.group +
                           ": the MPI backend needs a world started by mpirun "
                           "or srun whose ranks are "
                           "MPI's; this member is world rank " +
                           std::to_string(world->options.rank) + " of " +
                           std::to_string(world->options.world_size) + " but MPI rank " +
                           std::to_string(mpi_rank) + " of " + std::to_string(mpi_size));
  // MPI_Comm_split waits for every MPI rank with no deadline: meet them all first at rank 0's
  // rendezvous, which has one (timeout_error, and nobody splits, if one does not come).
  create_group(world, setup.rendezvous + ".mpi", world->live_members(), setup.options.timeout)
    .destroy();
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, member ? setup.rank : 0, &comm);
  if (!member)
    return nullptr;
  return std::make_unique<mpi_engine>(comm, setup);
}

} // namespace troupe::detail
