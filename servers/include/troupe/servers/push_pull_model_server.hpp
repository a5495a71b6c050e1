// push_pull_model_server: a whole model shared through a server, without a collective step
// (machin's PushPullModelServer): workers push their parameters as the next version and pull
// the newest.
//
//   troupe::push_pull_model_server_host host{group, "model_server"};    // on one member
//   troupe::push_pull_model_server server{group, "model_server"};       // on any member
//   troupe::versioned_model model{initial_state};
//   if (!server.push(model)) { /* someone else was first: model now holds the newest */ }
//   server.pull(model);                                                 // the newest, if newer
//
// It keeps the model in an ordered_server ("<name>_o_server") on the host's member: a push is a
// compare-and-set against the version the pusher last saw, so concurrent pushers never lose an
// update without hearing of it.
#pragma once

#include "troupe/servers/ordered_server.hpp"
#include "troupe/servers/state_dict.hpp"

namespace troupe {

namespace detail {
/// The ordered server a model server `server` keeps its models in.
std::string model_store_name(const std::string& server);
} // namespace detail

/// The member that holds a push-pull model server's models (machin's PushPullModelServer).
class push_pull_model_server_host {
public:
  /// Offers the model server `name` to `group` from this member; key_error if the group has it.
  push_pull_model_server_host(rpc_group group, const std::string& name);

private:
  ordered_server_host store_;
};

/// A member's handle to a push-pull model server (machin's PushPullModelServer): pushes a model's
/// state if nobody pushed since, and pulls the newest.
class push_pull_model_server {
public:
  /// With `timeout`, each push and pull waits that long at most (timeout_error).
  push_pull_model_server(rpc_group group, const std::string& name, std::string model_name = "model",
                         std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  /// Pushes `model.state` as version `model.version + 1`. True, and the model's version goes up,
  /// if nobody else pushed since this model's version; otherwise false, and with
  /// `pull_on_fail` the model gets the newest state and version.
  bool push(versioned_model& model, bool pull_on_fail = true);
  /// Loads the newest state into `model` if it is newer than the model's; false only if
  /// nothing was ever pushed.
  bool pull(versioned_model& model);

private:
  ordered_server store_;
  std::string key_;
};

} // namespace troupe
