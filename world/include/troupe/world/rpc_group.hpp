// rpc_group: named members of a world that call tasks on each other, share values and services
// by key, and meet at barriers (machin's RpcGroup).
//
//   TROUPE_TASK(add, [](int a, int b) { return a + b; });
//   auto group = world.create_rpc_group("workers", {"a", "b", "c"});
//   int s = group.rpc_sync("b", add, 1, 2);                     // runs on "b"
//   auto r = group.rpc_async("c", std::chrono::seconds{5}, add, 3, 4);   // with a timeout
//   group.pair("config", cfg);                                  // others: get_paired<config>
//   group.register_service("count", [&](int step) { return n += step; });
//   int n = group.registered_sync<int>("count", 1);             // on whichever member has it
//   group.barrier();
//
// A task's exception comes back as it does from process pools (troupe/actors/remote_exception.hpp).
// A member that dies or freezes fails every call pending on it with troupe::peer_lost. Every
// member function may be called from several threads at once.
#pragma once

#include "troupe/actors/actor.hpp"
#include "troupe/world/detail/group_actors.hpp"
#include "troupe/world/detail/group_calls.hpp"
#include "troupe/world/remote_ref.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe {

/// Where rpc_group::spawn puts an actor: on the member that runs the fewest actors.
struct least_loaded_t {
  explicit least_loaded_t() = default;
};
inline constexpr least_loaded_t least_loaded{};

/// Where rpc_group::spawn puts an actor: on the member that offers device `name`, written
/// "device@member" ("cuda:1@trainer-2") as rpc_group::devices() lists them and the assigner's
/// world_devices() names them, so that an assignment's device_name places a module's actor.
struct on_device {
  /// The device, as "device@member".
  std::string name;
};

/// Members of a world that call each other by name (machin's RpcGroup): calls, remote references,
/// paired values, services, barriers and actors. Made by world::create_rpc_group.
class rpc_group {
  template <class F>
  using result_of = std::remove_cvref_t<typename detail::callable_traits<F>::result>;

public:
  /// The group's name, the same on every member.
  const std::string& name() const;
  /// This member's name.
  const std::string& own_name() const;
  /// The members' names, sorted: those it was made with, or (made with troupe::all_members)
  /// the world's members now.
  std::vector<std::string> members() const;
  /// How many members it has.
  std::size_t size() const { return members().size(); }
  /// Whether `member` is one of its members.
  bool is_member(std::string_view member) const;

  /// Runs `t(args...)` on member `to`; returns what it returns, or throws what it threw.
  template <class F, class... A>
  auto rpc_sync(std::string_view to, const task<F>& t, A&&... args) {
    return rpc_async(to, t, std::forward<A>(args)...).get();
  }
  /// The same, failing with timeout_error after `timeout`.
  template <class Rep, class Period, class F, class... A>
  auto rpc_sync(std::string_view to, std::chrono::duration<Rep, Period> timeout, const task<F>& t,
                A&&... args) {
    return rpc_async(to, timeout, t, std::forward<A>(args)...).get();
  }

  /// Runs `t(args...)` on member `to`; its result when it has run.
  template <class F, class... A>
  auto rpc_async(std::string_view to, const task<F>& t, A&&... args) {
    return call_task(to, std::nullopt, t, std::forward<A>(args)...);
  }
  /// The same, the result failing with timeout_error after `timeout`.
  template <class Rep, class Period, class F, class... A>
  auto rpc_async(std::string_view to, std::chrono::duration<Rep, Period> timeout, const task<F>& t,
                 A&&... args) {
    return call_task(to, std::chrono::ceil<std::chrono::milliseconds>(timeout), t,
                     std::forward<A>(args)...);
  }

  /// Runs `t(args...)` on member `to` and keeps the result there; returns once it has run (its
  /// exception, if it threw, comes from `to_here()`).
  template <class F, class... A>
  remote_ref<result_of<F>> remote(std::string_view to, const task<F>& t, A&&... args) {
    return keep<result_of<F>>(
      detail::member_rank(*state(), to),
      {detail::call_kind::keep, {}, t.name, {}, encode<F>(std::forward<A>(args)...)}, std::nullopt);
  }
  /// The same, failing with timeout_error after `timeout`.
  template <class Rep, class Period, class F, class... A>
  remote_ref<result_of<F>> remote(std::string_view to, std::chrono::duration<Rep, Period> timeout,
                                  const task<F>& t, A&&... args) {
    return keep<result_of<F>>(
      detail::member_rank(*state(), to),
      {detail::call_kind::keep, {}, t.name, {}, encode<F>(std::forward<A>(args)...)},
      std::chrono::ceil<std::chrono::milliseconds>(timeout));
  }

  /// Shares `value` under `key`: it stays here, and other members reach it with get_paired.
  /// key_error if the group has the key already.
  template <class T>
  void pair(const std::string& key, T value) {
    auto object = std::make_shared<T>(std::move(value));
    detail::pair_value(*state(), key,
                       {object, detail::type_name<T>(), [object] { return serialize(*object); }});
  }
  /// Withdraws a value this member paired; key_error if it did not pair `key`.
  void unpair(const std::string& key) {
    detail::remove_key(*state(), detail::key_table::paired, key);
  }
  /// Whether some member paired a value under `key`.
  bool is_paired(const std::string& key) {
    return detail::has_key(*state(), detail::key_table::paired, key);
  }
  /// The value paired under `key`, wherever it is; key_error if no member paired it.
  template <class T>
  remote_ref<T> get_paired(const std::string& key) {
    const int owner = detail::current_owner(*state(), detail::key_table::paired, key);
    return remote_ref<T>{std::make_shared<typename remote_ref<T>::place>(
      state(), owner, detail::member_label(*state(), owner), key, true)};
  }

  /// Offers `service(args...)` to the group under `key`; it runs here. Callers pass arguments of
  /// its parameter types. key_error if the group has the key already.
  template <class F>
  void register_service(const std::string& key, F service) {
    static_assert(detail::non_generic_callable<F>,
                  "a service needs concrete parameter types (no `auto`)");
    detail::register_service(*state(), key,
                             [f = std::move(service)](std::span<const std::byte> in) {
                               return detail::invoke_chunk<detail::task_args<F>>(f, in);
                             });
  }
  /// Withdraws a service this member registered; key_error if it did not register `key`.
  void deregister(const std::string& key) {
    detail::remove_key(*state(), detail::key_table::services, key);
  }
  /// Whether some member registered a service under `key`.
  bool is_registered(const std::string& key) {
    return detail::has_key(*state(), detail::key_table::services, key);
  }

  /// Calls the service registered under `key`, on the member that registered it. A duration
  /// right after the key is the call's timeout (timeout_error), not an argument.
  template <class R, class... A>
  R registered_sync(const std::string& key, A&&... args) {
    return registered_async<R>(key, std::forward<A>(args)...).get();
  }
  /// The same as registered_sync, its result when it has run.
  template <class R, class... A>
  async_result<R> registered_async(const std::string& key, A&&... args) {
    return call_service<R>(key, std::nullopt, std::forward<A>(args)...);
  }
  /// The same, the result failing with timeout_error after `timeout`.
  template <class R, class Rep, class Period, class... A>
  async_result<R> registered_async(const std::string& key,
                                   std::chrono::duration<Rep, Period> timeout, A&&... args) {
    return call_service<R>(key, std::chrono::ceil<std::chrono::milliseconds>(timeout),
                           std::forward<A>(args)...);
  }
  /// The service's result, computed now and kept on the member that registered it.
  template <class R, class... A>
  remote_ref<R> registered_remote(const std::string& key, A&&... args) {
    return keep<R>(
      detail::service_owner(*state(), key),
      {detail::call_kind::keep, key, {}, {}, service_arguments(std::forward<A>(args)...)},
      std::nullopt);
  }
  /// The same, failing with timeout_error after `timeout`.
  template <class R, class Rep, class Period, class... A>
  remote_ref<R> registered_remote(const std::string& key,
                                  std::chrono::duration<Rep, Period> timeout, A&&... args) {
    return keep<R>(
      detail::service_owner(*state(), key),
      {detail::call_kind::keep, key, {}, {}, service_arguments(std::forward<A>(args)...)},
      std::chrono::ceil<std::chrono::milliseconds>(timeout));
  }

  /// Makes a T (registered with TROUPE_ACTOR) from `args` on member `member`, named
  /// `options.name` (required, unique in the group), and returns its handle. Any member finds
  /// it with actor<T>(name), and handles travel to other members as task arguments and
  /// results. The constructor's exception comes out of spawn; key_error if the name is taken.
  /// When its member is lost, this member makes it again on the next member of the group (or
  /// the first of options.restart.members still there) as options.restart allows (calls that were
  /// there fail with worker_lost; others' handles find it again by name).
  template <class T, class... A>
  troupe::actor<T> spawn(std::string_view member, actor_options options, A&&... args) {
    return spawn_at<T>(detail::member_rank(*state(), member), std::move(options),
                       std::forward<A>(args)...);
  }
  /// The same, on the member that runs the fewest actors (asking each).
  template <class T, class... A>
  troupe::actor<T> spawn(least_loaded_t, actor_options options, A&&... args) {
    return spawn_at<T>(detail::least_loaded_member(*state()), std::move(options),
                       std::forward<A>(args)...);
  }
  /// The same, on the member that offers `where.name` (world_options::devices); the device's
  /// name is the actor's to use (pass it to the constructor). invalid_argument if no member
  /// of the group offers it. A restart goes to the next member, as for any spawned actor.
  template <class T, class... A>
  troupe::actor<T> spawn(const on_device& where, actor_options options, A&&... args) {
    return spawn_at<T>(detail::device_member(*state(), where.name), std::move(options),
                       std::forward<A>(args)...);
  }
  /// Every device the members offer (world_options::devices), as "device@member", sorted.
  std::vector<std::string> devices() const { return detail::group_devices(*state()); }
  /// The actor named `name` in this group, wherever it runs; key_error if there is none,
  /// invalid_argument if it is no T.
  template <class T>
  troupe::actor<T> actor(const std::string& name) {
    static_assert(detail::registered_actor<T>, "register the actor type with TROUPE_ACTOR");
    if constexpr (detail::registered_actor<T>)
      return detail::actor_access::make<T>(
        detail::find_actor(state(), name, detail::actor_type_key<T>()));
  }

  /// Returns when every member has called barrier() as often as this call makes it here: the
  /// n-th call on each member meets the n-th on every other, whichever threads make them.
  /// peer_lost if a member is lost first.
  void barrier();
  /// The same, waiting `timeout` at most (timeout_error naming the group). A barrier that timed
  /// out has still arrived: the others pass it once they all come, and this member's next call
  /// meets their next.
  void barrier(std::chrono::milliseconds timeout);
  /// Leaves the group here (other members keep theirs); later calls throw state_error.
  void destroy();

  /// Made by world::create_rpc_group.
  explicit rpc_group(std::shared_ptr<detail::group_state> state);

private:
  void meet(std::optional<std::chrono::milliseconds> timeout);

  template <class T, class... A>
  troupe::actor<T> spawn_at(int rank, actor_options options, A&&... args) {
    static_assert(detail::registered_actor<T>,
                  "rpc_group::spawn makes the actor on another member: register its type with "
                  "TROUPE_ACTOR(type, constructor parameters, methods...)");
    if constexpr (detail::registered_actor<T>)
      return detail::actor_access::make<T>(
        detail::spawn_on_member(state(), rank, std::move(options), detail::actor_type_key<T>(),
                                detail::encode_constructor<T>(std::forward<A>(args)...)));
  }

  template <class F, class... A>
  static detail::bytes encode(A&&... args) {
    return detail::encode_arguments<detail::task_args<F>>(std::forward<A>(args)...);
  }

  template <class... A>
  static detail::bytes service_arguments(A&&... args) {
    return detail::encode_arguments<std::tuple<std::decay_t<A>...>>(std::forward<A>(args)...);
  }

  /// Sends a keep call; the reference to what `rank` kept.
  template <class R>
  remote_ref<R> keep(int rank, detail::call_request request,
                     std::optional<std::chrono::milliseconds> timeout) {
    auto id = detail::await_call(detail::start_call(*state(), rank, std::move(request), timeout));
    return remote_ref<R>{std::make_shared<typename remote_ref<R>::place>(
      state(), rank, detail::member_label(*state(), rank),
      deserialize<std::string>(detail::as_bytes(id)), false)};
  }

  template <class R, class... A>
  async_result<R> call_service(const std::string& key,
                               std::optional<std::chrono::milliseconds> timeout, A&&... args) {
    const int owner = detail::service_owner(*state(), key);
    detail::call_request request{detail::call_kind::service, key, {}, {}, {}, [&] {
                                   return service_arguments(std::forward<A>(args)...);
                                 }};
    return detail::typed_call<R>(*state(), owner, std::move(request), timeout,
                                 detail::member_label(*state(), owner));
  }

  template <class F, class... A>
  async_result<result_of<F>> call_task(std::string_view to,
                                       std::optional<std::chrono::milliseconds> timeout,
                                       const task<F>& t, A&&... args) {
    const int rank = detail::member_rank(*state(), to);
    detail::call_request request{detail::call_kind::task,
                                 {},
                                 t.name,
                                 {},
                                 {},
                                 [&] { return encode<F>(std::forward<A>(args)...); }};
    return detail::typed_call<result_of<F>>(*state(), rank, std::move(request), timeout,
                                            detail::member_label(*state(), rank));
  }

  /// The group's state; state_error for a group moved from.
  const std::shared_ptr<detail::group_state>& state() const;

  std::shared_ptr<detail::group_state> state_;
};

} // namespace troupe
