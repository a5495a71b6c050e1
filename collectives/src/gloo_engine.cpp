// The gloo engine: the members' gloo context joined through the world's store,
// on gloo's TCP transport. gloo's own algorithms run the collectives that write
// one buffer; all_gather and gather post one unbound buffer per output so
// nothing is staged and copied twice.
#include "collective_engine.hpp"
#include "element_dispatch.hpp"
#include "gloo_address.hpp"
#include "gloo_mesh.hpp"
#include "troupe/actors/detail/readable.hpp"
#include "world_core.hpp"
#include "world_store.hpp"

#include "group_state.hpp"
#include "troupe/actors/error.hpp"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>

namespace troupe::detail {

namespace {

constexpr std::uint8_t point_to_point_prefix = 0x70; // above every prefix gloo's algorithms use
constexpr std::uint8_t gathering_prefix = 0x71;

using reduce_function = std::function<void(void*, const void*, const void*, std::size_t)>;

/// gloo's own element-wise functions (what torch hands it), and for bool the logical ones.
template <class T>
reduce_function reducer(reduce_op op) {
  using raw = void (*)(void*, const void*, const void*, std::size_t);
  if constexpr (std::is_same_v<T, bool>) {
    if (op == reduce_op::sum || op == reduce_op::max)
      return [](void* c, const void* a, const void* b, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i)
          static_cast<bool*>(c)[i] =
            static_cast<const bool*>(a)[i] || static_cast<const bool*>(b)[i];
      };
    return [](void* c, const void* a, const void* b, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i)
        static_cast<bool*>(c)[i] = static_cast<const bool*>(a)[i] && static_cast<const bool*>(b)[i];
    };
  } else {
    switch (op) {
    case reduce_op::sum: return static_cast<raw>(&gloo::sum<T>);
    case reduce_op::product: return static_cast<raw>(&gloo::product<T>);
    case reduce_op::min: return static_cast<raw>(&gloo::min<T>);
    case reduce_op::max: return static_cast<raw>(&gloo::max<T>);
    }
    return static_cast<raw>(&gloo::sum<T>);
  }
}

/// gloo writes to its sockets without MSG_NOSIGNAL, so a member that dies
/// mid-operation would kill this process with SIGPIPE instead of failing the
/// operation with peer_lost. Ignore it (as Python, torch's usual host, does),
/// unless the program has a handler of its own.
void ignore_broken_pipes() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    std::signal(SIGPIPE, SIG_IGN);
}

/// Once a process: every group of a TLS world beyond loopback would say the same.
void warn_unencrypted() {
  static std::once_flag warned;
  std::call_once(warned, [] {
    std::cerr << "troupe: WARNING: gloo's traffic is not encrypted, though the world's is (TLS "
                 "covers the world's calls, not its collective groups)\n";
  });
}

class gloo_engine final : public collective_engine {
public:
  gloo_engine(const std::shared_ptr<world_core>& world, const engine_setup& setup)
    : world_(world), world_ranks_(setup.world_ranks), group_(setup.group),
      timeout_(setup.options.timeout) {
    ignore_broken_pipes();
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    const auto address = gloo_address(*world, setup.options);
    if (world->tls && !is_loopback(address))
      warn_unencrypted();
    auto device = gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr{address.c_str()});
    context_ = std::make_shared<gloo_mesh>(setup.rank, static_cast<int>(setup.world_ranks.size()));
    context_->setTimeout(timeout_);
    const auto check_members = [world, ranks = setup.world_ranks, group = group_] {
      if (const auto gone = world->first_gone(ranks))
        throw peer_lost(group + ": " + world->label(*gone) + " is gone: the group cannot form");
    };
    world_store store{rendezvous_group(world, setup, deadline), deadline, check_members};
    try {
      guarded("joining", [&] { context_->connect(store, device, deadline); });
    } catch (const error& e) {
      check_members(); // a member the world has seen go is the reason, whatever gloo says
      if (std::chrono::steady_clock::now() >= deadline)
        throw timeout_error(group_ + " did not form within " + readable(timeout_) + " (" +
                            e.what() + ")");
      throw;
    }
    store.close();
  }

  void all_reduce(const tensor_view& t, reduce_op op, std::uint32_t sequence) override {
    guarded("all_reduce", [&] {
      gloo::AllreduceOptions options{context_};
      with_element_type(t.type, [&]<class T>() {
        options.setOutput(static_cast<T*>(t.data), t.count);
        options.setReduceFunction(reducer<T>(op));
      });
      options.setTag(sequence);
      options.setTimeout(timeout_);
      gloo::allreduce(options);
    });
  }

  void reduce(const tensor_view& t, reduce_op op, int root, std::uint32_t sequence) override {
    guarded("reduce", [&] {
      gloo::ReduceOptions options{context_};
      with_element_type(t.type, [&]<class T>() {
        options.setOutput(static_cast<T*>(t.data), t.count);
        options.setReduceFunction(reducer<T>(op));
      });
      options.setRoot(root);
      options.setTag(sequence);
      options.setTimeout(timeout_);
      gloo::reduce(options);
    });
  }

  void broadcast(const tensor_view& t, int root, std::uint32_t sequence) override {
    guarded("broadcast", [&] {
      gloo::BroadcastOptions options{context_};
      options.setOutput(static_cast<char*>(t.data), t.bytes());
      options.setRoot(root);
      options.setTag(sequence);
      options.setTimeout(timeout_);
      gloo::broadcast(options);
    });
  }

  void all_gather(const void* in, std::span<void* const> outputs, std::size_t bytes,
                  std::uint32_t sequence) override {
    guarded("all_gather", [&] { exchange(in, outputs, bytes, -1, sequence); });
  }

  void gather(const void* in, std::span<void* const> outputs, std::size_t bytes, int root,
              std::uint32_t sequence) override {
    guarded("gather", [&] { exchange(in, outputs, bytes, root, sequence); });
  }

  void scatter(std::span<const void* const> inputs, void* out, std::size_t bytes, int root,
               std::uint32_t sequence) override {
    guarded("scatter", [&] {
      gloo::ScatterOptions options{context_};
      std::vector<char*> pointers;
      for (const void* input : inputs)
        pointers.push_back(static_cast<char*>(const_cast<void*>(input)));
      if (context_->rank == root)
        options.setInputs(pointers.data(), pointers.size(), bytes);
      options.setOutput(static_cast<char*>(out), bytes);
      options.setRoot(root);
      options.setTag(sequence);
      options.setTimeout(timeout_);
      gloo::scatter(options);
    });
  }

  /// Through the world's rank 0 (a rendezvous that gathers the signatures), not gloo: the
  /// check's messages between gloo's own lengthened a 1 MiB all_reduce by about a millisecond
  /// on loopback, where a pause of the same length before it cost nothing (BENCHMARKS.md).
  void exchange_signatures(const void* in, std::span<void* const> outputs, std::size_t bytes,
                           std::uint32_t sequence) override {
    const auto* first = static_cast<const char*>(in);
    // Met where the world's rendezvous are: rank 0, or the coordinator of a world on a store.
    auto reply = world_->send(
      coordinator_role,
      checked_rendezvous_message::make(
        group_ + ": shape check " + std::to_string(sequence), to_wire(serialize(world_ranks_)),
        static_cast<std::int32_t>(world_->options.rank), wire_bytes(first, first + bytes)),
      timeout_);
    const auto all = deserialize<std::vector<wire_bytes>>(as_bytes(await_call(reply)));
    if (all.size() != outputs.size())
      throw network_error(group_ + ": the shape check gathered " + std::to_string(all.size()) +
                          " signatures for " + std::to_string(outputs.size()) + " members");
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].size() != bytes)
        throw network_error(group_ + ": member " + std::to_string(r) + "'s signature has " +
                            std::to_string(all[r].size()) + " bytes, not " + std::to_string(bytes));
      std::memcpy(outputs[r], all[r].data(), bytes);
    }
  }

  void barrier(std::uint32_t sequence) override {
    guarded("barrier", [&] {
      gloo::BarrierOptions options{context_};
      options.setTag(sequence);
      options.setTimeout(timeout_);
      gloo::barrier(options);
    });
  }

  void send(std::span<const std::byte> header, std::span<const std::byte> body, int dst,
            int tag) override {
    guarded("send", [&] {
      const auto slot = gloo::Slot::build(point_to_point_prefix, static_cast<std::uint32_t>(tag));
      auto head = buffer(header.data(), header.size());
      head->send(dst, slot);
      auto rest = body.empty() ? nullptr : buffer(body.data(), body.size());
      if (rest)
        rest->send(dst, std::uint64_t{slot} + 1);
      finish_send(*head);
      if (rest)
        finish_send(*rest);
    });
  }

  int recv_header(std::span<std::byte> header, int src, int tag) override {
    int source = src;
    guarded("recv", [&] {
      const auto slot = gloo::Slot::build(point_to_point_prefix, static_cast<std::uint32_t>(tag));
      auto head = buffer(header.data(), header.size());
      if (src == collective_group::any_source)
        head->recv(other_ranks(), slot);
      else
        head->recv(src, slot);
      finish_recv(*head, &source);
    });
    return source;
  }

  void recv_body(std::span<std::byte> body, int src, int tag) override {
    if (body.empty())
      return;
    guarded("recv", [&] {
      const auto slot = gloo::Slot::build(point_to_point_prefix, static_cast<std::uint32_t>(tag));
      auto rest = buffer(body.data(), body.size());
      rest->recv(src, std::uint64_t{slot} + 1);
      finish_recv(*rest, nullptr);
    });
  }

  void abort() noexcept override {
    std::lock_guard guard{waiting_mutex_};
    aborted_ = true;
    for (auto* waiting : waiting_) {
      waiting->abortWaitRecv();
      waiting->abortWaitSend();
    }
  }

private:
  static rpc_group rendezvous_group(const std::shared_ptr<world_core>& world,
                                    const engine_setup& setup,
                                    std::chrono::steady_clock::time_point deadline) {
    std::vector<std::string> names;
    for (int rank : setup.world_ranks)
      names.push_back(world->member_name(rank));
    return create_group(world, setup.rendezvous, std::move(names),
                        std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now()));
  }

  /// Runs `work`, turning gloo's exceptions into troupe's: an I/O error is a
  /// lost member, unless gloo says it timed out.
  template <class F>
  void guarded(const char* operation, F&& work) {
    try {
      work();
    } catch (const gloo::IoException& e) {
      const std::string what = e.what();
      if (what.find("imed out") != std::string::npos)
        throw timeout_error(group_ + ": " + operation + " did not finish within " +
                            readable(timeout_) + " (" + what + ")");
      throw peer_lost(group_ + ": " + operation + " failed: a member is gone (" + what + ")");
    } catch (const gloo::Exception& e) {
      throw network_error(group_ + ": " + operation + " failed in gloo: " + e.what());
    } catch (const gloo::EnforceNotMet& e) {
      throw network_error(group_ + ": " + operation + " failed in gloo: " + e.what());
    }
  }

  std::unique_ptr<gloo::transport::UnboundBuffer> buffer(const void* data, std::size_t bytes) {
    return context_->createUnboundBuffer(const_cast<void*>(data), bytes);
  }

  std::vector<int> other_ranks() const {
    std::vector<int> ranks;
    for (int r = 0; r < context_->size; ++r)
      if (r != context_->rank)
        ranks.push_back(r);
    return ranks;
  }

  /// Each member sends `in` to whoever gathers (everyone, or `root`), which
  /// receives each member's straight into its output.
  void exchange(const void* in, std::span<void* const> outputs, std::size_t bytes, int root,
                std::uint32_t sequence) {
    const int rank = context_->rank;
    const auto slot = gloo::Slot::build(gathering_prefix, sequence);
    auto mine = buffer(in, bytes);
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> incoming;
    if (root < 0 || root == rank) {
      for (int r = 0; r < context_->size; ++r) {
        if (r == rank) {
          if (outputs[static_cast<std::size_t>(r)] != in)
            std::memcpy(outputs[static_cast<std::size_t>(r)], in, bytes);
          continue;
        }
        incoming.push_back(buffer(outputs[static_cast<std::size_t>(r)], bytes));
        incoming.back()->recv(r, slot);
      }
    }
    int sends = 0;
    for (int r = 0; r < context_->size; ++r)
      if (r != rank && (root < 0 || r == root)) {
        mine->send(r, slot);
        ++sends;
      }
    for (int i = 0; i < sends; ++i)
      finish_send(*mine);
    for (auto& each : incoming)
      finish_recv(*each, nullptr);
  }

  void finish_send(gloo::transport::UnboundBuffer& b) {
    finish(b, [&] { return b.waitSend(timeout_); });
  }
  void finish_recv(gloo::transport::UnboundBuffer& b, int* source) {
    finish(b, [&] { return b.waitRecv(source, timeout_); });
  }

  /// Waits for `b` where abort() can reach it.
  template <class Wait>
  void finish(gloo::transport::UnboundBuffer& b, Wait wait) {
    {
      std::lock_guard guard{waiting_mutex_};
      if (aborted_)
        throw state_error(group_ + " is destroyed");
      waiting_.insert(&b);
    }
    bool completed = false;
    try {
      completed = wait();
    } catch (...) {
      std::lock_guard guard{waiting_mutex_};
      waiting_.erase(&b);
      throw;
    }
    std::lock_guard guard{waiting_mutex_};
    waiting_.erase(&b);
    if (!completed)
      throw state_error(group_ + " is destroyed");
  }

  std::shared_ptr<world_core> world_; // its rank 0 gathers the shape checks' signatures
  std::vector<int> world_ranks_;
  std::string group_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo_mesh> context_;
  std::mutex waiting_mutex_;
  std::set<gloo::transport::UnboundBuffer*> waiting_;
  bool aborted_ = false;
};

} // namespace

std::unique_ptr<collective_engine> make_gloo_engine(const std::shared_ptr<world_core>& world,
                                                    const engine_setup& setup) {
  return std::make_unique<gloo_engine>(world, setup);
}

} // namespace troupe::detail
