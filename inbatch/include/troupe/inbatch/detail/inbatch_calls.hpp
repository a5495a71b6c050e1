// How an inbatch action calls the user's init and post: with whatever of the batch, extras and
// named arguments each takes.
#pragma once

#include "troupe/inbatch/named_args.hpp"
#include "troupe/pools/detail/process_jobs.hpp"

#include <tuple>
#include <type_traits>

namespace troupe::detail {

/// Whether std::apply(f, tuple) is well-formed (std::apply itself is not SFINAE-friendly).
template <class F, class Tuple>
struct applicable;
template <class F, class... A>
struct applicable<F, std::tuple<A...>> : std::is_invocable<F&, A...> {};

/// Calls f(required..., extras..., named), f(required..., extras...) or f(required...),
/// whichever f takes (init: required = the batch; post: the batch and the outcomes).
template <class F, class Required, class... Extra>
decltype(auto) call_with_what_it_takes(F& f, Required required, const named_args& named,
                                       const Extra&... extra) {
  const auto all = std::tuple_cat(required, std::forward_as_tuple(extra..., named));
  const auto without_named = std::tuple_cat(required, std::forward_as_tuple(extra...));
  if constexpr (applicable<F, std::remove_const_t<decltype(all)>>::value)
    return std::apply(f, all);
  else if constexpr (applicable<F, std::remove_const_t<decltype(without_named)>>::value)
    return std::apply(f, without_named);
  else
    return std::apply(f, required);
}

template <class T>
concept task_object = is_task<std::remove_cvref_t<T>>::value;

} // namespace troupe::detail
