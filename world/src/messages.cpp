#include "member_messages.hpp"

#include <array>

namespace troupe::detail {

namespace {

/// troupe's errors a member's reply may carry, each with the status it travels as: the one
/// place the two are paired, read both ways below.
struct member_error {
  reply_status status;
  const std::string& type;
};

const std::array<member_error, 5>& member_errors() {
  static const std::array<member_error, 5> errors{{
    {reply_status::invalid_argument, type_name<invalid_argument>()},
    {reply_status::key_error, type_name<key_error>()},
    {reply_status::state_error, type_name<state_error>()},
    {reply_status::serialization_error, type_name<serialization_error>()},
    {reply_status::peer_lost, type_name<peer_lost>()},
  }};
  return errors;
}

constexpr std::uint8_t code(reply_status status) { return static_cast<std::uint8_t>(status); }

} // namespace

failure reply_failure(std::uint8_t status, const std::string& text) {
  if (status == code(reply_status::ok))
    return {};
  for (const auto& error : member_errors())
    if (code(error.status) == status)
      return {error.type, text};
  return failure::of<state_error>("unexpected reply status " + std::to_string(status) + ": " +
                                  text);
}

std::uint8_t wire_status(const failure& why) {
  if (!why.failed())
    return code(reply_status::ok);
  if (why.type.empty()) // the request could not be read (failure.hpp)
    return code(reply_status::serialization_error);
  for (const auto& error : member_errors())
    if (error.type == why.type)
      return code(error.status);
  return code(reply_status::state_error);
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
