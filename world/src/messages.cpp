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

wire_bytes to_wire(const bytes& payload) {
  const auto* data = reinterpret_cast<const char*>(payload.data());
  return wire_bytes(data, data + payload.size());
}

std::span<const std::byte> from_wire(const wire_bytes& payload) {
  return std::as_bytes(std::span{payload});
}

} // namespace troupe::detail
