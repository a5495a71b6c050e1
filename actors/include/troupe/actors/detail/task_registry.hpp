// What a process knows of the tasks, actor methods and contexts its program registered, by name:
// how to run a chunk of encoded calls and encode their outcomes (task.hpp's TROUPE_TASK fills it
// at static initialisation; a worker finds a task here by the name a request carries).
#pragma once

#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/serialization.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

/// Parameter and result types of a non-generic callable.
template <class F>
struct callable_traits : callable_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const> {
  using result = R;
  using params = std::tuple<A...>;
};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...)> : callable_traits<R (C::*)(A...) const> {};
template <class R, class... A>
struct callable_traits<R (*)(A...)> {
  using result = R;
  using params = std::tuple<A...>;
};

template <class F>
concept non_generic_callable = requires {
  &std::decay_t<F>::operator();
}
|| std::is_function_v<std::remove_pointer_t<std::decay_t<F>>>;

/// Whether troupe can encode T (cereal finds a save or serialize for it).
template <class T>
concept serializable = cereal::traits::is_output_serializable<T, byte_output_archive>::value &&
  cereal::traits::is_input_serializable<T, byte_input_archive>::value;

/// What a worker knows of a task: how to run a chunk of encoded calls (encode_calls) and
/// encode their outcomes (encode_outcomes).
using chunk_invoker = std::function<std::vector<std::byte>(std::span<const std::byte> request)>;

/// An item of a chunk whose call threw: which, and what the exception was.
struct call_failure {
  std::uint64_t index = 0;
  failure why;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(index, why.type, why.message);
  }
};

/// A result as it travels: the value (a placeholder byte for void).
template <class R>
using wire_value = std::conditional_t<std::is_void_v<R>, std::uint8_t, R>;

/// A chunk's outcomes: the values of the calls that returned, in order, and the failures.
template <class R>
using chunk_outcomes = std::pair<std::vector<wire_value<R>>, std::vector<call_failure>>;

/// A task of context pools: a chunk of calls, each given the worker's context first.
using context_invoker =
  std::function<std::vector<std::byte>(void* context, std::span<const std::byte> request)>;

/// An actor's method call whose arguments were decoded when it arrived (preparer below): runs
/// it on the object, and returns what encodes its outcome, as a context task's, whenever the
/// answer is sent (so its tensors may go where the answer goes).
using outcome_encoder = std::function<std::vector<std::byte>()>;
using prepared_call = std::function<outcome_encoder(void* object)>;
/// Decodes a chunk of calls of an actor's method now, while the store their tensors came
/// through is active, for a run later on the actor's thread.
using call_preparer = std::function<prepared_call(std::span<const std::byte> request)>;

/// Re-encodes a method's outcomes: decoded while the store they came through is active, encoded
/// inline, for a call relayed on to another process (pools/src/process/relay_host.cpp).
using outcome_transcoder = std::function<std::vector<std::byte>(std::span<const std::byte>)>;

/// Makes a worker's context: from its index (a factory run in the worker), or from bytes (a
/// value sent to it).
using context_maker = std::function<std::shared_ptr<void>(std::size_t index)>;
using context_decoder = std::function<std::shared_ptr<void>(std::span<const std::byte> bytes)>;

class task_registry {
public:
  static task_registry& instance();
  /// Registering a name twice makes it ambiguous: calls to it then fail with
  /// serialization_error rather than run the wrong function.
  void add(const std::string& name, chunk_invoker invoker);
  void add_context_task(const std::string& name, context_invoker invoker);
  void add_call_preparer(const std::string& name, call_preparer preparer);
  void add_outcome_transcoder(const std::string& name, outcome_transcoder transcoder);
  void add_context_factory(const std::string& name, context_maker maker);
  void add_context_type(const std::string& type, context_decoder decoder);

  /// nullptr if no such task (or factory, or context type) is registered in this program.
  const chunk_invoker* find(const std::string& name) const;
  const context_invoker* find_context_task(const std::string& name) const;
  const call_preparer* find_call_preparer(const std::string& name) const;
  const outcome_transcoder* find_outcome_transcoder(const std::string& name) const;
  const context_maker* find_context_factory(const std::string& name) const;
  const context_decoder* find_context_type(const std::string& type) const;

private:
  std::map<std::string, chunk_invoker> tasks_;
  std::map<std::string, context_invoker> context_tasks_;
  std::map<std::string, call_preparer> call_preparers_;
  std::map<std::string, outcome_transcoder> outcome_transcoders_;
  std::map<std::string, context_maker> context_factories_;
  std::map<std::string, context_decoder> context_types_;
};

} // namespace troupe::detail
