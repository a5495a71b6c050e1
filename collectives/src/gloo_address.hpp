// Where the other members reach this member's gloo transport.
#pragma once

#include "troupe/collectives/collective_options.hpp"

#include <string>

namespace troupe::detail {

class world_core;

/// collective_options::interface, else TROUPE_SOCKET_IFNAME, else on loopback the world's own
/// host, else the address this member's connection to rank 0 leaves from. A member's host name
/// often resolves to a loopback address (Debian maps it to 127.0.1.1), which is why it is never
/// used. invalid_argument when the choice is a loopback address in a world that is not on
/// loopback, or names an interface this host does not have.
std::string gloo_address(world_core& world, const collective_options& options);

} // namespace troupe::detail
