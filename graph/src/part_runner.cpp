// One run of a partition's parts: which parts are ready, how many run, the values so far and the
// first failure, shared by whoever starts parts and whatever runs them.
#include "part_runner.hpp"

#include "troupe/graph/evaluate.hpp"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

namespace troupe::graph::detail {

namespace {

struct ready_part {
  part_id pid;
  tensor_map inputs; // the values of its input names
};

/// Every member takes the lock itself, or says `_locked` and expects it held. The caller's thread
/// sleeps until it has something to start, or everything is settled. Shared with the loops it
/// launches: a loop may start after the caller has returned (queued behind other work), and then
/// finds nothing to take.
class part_schedule : public std::enable_shared_from_this<part_schedule> {
public:
  /// `max_loops` 0: parts are started one by one (run_parts); else loops take them, one of them
  /// on the caller's thread if `caller_helps`.
  part_schedule(const graph_partition& partition, tensor_map inputs, std::size_t max_loops,
                bool caller_helps)
    : partition_(partition), part_count_(partition.parts.size()), values_(std::move(inputs)),
      max_loops_(max_loops), caller_helps_(caller_helps) {
    auto [waiting, needed_by] = waits_of(partition.parts);
    waiting_ = std::move(waiting);
    needed_by_ = std::move(needed_by);
    for (auto pid : partition.toposorted_part_ids)
      if (waiting_[pid] == 0)
        ready_.push_back(pid);
  }

  tensor_map run(const part_starter& start) {
    std::unique_lock lock{mutex_};
    while (!settled_locked()) {
      std::vector<ready_part> starting;
      while (auto next = take_locked())
        starting.push_back(std::move(*next));
      if (starting.empty()) {
        caller_.wait(lock);
        continue;
      }
      // Started without the lock: a part may finish, and report, before start returns.
      lock.unlock();
      for (auto& [pid, part_inputs] : starting) {
        const auto id = pid;
        try {
          start(id, std::move(part_inputs),
                [schedule = shared_from_this(), id](tensor_map out, std::exception_ptr error) {
                  schedule->finish(id, std::move(out), std::move(error));
                });
        } catch (...) {
          finish(id, {}, std::current_exception());
        }
      }
      lock.lock();
    }
    return result_locked();
  }

  tensor_map run(const loop_launcher& launch) {
    std::unique_lock lock{mutex_};
    while (!settled_locked()) {
      const auto count = loops_wanted_locked();
      if (count == 0) {
        caller_.wait(lock);
        continue;
      }
      loops_ += count;
      lock.unlock();
      for (std::size_t i = caller_helps_ ? 1 : 0; i < count; ++i)
        launch_loop(launch);
      if (caller_helps_)
        loop();
      lock.lock();
    }
    return result_locked();
  }

private:
  /// The next ready part, counted as running; none when none is ready or a part failed.
  std::optional<ready_part> take_locked() {
    if (failure_ || ready_.empty())
      return std::nullopt;
    ready_part next{ready_.front(), {}};
    for (const auto& name : partition_.parts.at(next.pid).all_input_names())
      if (auto at = values_.find(name); at != values_.end())
        next.inputs.emplace(name, at->second);
    ready_.pop_front();
    ++running_;
    return next;
  }

  void finish(part_id pid, tensor_map outputs, std::exception_ptr error) {
    std::lock_guard guard{mutex_};
    finish_locked(pid, std::move(outputs), std::move(error));
    wake_caller_locked();
  }

  void finish_locked(part_id pid, tensor_map outputs, std::exception_ptr error) {
    --running_;
    ++finished_;
    if (error && !failure_)
      failure_ = std::move(error);
    for (auto user : needed_by_[pid])
      if (--waiting_[user] == 0)
        ready_.push_back(user);
    for (auto& [name, value] : outputs)
      values_.insert_or_assign(name, std::move(value));
  }

  void launch_loop(const loop_launcher& launch) {
    const auto lost = [schedule = shared_from_this()](std::exception_ptr error) {
      schedule->lose_loop(std::move(error));
    };
    try {
      launch([schedule = shared_from_this()] { schedule->loop(); }, lost);
    } catch (...) {
      lost(std::current_exception());
    }
  }

  void lose_loop(std::exception_ptr error) {
    std::lock_guard guard{mutex_};
    --loops_;
    if (!failure_)
      failure_ = std::move(error);
    wake_caller_locked();
  }

  /// A loop's body: it takes parts until none is ready, and never throws (its launcher would
  /// report the loop lost, and count it twice).
  void loop() noexcept {
    std::unique_lock lock{mutex_};
    std::optional<ready_part> next;
    try {
      next = take_locked();
    } catch (...) {
      failure_ = failure_ ? failure_ : std::current_exception();
    }
    while (next) {
      lock.unlock();
      tensor_map outputs;
      std::exception_ptr error;
      try {
        outputs = evaluate(part_outputs(partition_, next->pid), next->inputs);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      try {
        finish_locked(next->pid, std::move(outputs), std::move(error));
        next = take_locked();
      } catch (...) {
        failure_ = failure_ ? failure_ : std::current_exception();
        next.reset();
      }
    }
    --loops_;
    wake_caller_locked(); // under the lock, as every change the caller reads
  }

  /// Loops to launch: one for each ready part that no loop already launched will take.
  std::size_t loops_wanted_locked() const {
    const auto idle = loops_ - running_; // launched, or between parts: each takes a ready one
    if (failure_ || ready_.size() <= idle || loops_ >= max_loops_)
      return 0;
    return std::min(ready_.size() - idle, max_loops_ - loops_);
  }

  /// No part runs, and none will start: all are done, or one failed. A loop launched may not
  /// have started yet (it may wait behind the very task that runs this partition): it holds
  /// nothing up, and takes nothing when it runs.
  bool settled_locked() const { return running_ == 0 && (failure_ || finished_ == part_count_); }

  /// Wakes the caller's thread only when it has something to do: else it would take a core
  /// from the parts.
  void wake_caller_locked() {
    const bool startable =
      max_loops_ == 0 ? !failure_ && !ready_.empty() : loops_wanted_locked() > 0;
    if (startable || settled_locked())
      caller_.notify_one();
  }

  tensor_map result_locked() {
    if (failure_)
      std::rethrow_exception(failure_);
    return std::move(values_);
  }

  const graph_partition& partition_; // the caller's: read only for parts taken before settling
  const std::size_t part_count_;
  std::mutex mutex_;
  std::condition_variable caller_;
  std::map<part_id, std::size_t> waiting_;
  std::map<part_id, std::vector<part_id>> needed_by_;
  std::deque<part_id> ready_;
  tensor_map values_;
  const std::size_t max_loops_;
  const bool caller_helps_;
  std::size_t running_ = 0, finished_ = 0, loops_ = 0;
  std::exception_ptr failure_;
};

} // namespace

tensor_map run_parts(const graph_partition& partition, tensor_map inputs,
                     const part_starter& start) {
  return std::make_shared<part_schedule>(partition, std::move(inputs), 0, false)->run(start);
}

tensor_map run_parts_in_loops(const graph_partition& partition, tensor_map inputs,
                              std::size_t max_loops, bool caller_helps,
                              const loop_launcher& launch) {
  return std::make_shared<part_schedule>(partition, std::move(inputs),
                                         std::max<std::size_t>(max_loops, 1), caller_helps)
    ->run(launch);
}

node_ptr part_outputs(const graph_partition& partition, part_id pid) {
  std::map<std::string, node_ptr> named;
  for (const auto& name : partition.parts.at(pid).output_names)
    named.emplace(name, partition.var_name_to_result.at(name));
  return make_outputs(named);
}

} // namespace troupe::graph::detail
