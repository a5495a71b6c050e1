// collective_group: members of a world that move tensors together on a collective engine, gloo
// or MPI (machin's CollectiveGroup, torch.distributed's operations).
//
//   auto group = troupe::create_collective_group(world, {0, 1, 2}); // every member calls it
//   if (group) {
//     xt::xarray<float> grads = ...;
//     group->all_reduce(grads);           // sum over the members, in place
//     group->broadcast(weights, 0);       // rank 0's weights everywhere
//     auto h = group->irecv(buffer);      // from any member
//     int from = h.wait();
//   }
//
// Tensors are std::vector<T>, xt::xarray<T> or xt::xtensor<T, N> of any arithmetic T, row-major.
// Ranks are relative to the group (rank() is this member's). Collectives must be called in the
// same order on every member, as with any collective engine; the `_async` forms keep that order
// (they start in the order they are called) and their tensors must live until waited on.
// Errors: invalid_argument for a bad rank, a wrong output list, or (check_shapes) members whose
// operation, element type or shape differ, naming both sides; peer_lost or timeout_error when a
// member dies or freezes (gloo; see collective_options for MPI), after which the group is broken
// and every later call throws state_error. Any member function may be called from any thread;
// two groups work at once from two threads.
#pragma once

#include "troupe/collectives/collective_handle.hpp"
#include "troupe/collectives/collective_options.hpp"
#include "troupe/collectives/detail/collective_call.hpp"
#include "troupe/collectives/detail/tensor_view.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace troupe {

class world;

/// A collective group of a world's members on gloo or MPI (machin's CollectiveGroup):
/// point-to-point sends and collectives on tensors, each in a blocking and an asynchronous form.
/// Made by create_collective_group; members call each operation in the same order.
class collective_group {
public:
  /// irecv's and recv's source when any member may send.
  static constexpr int any_source = -1;

  /// Made by create_collective_group.
  explicit collective_group(std::shared_ptr<detail::collective_core> core);

  /// This member's rank in the group, 0 .. size() - 1, in the order of world
  /// ranks.
  int rank() const;
  /// How many members it has.
  int size() const;
  /// The members' world ranks, by group rank.
  const std::vector<int>& world_ranks() const;
  /// The engine it runs on (gloo or MPI).
  collective_backend backend() const;

  /// Sends `t` to member `dst`; returns once `t` may be reused. `tag` tells apart sends between the
  /// same pair.
  template <detail::tensor C>
  void send(const C& t, int dst, int tag = 0) {
    run(point_to_point(detail::collective_kind::send, t, dst, tag));
  }
  /// send(), started: its handle says when it is done.
  template <detail::tensor C>
  collective_handle isend(const C& t, int dst, int tag = 0) {
    return start(point_to_point(detail::collective_kind::send, t, dst, tag));
  }
  /// Receives into `t`, which must have the sender's element type and shape;
  /// returns the sender's rank.
  template <detail::tensor C>
  int recv(C& t, int src = any_source, int tag = 0) {
    return run(point_to_point(detail::collective_kind::recv, t, src, tag));
  }
  /// recv(), started: its handle says when, and from whom, `t` arrived.
  template <detail::tensor C>
  recv_handle irecv(C& t, int src = any_source, int tag = 0) {
    return recv_handle{start(point_to_point(detail::collective_kind::recv, t, src, tag))};
  }

  /// `src`'s `t` into every member's `t`.
  template <detail::tensor C>
  void broadcast(C& t, int src) {
    run(rooted(detail::collective_kind::broadcast, t, src));
  }
  /// broadcast(), started.
  template <detail::tensor C>
  collective_handle broadcast_async(C& t, int src) {
    return start(rooted(detail::collective_kind::broadcast, t, src));
  }

  /// Every member's `t` becomes the members' `t`s combined by `op`.
  template <detail::tensor C>
  void all_reduce(C& t, reduce_op op = reduce_op::sum) {
    run(reducing(detail::collective_kind::all_reduce, t, -1, op));
  }
  /// all_reduce(), started.
  template <detail::tensor C>
  collective_handle all_reduce_async(C& t, reduce_op op = reduce_op::sum) {
    return start(reducing(detail::collective_kind::all_reduce, t, -1, op));
  }
  /// As all_reduce, but only `dst`'s `t` gets the result (the others' may be
  /// overwritten).
  template <detail::tensor C>
  void reduce(C& t, int dst, reduce_op op = reduce_op::sum) {
    run(reducing(detail::collective_kind::reduce, t, dst, op));
  }
  /// reduce(), started.
  template <detail::tensor C>
  collective_handle reduce_async(C& t, int dst, reduce_op op = reduce_op::sum) {
    return start(reducing(detail::collective_kind::reduce, t, dst, op));
  }

  /// outputs[r] becomes member r's `t`; `outputs` has size() tensors shaped as
  /// `t`.
  template <detail::tensor C>
  void all_gather(std::vector<C>& outputs, const C& t) {
    run(listed(detail::collective_kind::all_gather, t, outputs, -1));
  }
  /// all_gather(), started.
  template <detail::tensor C>
  collective_handle all_gather_async(std::vector<C>& outputs, const C& t) {
    return start(listed(detail::collective_kind::all_gather, t, outputs, -1));
  }
  /// At `dst`: outputs[r] becomes member r's `t`. The other members call
  /// gather(t, dst).
  template <detail::tensor C>
  void gather(const C& t, std::vector<C>& outputs, int dst) {
    run(listed(detail::collective_kind::gather, t, outputs, dst));
  }
  /// What the members other than `dst` call for gather().
  template <detail::tensor C>
  void gather(const C& t, int dst) {
    run(rooted(detail::collective_kind::gather, t, dst));
  }
  /// gather(), started, at `dst`.
  template <detail::tensor C>
  collective_handle gather_async(const C& t, std::vector<C>& outputs, int dst) {
    return start(listed(detail::collective_kind::gather, t, outputs, dst));
  }
  /// gather(), started, at the members other than `dst`.
  template <detail::tensor C>
  collective_handle gather_async(const C& t, int dst) {
    return start(rooted(detail::collective_kind::gather, t, dst));
  }
  /// Member r's `t` becomes `src`'s inputs[r]. The other members call
  /// scatter(t, src).
  template <detail::tensor C>
  void scatter(C& t, const std::vector<C>& inputs, int src) {
    run(listed(detail::collective_kind::scatter, t, inputs, src));
  }
  /// What the members other than `src` call for scatter().
  template <detail::tensor C>
  void scatter(C& t, int src) {
    run(rooted(detail::collective_kind::scatter, t, src));
  }
  /// scatter(), started, at `src`.
  template <detail::tensor C>
  collective_handle scatter_async(C& t, const std::vector<C>& inputs, int src) {
    return start(listed(detail::collective_kind::scatter, t, inputs, src));
  }
  /// scatter(), started, at the members other than `src`.
  template <detail::tensor C>
  collective_handle scatter_async(C& t, int src) {
    return start(rooted(detail::collective_kind::scatter, t, src));
  }

  /// Returns when every member has called barrier() as often.
  void barrier() { run({}); }
  /// barrier(), started.
  collective_handle barrier_async() { return start({}); }

  /// Leaves the group here; operations other members still run with this one
  /// fail there. Later calls here throw state_error.
  void destroy();

private:
  template <detail::tensor C>
  static detail::collective_call point_to_point(detail::collective_kind kind, const C& t, int peer,
                                                int tag) {
    auto call = rooted(kind, t, peer);
    call.tag = tag;
    return call;
  }
  template <detail::tensor C>
  static detail::collective_call rooted(detail::collective_kind kind, const C& t, int root) {
    detail::check_layout(t, "collective_group");
    detail::collective_call call;
    call.kind = kind;
    call.tensor = detail::view_of(t);
    call.peer = root;
    return call;
  }
  template <detail::tensor C>
  static detail::collective_call reducing(detail::collective_kind kind, const C& t, int root,
                                          reduce_op op) {
    auto call = rooted(kind, t, root);
    call.op = op;
    return call;
  }
  template <detail::tensor C>
  static detail::collective_call listed(detail::collective_kind kind, const C& t,
                                        const std::vector<C>& list, int root) {
    auto call = rooted(kind, t, root);
    call.list = detail::views_of(list, "collective_group");
    return call;
  }

  /// Runs `call` on this thread (after the collectives started before it); the
  /// source rank for a receive.
  int run(detail::collective_call call);
  collective_handle start(detail::collective_call call);
  /// The group's core; state_error for a group moved from.
  detail::collective_core& core() const;

  std::shared_ptr<detail::collective_core> core_;
};

/// Creates a collective group of the members of world rank `ranks`; every member of the world
/// calls it, in the same order as its other create_collective_group calls (as in machin).
/// Members get the group, the others nullopt. invalid_argument for a bad rank list, an engine
/// this build of troupe has not (collective_backend_available), or an MPI group in a world whose
/// ranks are not MPI's; timeout_error or peer_lost if the members do not all come within
/// options.timeout; state_error if the world has stopped.
std::optional<collective_group> create_collective_group(world& members, std::vector<int> ranks,
                                                        collective_options options = {});

/// Whether this build of troupe has the engine `backend` (TROUPE_WITH_GLOO, TROUPE_WITH_MPI).
bool collective_backend_available(collective_backend backend) noexcept;

} // namespace troupe
