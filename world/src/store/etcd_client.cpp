#include "etcd_client.hpp"

#include "etcd_codec.hpp"
#include "troupe/actors/error.hpp"

namespace troupe::detail::etcd {

namespace {

/// gRPC's codes for "this server cannot answer now, another may": unavailable (no leader, or
/// cut off from it), deadline exceeded (a proposal that did not commit in time), aborted.
constexpr std::int64_t not_found = 5; // gRPC's NOT_FOUND

bool another_server_may_answer(std::int64_t code) { return code == 14 || code == 4 || code == 10; }

key_value item_of(const nlohmann::json& kv) {
  return {bytes_field(kv, "key"), bytes_field(kv, "value"), number_field(kv, "create_revision"),
          number_field(kv, "mod_revision"), number_field(kv, "lease")};
}

nlohmann::json put_request(const std::string& key, const std::string& value, std::int64_t lease) {
  nlohmann::json body{{"key", base64(key)}, {"value", base64(value)}};
  if (lease != 0)
    body["lease"] = std::to_string(lease);
  return body;
}

} // namespace

client::client(client_settings settings) : settings_{std::move(settings)} {
  if (settings_.endpoints.empty())
    throw invalid_argument("the world's store names no etcd server");
}

nlohmann::json client::call(std::string_view path, const nlohmann::json& body) {
  std::scoped_lock lock{mutex_};
  return try_servers(path, body, clock::now() + settings_.request_timeout);
}

// Each server gets an equal share of the time left (at least 300 ms), so one that swallows
// packets does not take all of it.
nlohmann::json client::try_servers(std::string_view path, const nlohmann::json& body,
                                   clock::time_point deadline) {
  std::string failures;
  for (std::size_t tried = 0; tried < settings_.endpoints.size(); ++tried) {
    const auto now = clock::now();
    if (now >= deadline)
      break;
    const auto left = settings_.endpoints.size() - tried;
    const auto share =
      std::max<clock::duration>((deadline - now) / left, std::chrono::milliseconds{300});
    if (!connection_)
      connection_ = std::make_unique<connection>(settings_.endpoints[current_], settings_.tls,
                                                 settings_.max_reply_bytes);
    try {
      ++requests_;
      auto answer = connection_->post(path, body, std::min(deadline, now + share));
      const auto& document = answer.document;
      if (!document.is_object())
        throw network_error("etcd at " + connection_->endpoint().text() +
                            " answered with a malformed document (not an object)");
      if (!document.contains("error") && answer.status == 200)
        return std::move(answer.document);
      const auto code = number_field(document, "code");
      const std::string message = document.contains("message") && document["message"].is_string()
                                    ? document["message"].get<std::string>()
                                    : "HTTP status " + std::to_string(answer.status);
      if (!another_server_may_answer(code))
        throw refusal(code, "etcd at " + connection_->endpoint().text() + " refused " +
                              std::string{path} + ": " + message);
      failures += (failures.empty() ? "" : "; ") + connection_->endpoint().text() + ": " + message;
    } catch (const timeout_error& e) {
      failures += (failures.empty() ? "" : "; ") + std::string{e.what()};
    } catch (const refusal&) {
      throw;
    } catch (const network_error& e) {
      failures += (failures.empty() ? "" : "; ") + std::string{e.what()};
    }
    connection_.reset();
    current_ = (current_ + 1) % settings_.endpoints.size();
  }
  throw network_error("no etcd server of the world's store answered " + std::string{path} +
                      " in time" + (failures.empty() ? "" : " (" + failures + ")"));
}

std::int64_t client::put(const std::string& key, const std::string& value, std::int64_t lease) {
  const auto answer = call("/v3/kv/put", put_request(key, value, lease));
  return number_field(object_field(answer, "header"), "revision");
}

bool client::create(const std::string& key, const std::string& value, std::int64_t lease) {
  return create_all({{key, value}}, lease) != 0;
}

std::int64_t client::create_all(const std::vector<std::pair<std::string, std::string>>& items,
                                std::int64_t lease) {
  nlohmann::json compare = nlohmann::json::array();
  nlohmann::json success = nlohmann::json::array();
  nlohmann::json failure = nlohmann::json::array();
  for (const auto& [key, value] : items) {
    compare.push_back({{"key", base64(key)}, {"target", "CREATE"}, {"create_revision", "0"}});
    success.push_back({{"request_put", put_request(key, value, lease)}});
    failure.push_back({{"request_range", {{"key", base64(key)}}}});
  }
  const auto answer =
    call("/v3/kv/txn", {{"compare", compare}, {"success", success}, {"failure", failure}});
  if (flag_field(answer, "succeeded"))
    return number_field(object_field(answer, "header"), "revision");
  // A try whose answer was lost, retried on another server, finds its own keys: made here.
  const auto& responses = array_field(answer, "responses");
  if (lease == 0 || responses.size() != items.size())
    return 0;
  std::int64_t made_at = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& response = responses[i];
    if (!response.is_object() || !response.contains("response_range"))
      return 0;
    const auto& found = array_field(response["response_range"], "kvs");
    if (found.size() != 1)
      return 0;
    const auto item = item_of(found.front());
    if (item.lease != lease || item.value != items[i].second)
      return 0;
    made_at = item.create_revision;
  }
  return made_at;
}

std::optional<key_value> client::get(const std::string& key, std::int64_t at_revision) {
  nlohmann::json request{{"key", base64(key)}};
  if (at_revision > 0)
    request["revision"] = std::to_string(at_revision);
  const auto answer = call("/v3/kv/range", request);
  const auto& items = array_field(answer, "kvs");
  if (items.empty())
    return std::nullopt;
  return item_of(items.front());
}

range_read client::prefix(const std::string& prefix, std::int64_t limit) {
  const auto answer = call("/v3/kv/range", {{"key", base64(prefix)},
                                            {"range_end", base64(prefix_end(prefix))},
                                            {"limit", std::to_string(limit)}});
  if (flag_field(answer, "more"))
    throw capacity_error("the world's store holds more than " + std::to_string(limit) +
                         " keys under '" + prefix + "'");
  range_read read{{}, number_field(object_field(answer, "header"), "revision")};
  for (const auto& kv : array_field(answer, "kvs"))
    read.items.push_back(item_of(kv));
  return read;
}

bool client::erase(const std::string& key) {
  const auto answer = call("/v3/kv/deleterange", {{"key", base64(key)}});
  return number_field(answer, "deleted") > 0;
}

std::int64_t client::grant(std::chrono::seconds ttl) {
  const auto answer = call("/v3/lease/grant", {{"TTL", std::to_string(ttl.count())}});
  const auto id = number_field(answer, "ID");
  if (id == 0)
    throw network_error("etcd granted a lease without an id");
  return id;
}

std::optional<std::chrono::seconds> client::keep_alive(std::int64_t lease) {
  const auto answer = call("/v3/lease/keepalive", {{"ID", std::to_string(lease)}});
  const auto ttl = number_field(object_field(answer, "result"), "TTL");
  if (ttl <= 0)
    return std::nullopt;
  return std::chrono::seconds{ttl};
}

void client::revoke(std::int64_t lease) {
  try {
    call("/v3/lease/revoke", {{"ID", std::to_string(lease)}});
  } catch (const refusal& e) {
    if (e.code() != not_found) // an expired lease: nothing to end
      throw;
  }
}

std::uint64_t client::requests() const {
  std::scoped_lock lock{mutex_};
  return requests_;
}

} // namespace troupe::detail::etcd
