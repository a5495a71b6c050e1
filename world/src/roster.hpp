// What a joining member and rank 0 tell each other: the member's details with its join, and
// rank 0's roster in its answer (each member's name, host, port and devices by rank, for every
// rank the world may have, which of them are gone, and the world's id, which names its inboxes).
#pragma once

#include "troupe/actors/serialization.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace troupe::detail {

/// roster::gone's values.
enum class gone_as : std::uint8_t { present, lost, left };

struct roster {
  std::vector<std::string> names, hosts; // "" for a rank no member holds
  std::vector<std::uint16_t> ports;
  std::vector<std::vector<std::string>> devices;
  /// By rank: whether its member is gone (a joiner must not count it), and how.
  std::vector<std::uint8_t> gone;
  std::string world_id;
  /// The joiner's incarnation: 1 the first time it joins, more when it joins again after it
  /// was lost (a new process under its old name and rank).
  std::uint32_t incarnation = 1;
};

std::vector<std::byte> encode_roster(const roster& members);
/// The roster in `bytes`: serialization_error for bytes that hold none, or for one that does not
/// list `capacity` of each (the member actor indexes its tables by rank with them).
roster read_roster(std::span<const std::byte> bytes, int capacity);

/// What a member says of itself when it joins, beyond the join's fields.
struct join_details {
  std::vector<std::string> devices;
  std::int32_t max_world_size = 0; // the most members it expects the world to have
};

std::vector<std::byte> encode_join_details(const join_details& details);
/// The details in `bytes`; serialization_error for bytes that hold none.
join_details read_join_details(std::span<const std::byte> bytes);

} // namespace troupe::detail
