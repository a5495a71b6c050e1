#include "member_messages.hpp"

namespace troupe::detail {

std::exception_ptr exception_for(reply_status status, const std::string& text) {
  switch (status) {
  case reply_status::ok: break;
  case reply_status::invalid_argument: return std::make_exception_ptr(invalid_argument(text));
  case reply_status::key_error: return std::make_exception_ptr(key_error(text));
  case reply_status::state_error: return std::make_exception_ptr(state_error(text));
  case reply_status::serialization_error: return std::make_exception_ptr(serialization_error(text));
  case reply_status::peer_lost: return std::make_exception_ptr(peer_lost(text));
  }
  return std::make_exception_ptr(state_error("unexpected reply status: " + text));
}

wire_bytes to_wire(const bytes& payload) {
  const auto* data = reinterpret_cast<const char*>(payload.data());
  return wire_bytes(data, data + payload.size());
}

std::span<const std::byte> from_wire(const wire_bytes& payload) {
  return std::as_bytes(std::span{payload});
}

} // namespace troupe::detail
