#include "member_messages.hpp"

namespace troupe::detail {

failure reply_failure(std::uint8_t status, const std::string& text) {
  switch (static_cast<reply_status>(status)) {
  case reply_status::ok: return {};
  case reply_status::invalid_argument: return failure::of<invalid_argument>(text);
  case reply_status::key_error: return failure::of<key_error>(text);
  case reply_status::state_error: return failure::of<state_error>(text);
  case reply_status::serialization_error: return failure::of<serialization_error>(text);
  case reply_status::peer_lost: return failure::of<peer_lost>(text);
  }
  return failure::of<state_error>("unexpected reply status " + std::to_string(status) + ": " +
                                  text);
}

std::uint8_t wire_status(const failure& why) {
  const auto as = [](reply_status status) { return static_cast<std::uint8_t>(status); };
  if (!why.failed())
    return as(reply_status::ok);
  if (why.type == type_name<invalid_argument>())
    return as(reply_status::invalid_argument);
  if (why.type == type_name<key_error>())
    return as(reply_status::key_error);
  if (why.type == type_name<serialization_error>() || why.type.empty())
    return as(reply_status::serialization_error);
  if (why.type == type_name<peer_lost>())
    return as(reply_status::peer_lost);
  return as(reply_status::state_error);
}

reply_result ok_reply(wire_bytes payload) {
  return reply_result{wire_status({}), std::string{}, std::move(payload)};
}

reply_result failed_reply(const failure& why) {
  return reply_result{wire_status(why), why.message, wire_bytes{}};
}

void deliver(reply_promise& promise, const failure& why, wire_bytes payload) {
  promise.deliver(wire_status(why), why.message, std::move(payload));
}

wire_bytes to_wire(const bytes& payload) {
  const auto* data = reinterpret_cast<const char*>(payload.data());
  return wire_bytes(data, data + payload.size());
}

std::span<const std::byte> from_wire(const wire_bytes& payload) {
  return std::as_bytes(std::span{payload});
}

} // namespace troupe::detail
