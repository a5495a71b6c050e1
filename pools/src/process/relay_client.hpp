// A worker process's side of handles to actors of the process that started it: such a handle,
// decoded here (a task's argument), relays each call on the reply queue of the channel its
// thread serves, and a reader thread per channel takes the answers (relay_host.cpp is the other
// side). Threads of the worker's own making relay through the process's main channel.
#pragma once

#include <string>

namespace troupe::detail {

/// Installs the resolver of such handles, relaying through the channel with queues named
/// `main_stem`-rep and -ans unless the calling thread serves another (serve_relays_through).
void install_relays(const std::string& main_stem);

/// The calling thread serves the channel `stem`: handles it calls relay through it.
void serve_relays_through(const std::string& stem);

} // namespace troupe::detail
