#include "troupe/servers/push_pull_model_server.hpp"

namespace troupe {

std::string detail::model_store_name(const std::string& server) { return server + "_o_server"; }

push_pull_model_server_host::push_pull_model_server_host(rpc_group group, const std::string& name)
  : store_(std::move(group), detail::model_store_name(name)) {}

push_pull_model_server::push_pull_model_server(rpc_group group, const std::string& name,
                                               std::string model_name,
                                               std::optional<std::chrono::milliseconds> timeout)
  : store_(std::move(group), detail::model_store_name(name), timeout), key_(std::move(model_name)) {
}

bool push_pull_model_server::push(versioned_model& model, bool pull_on_fail) {
  if (store_.push_blob(key_, detail::blob(serialize(model.state)), model.base() + 1,
                       model.base())) {
    model.version = model.base() + 1;
    return true;
  }
  if (pull_on_fail)
    pull(model);
  return false;
}

bool push_pull_model_server::pull(versioned_model& model) {
  auto newest = store_.pull_blob_newer(key_, model.version.value_or(no_version));
  if (!newest)
    return false;
  if (newest->first) {
    model.state = deserialize<state_dict>(newest->first->bytes());
    model.version = newest->second;
  }
  return true;
}

} // namespace troupe
