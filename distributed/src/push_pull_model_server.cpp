#include "troupe/distributed/push_pull_model_server.hpp"

namespace troupe {

namespace {

std::string store_name(const std::string& server) { return server + "_o_server"; }

} // namespace

push_pull_model_server_host::push_pull_model_server_host(rpc_group group, const std::string& name)
  : store_(std::move(group), store_name(name)) {}

push_pull_model_server::push_pull_model_server(rpc_group group, const std::string& name,
                                               std::string model_name)
  : store_(std::move(group), store_name(name)), key_(std::move(model_name)) {}

bool push_pull_model_server::push(versioned_model& model, bool pull_on_fail) {
  if (store_.push_blob(key_, detail::to_blob(serialize(model.state)), model.version + 1,
                       model.version)) {
    ++model.version;
    return true;
  }
  if (pull_on_fail)
    pull(model);
  return false;
}

bool push_pull_model_server::pull(versioned_model& model) {
  auto newest = store_.pull_blob(key_, std::nullopt);
  if (!newest)
    return false;
  if (newest->second > model.version) {
    model.state = deserialize<state_dict>(detail::blob_bytes(newest->first));
    model.version = newest->second;
  }
  return true;
}

} // namespace troupe
