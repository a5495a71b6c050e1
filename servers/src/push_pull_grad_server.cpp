#include "troupe/servers/push_pull_grad_server.hpp"

#include <algorithm>
#include <iostream>

namespace troupe {

namespace {

constexpr std::int32_t secondary_level = 0;
constexpr std::int32_t primary_level = 1;

std::string push_service(const std::string& server, const std::string& member) {
  return server + "/" + member + "/_push_service";
}

std::string primary_of(const rpc_group& group, const grad_server_options& options) {
  return options.primary.empty() ? group.members().front() : options.primary;
}

std::vector<std::string> secondaries_of(const rpc_group& group,
                                        const grad_server_options& options) {
  return options.secondaries.empty() ? group.members() : options.secondaries;
}

/// machin's assertions, as invalid_argument naming the server.
grad_server_options checked(const rpc_group& group, const std::string& name,
                            grad_server_options options) {
  const auto refuse = [&](const std::string& why) {
    throw invalid_argument("gradient server '" + name + "': " + why);
  };
  if (options.reduce_batch_size <= 1)
    refuse("reduce_batch_size must be more than 1, got " +
           std::to_string(options.reduce_batch_size));
  if (options.max_queue_size <= 1 || options.max_queue_size <= options.reduce_batch_size)
    refuse("max_queue_size must be more than 1 and than reduce_batch_size (" +
           std::to_string(options.reduce_batch_size) + "), got " +
           std::to_string(options.max_queue_size));
  if (options.flush_after && options.flush_after->count() <= 0)
    refuse("flush_after must be positive");
  if (options.call_timeout && options.call_timeout->count() <= 0)
    refuse("call_timeout must be positive");
  auto reducers = secondaries_of(group, options);
  reducers.push_back(primary_of(group, options));
  for (const auto& reducer : reducers)
    if (!group.is_member(reducer))
      refuse("reducer '" + reducer + "' is not a member of group '" + group.name() + "'");
  return options;
}

} // namespace

push_pull_grad_server_host::push_pull_grad_server_host(rpc_group group, std::string name,
                                                       grad_server_options options)
  : group_(std::move(group)), name_(std::move(name)),
    options_(checked(group_, name_, std::move(options))),
    primary_(primary_of(group_, options_) == group_.own_name()) {
  if (primary_) {
    parameters_host_ = std::make_unique<push_pull_model_server_host>(group_, name_);
    parameters_ = std::make_unique<ordered_server>(group_, detail::model_store_name(name_));
  }
  group_.register_service(push_service(name_, group_.own_name()),
                          [this](std::int32_t level, detail::blob gradients) {
                            return enqueue(level, std::move(gradients));
                          });
}

push_pull_grad_server_host::~push_pull_grad_server_host() {
  stop();
  try {
    group_.deregister(push_service(name_, group_.own_name()));
  } catch (const troupe::error&) {
    // The group or its world has stopped first: the service went with it.
  }
}

void push_pull_grad_server_host::manage_model(versioned_model model, optimizer_step step,
                                              std::function<void()> schedule) {
  if (!primary_)
    throw state_error("gradient server '" + name_ + "': only the primary reducer '" +
                      primary_of(group_, options_) + "' manages the model");
  if (!step)
    throw invalid_argument("gradient server '" + name_ + "': manage_model needs a step");
  std::lock_guard guard{mutex_};
  if (running_)
    throw state_error("gradient server '" + name_ + "': manage_model before start()");
  parameters_->push_blob(options_.model_name, detail::blob(serialize(model.state)), model.base(),
                         std::nullopt);
  std::lock_guard model_guard{model_mutex_};
  model_ = std::move(model);
  model_.version = model_.base();
  step_ = std::move(step);
  schedule_ = std::move(schedule);
}

versioned_model push_pull_grad_server_host::model() const {
  std::lock_guard guard{model_mutex_};
  return model_;
}

std::size_t push_pull_grad_server_host::queued() const {
  std::lock_guard guard{mutex_};
  return secondary_queue_.items.size() + primary_queue_.items.size();
}

void push_pull_grad_server_host::start() {
  std::lock_guard guard{mutex_};
  if (running_)
    return;
  running_ = true;
  failure_ = nullptr;
  reducer_ = std::thread{[this] { reduce_loop(); }};
}

void push_pull_grad_server_host::stop() noexcept {
  {
    std::lock_guard guard{mutex_};
    running_ = false;
  }
  wake_.notify_all();
  if (reducer_.joinable())
    reducer_.join();
}

void push_pull_grad_server_host::watch() {
  std::lock_guard guard{mutex_};
  if (failure_)
    std::rethrow_exception(failure_);
}

bool push_pull_grad_server_host::enqueue(int level, detail::blob gradients) {
  std::lock_guard guard{mutex_};
  auto& q = level == primary_level ? primary_queue_ : secondary_queue_;
  q.items.emplace_back(std::chrono::steady_clock::now(), std::move(gradients));
  while (q.items.size() > static_cast<std::size_t>(options_.max_queue_size))
    q.items.pop_front(); // machin drops the oldest
  wake_.notify_all();
  return true;
}

std::vector<detail::blob>
push_pull_grad_server_host::due(queue& q, std::chrono::steady_clock::time_point now) {
  const auto batch = static_cast<std::size_t>(options_.reduce_batch_size);
  std::size_t take = 0;
  if (q.items.size() >= batch)
    take = batch;
  else if (!q.items.empty() && options_.flush_after &&
           now - q.items.front().first >= *options_.flush_after)
    take = q.items.size();
  std::vector<detail::blob> out;
  for (std::size_t i = 0; i < take; ++i) {
    out.push_back(std::move(q.items.front().second));
    q.items.pop_front();
  }
  return out;
}

void push_pull_grad_server_host::reduce_loop() {
  const auto poll = options_.flush_after
                      ? std::max(*options_.flush_after / 4, std::chrono::milliseconds{1})
                      : std::chrono::milliseconds{100};
  try {
    std::unique_lock lock{mutex_};
    while (running_) {
      const auto now = std::chrono::steady_clock::now();
      auto primary_batch = step_ ? due(primary_queue_, now) : std::vector<detail::blob>{};
      auto secondary_batch = due(secondary_queue_, now);
      if (primary_batch.empty() && secondary_batch.empty()) {
        warn_if_waiting(now);
        wake_.wait_for(lock, poll);
        continue;
      }
      lock.unlock();
      if (!primary_batch.empty())
        step_model(reduce(primary_batch));
      if (!secondary_batch.empty()) {
        const auto reduced = detail::blob(serialize(reduce(secondary_batch)));
        const auto& primary = primary_of(group_, options_);
        if (primary_)
          enqueue(primary_level, reduced);
        else
          group_.registered_sync<bool>(push_service(name_, primary), primary_level, reduced);
      }
      lock.lock();
    }
  } catch (...) {
    std::lock_guard guard{mutex_};
    failure_ = std::current_exception();
    running_ = false;
  }
}

void push_pull_grad_server_host::warn_if_waiting(std::chrono::steady_clock::time_point now) {
  if (warned_waiting_ || options_.flush_after)
    return;
  for (const auto* q : {&secondary_queue_, &primary_queue_})
    if (!q->items.empty() && now - q->items.front().first > std::chrono::seconds{1}) {
      warned_waiting_ = true;
      std::cerr << "troupe: gradient server '" << name_ << "': " << q->items.size()
                << " gradient(s) have waited over a second for a batch of "
                << options_.reduce_batch_size
                << " (reduce_batch_size, at each level: the model steps once every "
                << options_.reduce_batch_size * options_.reduce_batch_size
                << " pushes, as machin's does); set grad_server_options::flush_after to reduce "
                   "fewer\n";
      return;
    }
}

state_dict push_pull_grad_server_host::reduce(const std::vector<detail::blob>& batch) const {
  auto total = deserialize<state_dict>(batch.front().bytes());
  for (std::size_t i = 1; i < batch.size(); ++i) {
    const auto next = deserialize<state_dict>(batch[i].bytes());
    if (next.size() != total.size())
      throw invalid_argument("gradient server '" + name_ + "': gradients with " +
                             std::to_string(next.size()) + " tensors and with " +
                             std::to_string(total.size()));
    for (auto& [key, tensor] : total) {
      auto other = next.find(key);
      if (other == next.end() || other->second.shape() != tensor.shape())
        throw invalid_argument("gradient server '" + name_ + "': gradient '" + key +
                               "' is missing or shaped differently in one push");
      tensor += other->second;
    }
  }
  if (options_.method == reduce_method::mean)
    for (auto& entry : total)
      entry.second /= static_cast<float>(batch.size());
  return total;
}

void push_pull_grad_server_host::step_model(const state_dict& gradients) {
  std::unique_lock lock{model_mutex_};
  step_(model_.state, gradients);
  if (schedule_)
    schedule_();
  model_.version = model_.base() + 1;
  auto published = detail::blob(serialize(model_.state));
  const auto version = *model_.version;
  lock.unlock();
  parameters_->push_blob(options_.model_name, std::move(published), version, version - 1);
}

push_pull_grad_server::push_pull_grad_server(rpc_group group, std::string name,
                                             grad_server_options options)
  : group_(std::move(group)), name_(std::move(name)),
    secondaries_(secondaries_of(group_, checked(group_, name_, options))),
    timeout_(options.call_timeout), parameters_(group_, name_, options.model_name, timeout_) {}

bool push_pull_grad_server::push(versioned_model& model, const state_dict& gradients) {
  const auto blob = detail::blob(serialize(gradients));
  auto candidates = secondaries_;
  for (;;) {
    std::uniform_int_distribution<std::size_t> pick{0, candidates.size() - 1};
    const auto at = candidates.begin() + static_cast<std::ptrdiff_t>(pick(random_));
    try {
      if (timeout_)
        group_.registered_async<bool>(push_service(name_, *at), *timeout_, secondary_level, blob)
          .get();
      else
        group_.registered_sync<bool>(push_service(name_, *at), secondary_level, blob);
      break;
    } catch (const peer_lost&) {
      // That reducer is gone: another takes the gradients.
    } catch (const key_error&) {
      // Its host was destroyed (or never made): the same.
    }
    candidates.erase(at);
    if (candidates.empty())
      throw peer_lost("gradient server '" + name_ + "': no secondary reducer took the push");
  }
  return pull(model);
}

bool push_pull_grad_server::pull(versioned_model& model) { return parameters_.pull(model); }

} // namespace troupe
