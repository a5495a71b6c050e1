// Jobs of process pools: their chunks are encoded for a worker process (the registered task's
// name plus one argument tuple per item) and completed from the worker's reply.
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/pools/detail/imap_job.hpp"
#include "troupe/pools/detail/map_jobs.hpp"
#include "troupe/pools/detail/progress_tracker.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace troupe::detail {

/// The argument tuple of F's calls: all its parameters, or all but the context. Chosen lazily:
/// a task without parameters has no context to split off.
template <class F, bool WithContext>
struct call_args_of {
  using type = task_args<F>;
};
template <class F>
struct call_args_of<F, true> {
  using type = context_task_args<F>;
};
template <class F, bool WithContext>
using call_args = typename call_args_of<F, WithContext>::type;

/// What a task returns.
template <class F>
using task_result_t = std::remove_cvref_t<typename callable_traits<F>::result>;

template <class T>
struct is_task : std::false_type {
  using function = int (*)(int); // a stand-in, so misuse reports only check_task's message
};
template <class F>
struct is_task<task<F>> : std::true_type {
  using function = F;
};

/// The callable of task type Task.
template <class Task>
using task_function = typename is_task<std::remove_cvref_t<Task>>::function;

/// The checks that make misuse a compile-time error that says what to do. `Ctx` is the pool's
/// context type, void for plain process pools.
template <class Task, class Ctx>
constexpr void check_task() {
  static_assert(is_task<std::remove_cvref_t<Task>>::value,
                "a process pool runs registered tasks: declare the function at namespace scope "
                "with TROUPE_TASK(name, callable) and pass `name`");
  if constexpr (!std::is_void_v<Ctx> && is_task<std::remove_cvref_t<Task>>::value) {
    using F = task_function<Task>;
    static_assert(takes_context<F>, "a context pool calls f(ctx, args...): the task's first "
                                    "parameter must be a non-const reference to the context");
    if constexpr (takes_context<F>)
      static_assert(std::is_same_v<context_of<F>, Ctx>,
                    "the task's context parameter is not the pool's context type");
  }
  if constexpr (is_task<std::remove_cvref_t<Task>>::value) {
    using F = task_function<Task>;
    static_assert(all_serializable<call_args<F, !std::is_void_v<Ctx>>>,
                  "a task's argument types must be serializable to cross to a worker process: "
                  "give the type a `template <class Archive> void serialize(Archive&)` member");
    using R = task_result_t<F>;
    static_assert(std::is_void_v<R> || serializable<R>,
                  "a task's result type must be serializable to come back from a worker "
                  "process: give the type a `template <class Archive> void serialize(Archive&)` "
                  "member");
  }
}

/// How a process job turns its items into a task's calls and a worker's reply into results.
/// `Spread`: each item is a tuple of arguments (starmap); otherwise the single argument.
template <class F, bool Spread, bool WithContext>
struct task_calls {
  using args = call_args<F, WithContext>;

  template <class Item>
  static args to_args(const Item& item) {
    if constexpr (Spread)
      return std::apply([](const auto&... a) { return args(a...); }, item);
    else
      return args(item);
  }

  template <class Items>
  static std::vector<std::byte> encode(const Items& items, std::size_t first, std::size_t last) {
    std::vector<args> calls;
    calls.reserve(last - first);
    for (auto i = first; i < last; ++i)
      calls.push_back(to_args(items[i]));
    return encode_calls(calls);
  }

  /// Per item: the value, or the exception to rethrow (the task's own type where it is
  /// registered to travel, else task_error; see troupe/actors/remote_exception.hpp).
  template <class R>
  static std::vector<std::pair<std::optional<stored_t<R>>, std::exception_ptr>>
  decode(std::span<const std::byte> bytes, std::size_t count, const std::string& worker) {
    std::vector<std::pair<std::optional<stored_t<R>>, std::exception_ptr>> out(count);
    try {
      auto [values, failures] = deserialize<chunk_outcomes<R>>(bytes);
      if (values.size() + failures.size() != count)
        throw serialization_error(worker + " answered " +
                                  std::to_string(values.size() + failures.size()) + " items for " +
                                  std::to_string(count));
      for (auto& f : failures) {
        if (f.index >= count || out[f.index].second)
          throw serialization_error(worker + " answered a bad item index");
        out[f.index].second = f.why.exception(worker);
      }
      std::size_t next = 0;
      for (auto& o : out)
        if (!o.second) {
          if constexpr (std::is_void_v<R>)
            o.first.emplace();
          else
            o.first.emplace(std::move(values[next]));
          ++next;
        }
    } catch (...) {
      for (auto& o : out)
        o = {std::nullopt, std::current_exception()};
    }
    return out;
  }
};

/// apply / apply_async on a process pool.
template <class F, bool WithContext>
class process_apply_job final : public process_job {
  using R = task_result_t<F>;
  using args = call_args<F, WithContext>;

public:
  process_apply_job(const task<F>& t, args a, std::shared_ptr<result_state<R>> result)
    : process_job(1), name_(t.name), args_(std::move(a)), result_(std::move(result)) {}

  const char* task_name() const noexcept override { return name_; }
  bool with_context() const noexcept override { return WithContext; }
  std::vector<std::byte> encode_chunk(std::size_t) const override {
    return encode_calls(std::vector<args>{args_});
  }
  std::size_t accept_chunk(std::size_t, std::span<const std::byte> outcomes,
                           const std::string& worker) noexcept override {
    auto decoded = task_calls<F, false, WithContext>::template decode<R>(outcomes, 1, worker);
    outcome_ = std::move(decoded[0]);
    return outcome_.second ? 1 : 0;
  }
  void abandon(std::size_t, std::size_t, std::exception_ptr why) noexcept override {
    outcome_ = {std::nullopt, std::move(why)};
  }

private:
  void complete() noexcept override {
    if (outcome_.first)
      result_->set_value(std::move(*outcome_.first));
    else
      result_->set_error(outcome_.second);
  }

  const char* name_;
  args args_;
  std::shared_ptr<result_state<R>> result_;
  std::pair<std::optional<stored_t<R>>, std::exception_ptr> outcome_;
};

/// map / starmap (and their _async forms) on a process pool.
template <class Items, class F, bool Spread, bool WithContext>
class process_map_job final : public process_job {
  using R = task_result_t<F>;

public:
  process_map_job(const task<F>& t, Items items, std::size_t chunk_size,
                  std::shared_ptr<result_state<typename map_results<R>::value>> result,
                  progress_ptr progress = nullptr)
    : process_job(chunking{items.size(), chunk_size}.chunk_count()), name_(t.name),
      items_(std::move(items)), chunks_{items_.size(), chunk_size},
      results_(items_.size(), std::move(result), std::move(progress)) {}

  const char* task_name() const noexcept override { return name_; }
  bool with_context() const noexcept override { return WithContext; }
  std::vector<std::byte> encode_chunk(std::size_t chunk) const override {
    return task_calls<F, Spread, WithContext>::encode(items_, chunks_.begin(chunk),
                                                      chunks_.end(chunk));
  }
  std::size_t accept_chunk(std::size_t chunk, std::span<const std::byte> outcomes,
                           const std::string& worker) noexcept override {
    const auto first = chunks_.begin(chunk);
    auto decoded = task_calls<F, Spread, WithContext>::template decode<R>(
      outcomes, chunks_.end(chunk) - first, worker);
    std::size_t failed = 0;
    for (std::size_t k = 0; k < decoded.size(); ++k) {
      if (decoded[k].second) {
        results_.fail(first + k, decoded[k].second);
        ++failed;
      } else if constexpr (!std::is_void_v<R>) {
        results_.set(first + k, std::move(*decoded[k].first));
      }
    }
    results_.chunk_ended(decoded.size(), failed);
    return failed;
  }
  void abandon(std::size_t first, std::size_t last, std::exception_ptr why) noexcept override {
    results_.abandon(chunks_, first, last, std::move(why));
  }

private:
  void complete() noexcept override { results_.deliver(); }

  const char* name_;
  Items items_;
  chunking chunks_;
  map_results<R> results_;
};

/// imap / imap_unordered on a process pool: the items [offset, offset + n) of a stream.
template <class Items, class F, bool Ordered, bool WithContext>
class process_imap_job final : public streaming_job<task_result_t<F>, Ordered, process_job> {
  using R = task_result_t<F>;
  using base = streaming_job<R, Ordered, process_job>;

public:
  process_imap_job(const task<F>& t, Items items, std::size_t chunk_size, std::size_t offset,
                   std::shared_ptr<typename base::sink_type> sink)
    : base(chunking{items.size(), chunk_size}, offset, std::move(sink)), name_(t.name),
      items_(std::move(items)) {}

  const char* task_name() const noexcept override { return name_; }
  bool with_context() const noexcept override { return WithContext; }
  std::vector<std::byte> encode_chunk(std::size_t chunk) const override {
    return task_calls<F, false, WithContext>::encode(items_, this->chunks_.begin(chunk),
                                                     this->chunks_.end(chunk));
  }
  std::size_t accept_chunk(std::size_t chunk, std::span<const std::byte> outcomes,
                           const std::string& worker) noexcept override {
    const auto first = this->chunks_.begin(chunk);
    auto decoded = task_calls<F, false, WithContext>::template decode<R>(
      outcomes, this->chunks_.end(chunk) - first, worker);
    std::vector<typename base::outcome> results(decoded.size());
    std::size_t failed = 0;
    for (std::size_t k = 0; k < decoded.size(); ++k) {
      results[k].value = std::move(decoded[k].first);
      results[k].error = decoded[k].second;
      failed += results[k].error ? 1 : 0;
    }
    this->publish(first, results);
    return failed;
  }

private:
  const char* name_;
  Items items_;
};

/// How process pools turn calls into jobs (the policy of pool_front): a registered task, run
/// in a worker process, its arguments and results encoded. `Ctx` is the pool's context type
/// (void: none).
template <class Ctx>
struct process_pool_jobs {
  static constexpr bool with_context = !std::is_void_v<Ctx>;

  template <class Task, class Item>
  using result_of = task_result_t<task_function<Task>>;

  template <class Task, class... Args>
  static auto apply(const Task& t, Args&&... args) {
    check_task<Task, Ctx>();
    using F = task_function<Task>;
    using R = task_result_t<F>;
    auto state = std::make_shared<result_state<R>>();
    job_ptr job = std::make_shared<process_apply_job<F, with_context>>(
      t, call_args<F, with_context>(std::forward<Args>(args)...), state);
    return std::pair{std::move(job), async_result<R>{std::move(state)}};
  }

  template <bool Spread, class Task, class Items>
  static auto map(const Task& t, Items items, std::size_t chunk_size, progress_ptr progress) {
    check_task<Task, Ctx>();
    using F = task_function<Task>;
    using R = task_result_t<F>;
    using V = std::conditional_t<std::is_void_v<R>, void, std::vector<R>>;
    auto state = std::make_shared<result_state<V>>();
    job_ptr job = std::make_shared<process_map_job<Items, F, Spread, with_context>>(
      t, std::move(items), chunk_size, state, std::move(progress));
    return std::pair{std::move(job), async_result<V>{std::move(state)}};
  }

  template <bool Ordered, class Task>
  static auto stream(const Task& t) {
    check_task<Task, Ctx>();
    using F = task_function<Task>;
    return [t](auto items, std::size_t chunk_size, std::size_t offset, auto sink) {
      return std::make_shared<process_imap_job<decltype(items), F, Ordered, with_context>>(
        t, std::move(items), chunk_size, offset, std::move(sink));
    };
  }
};

} // namespace troupe::detail
