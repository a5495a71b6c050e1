// remote_ref<T>: a value that lives on another member of a world (machin's RRef).
//
//   auto ref = group.remote("b", make_model, 3);      // made and kept on member "b"
//   model m = ref.to_here();                          // a copy fetched from there
//   auto counter = group.get_paired<tally>("tally");  // a value member "a" paired
//   counter.rpc_sync(add_to_tally, 5);                // runs add_to_tally(tally&, 5) on "a"
//
// Copies share the value; the member that keeps an outcome of remote() forgets it when the last
// copy here is destroyed. A paired value stays until its member unpairs it. A reference moved
// from throws troupe::state_error when used.
#pragma once

#include "troupe/world/detail/group_calls.hpp"

#include <memory>
#include <string>
#include <utility>

namespace troupe {

/// A reference to a value kept on a member of a world (machin's RRef): a paired value
/// (rpc_group::get_paired) or a call's result kept where it ran (rpc_group::remote). The value
/// stays there until the last reference goes.
template <class T>
class remote_ref {
public:
  /// The member the value lives on.
  const std::string& owner() const { return where().owner_name; }

  /// A copy of the value, fetched from its member (its exception, if the call that made it
  /// threw). peer_lost if that member is gone.
  T to_here() const { return fetched(std::nullopt); }
  /// As to_here(), but timeout_error if the copy has not come within `timeout`.
  template <class Rep, class Period>
  T to_here(std::chrono::duration<Rep, Period> timeout) const {
    return fetched(std::chrono::ceil<std::chrono::milliseconds>(timeout));
  }

  /// Runs `t(value&, args...)` on the member that pairs the value, one call on it at a time;
  /// returns what it returns.
  template <class F, class... A>
  auto rpc_sync(const task<F>& t, A&&... args) const {
    return rpc_async(t, std::forward<A>(args)...).get();
  }
  /// The same, failing with timeout_error after `timeout`.
  template <class Rep, class Period, class F, class... A>
  auto rpc_sync(std::chrono::duration<Rep, Period> timeout, const task<F>& t, A&&... args) const {
    return call_on_value(std::chrono::ceil<std::chrono::milliseconds>(timeout), t,
                         std::forward<A>(args)...)
      .get();
  }

  /// The same as rpc_sync, its result when it has run.
  template <class F, class... A>
  auto rpc_async(const task<F>& t, A&&... args) const {
    return call_on_value(std::nullopt, t, std::forward<A>(args)...);
  }

  /// Where the value is; made by rpc_group.
  struct place {
    /// The group the value belongs to.
    std::shared_ptr<detail::group_state> group;
    /// The rank of the member it lives on.
    int owner = 0;
    /// The name of the member it lives on.
    std::string owner_name;
    std::string key; ///< the paired key, or the kept outcome's id
    /// Whether it is a paired value (else a kept outcome, released when the last reference goes).
    bool paired = false;

    /// Where a value is: made by rpc_group.
    place(std::shared_ptr<detail::group_state> in, int rank, std::string name, std::string id,
          bool is_paired)
      : group(std::move(in)), owner(rank), owner_name(std::move(name)), key(std::move(id)),
        paired(is_paired) {}
    place(const place&) = delete;
    place& operator=(const place&) = delete;
    ~place() {
      if (!paired)
        detail::release_kept(*group, owner, key);
    }
  };

  /// A reference to the value at `where`; made by rpc_group.
  explicit remote_ref(std::shared_ptr<place> where) : place_(std::move(where)) {}

private:
  T fetched(std::optional<std::chrono::milliseconds> timeout) const {
    detail::call_request request{
      detail::call_kind::fetch, where().key, {}, detail::type_name<T>(), {}};
    auto payload = detail::await_call(
      detail::start_call(*where().group, where().owner, std::move(request), timeout));
    if (where().paired)
      return deserialize<T>(detail::as_bytes(payload));
    return detail::decode_outcome<T>(detail::as_bytes(payload), where().owner_name);
  }

  template <class F, class... A>
  auto call_on_value(std::optional<std::chrono::milliseconds> timeout, const task<F>& t,
                     A&&... args) const {
    static_assert(detail::takes_context<F>,
                  "a task run on a remote value takes it first, as a non-const reference");
    static_assert(std::is_same_v<std::remove_cv_t<detail::context_of<F>>, T>,
                  "the task's first parameter is not this reference's value type");
    using R = std::remove_cvref_t<typename detail::callable_traits<F>::result>;
    detail::call_request request{
      detail::call_kind::on_value, where().key, t.name, detail::type_name<T>(), {}, [&] {
        return detail::encode_arguments<detail::context_task_args<F>>(std::forward<A>(args)...);
      }};
    return detail::typed_call<R>(*where().group, where().owner, std::move(request), timeout,
                                 where().owner_name);
  }

  /// Where the value is; state_error for a reference moved from.
  const place& where() const {
    if (!place_)
      detail::throw_empty_handle("troupe::remote_ref", "a fetch or call");
    return *place_;
  }

  std::shared_ptr<place> place_;
};

} // namespace troupe
