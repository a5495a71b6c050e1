// How the processes target of inbatch_parallel runs: a chunk of items of one registered method
// travels as one task call, (the batch, see inbatch_batch_transfer.hpp, and the items'
// arguments), and comes back as one outcome per item. The chunk task is registered once per
// (method, batch, arguments) type when the program starts, under a name made from that type, so
// that the worker (the same program) knows it too.
#pragma once

#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/inbatch/detail/inbatch_batch_transfer.hpp"
#include "troupe/pools/detail/outcome_writer.hpp"
#include "troupe/pools/outcome.hpp"
#include "troupe/pools/this_worker.hpp"

#include <unistd.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace troupe::detail {

/// A chunk's outcomes as they travel: the values of the items that returned, in order, the
/// failures by index, and the worker that ran them.
template <class R>
struct inbatch_chunk_result {
  std::string worker;
  std::vector<wire_value<R>> values;
  std::vector<call_failure> failures;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(worker, values, failures);
  }

  /// Writes the outcomes into out[first, first + count).
  void unpack(outcomes<R>& out, std::size_t first, std::size_t count) const {
    std::size_t value = 0;
    auto failure = failures.begin();
    for (std::size_t i = 0; i < count; ++i) {
      if (failure != failures.end() && failure->index == i) {
        outcome_writer::error(out, first + i, failure->why.exception(worker));
        ++failure;
      } else if constexpr (std::is_void_v<R>) {
        outcome_writer::value(out, first + i);
        ++value;
      } else {
        outcome_writer::value(out, first + i, values.at(value++));
      }
    }
  }
};

/// A chunk's calls as they travel: one-argument calls as a plain vector of that argument (a
/// single copy for numbers, where a vector of tuples costs an archive call per item), others
/// as a vector of tuples.
template <class Call>
struct call_list {
  using type = std::vector<Call>;
  static void add(type& list, Call call) { list.push_back(std::move(call)); }
  static Call& at(type& list, std::size_t i) { return list[i]; }
};
template <class A>
requires(!std::is_same_v<A, bool>) // std::vector<bool> has no element to refer to
  struct call_list<std::tuple<A>> {
  using type = std::vector<A>;
  static void add(type& list, std::tuple<A> call) { list.push_back(std::get<0>(std::move(call))); }
  static std::tuple<A&> at(type& list, std::size_t i) { return {list[i]}; }
};

/// A chunk's item indices (inits::indices, the usual init) as they travel: two numbers while
/// they run consecutively, every index once they do not.
struct index_calls {
  std::uint64_t first = 0, count = 0; // the consecutive run, while `listed` is empty
  std::vector<std::uint64_t> listed;

  std::size_t size() const noexcept { return listed.empty() ? count : listed.size(); }
  void reserve(std::size_t) noexcept {}
  std::size_t at(std::size_t i) const { return listed.empty() ? first + i : listed[i]; }

  void add(std::uint64_t index) {
    if (listed.empty() && (count == 0 || index == first + count)) {
      first = count == 0 ? index : first;
      ++count;
      return;
    }
    if (listed.empty()) // the run breaks off here: list it, and everything after
      for (std::uint64_t k = 0; k < count; ++k)
        listed.push_back(first + k);
    listed.push_back(index);
    count = 0;
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(first, count, listed);
  }
};
template <>
struct call_list<std::tuple<std::size_t>> {
  using type = index_calls;
  static void add(type& list, std::tuple<std::size_t> call) { list.add(std::get<0>(call)); }
  static std::tuple<std::size_t> at(const type& list, std::size_t i) { return {list.at(i)}; }
};

/// The chunk task of method F (a lambda without captures) over a Batch with calls of type Call.
template <class F, class Batch, class Call>
struct inbatch_chunk {
  using result = std::remove_cvref_t<decltype(std::apply(
    std::declval<F&>(),
    std::tuple_cat(std::declval<std::tuple<Batch&>>(), std::declval<Call&>())))>;

  using calls_type = typename call_list<Call>::type;

  /// Whether F only reads the batch, so that no chunk needs a copy of its own.
  static constexpr bool reads_only = [] {
    return []<class... A>(std::tuple<A...>*) {
      return std::is_invocable_v<F&, const Batch&, A&...>;
    }(static_cast<Call*>(nullptr));
  }();

  inbatch_chunk_result<result> operator()(inbatch_batch<Batch> shared, calls_type calls) const {
    std::shared_ptr<const Batch> keep;
    if constexpr (reads_only)
      return run(shared.read_only(keep), calls);
    else
      return run(shared.copy(), calls);
  }

private:
  template <class B>
  inbatch_chunk_result<result> run(B&& batch, calls_type& calls) const {
    inbatch_chunk_result<result> out;
    const auto self = this_worker();
    out.worker = "worker " + std::to_string(self ? self->index : 0) + " (pid " +
                 std::to_string(getpid()) + ")";
    F method{};
    for (std::size_t i = 0; i < calls.size(); ++i) {
      try {
        auto args = std::tuple_cat(std::forward_as_tuple(batch), call_list<Call>::at(calls, i));
        if constexpr (std::is_void_v<result>) {
          std::apply(method, args);
          out.values.push_back(0);
        } else {
          out.values.push_back(std::apply(method, args));
        }
      } catch (...) {
        out.failures.push_back({i, current_failure()});
      }
    }
    return out;
  }

public:
  static const std::string& name() {
    static const std::string made = std::string{"troupe.inbatch."} + typeid(inbatch_chunk).name();
    return made;
  }

  static task<inbatch_chunk> as_task() { return {name().c_str(), {}}; }

  /// Registered when the program starts, in the worker processes too (odr-used by the caller).
  static inline const bool registered = register_task(as_task());
};

} // namespace troupe::detail
