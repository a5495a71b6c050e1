// What a process started as a worker or a node runs instead of its main(): runtime.hpp's
// constructor hands it over; pools/ installs them.
#pragma once

#include <string>

namespace troupe::detail {

/// The main loop of a worker process, installed by the module that starts worker processes
/// (pools/). `runtime`'s constructor hands a process started with `--troupe-worker=SPEC` to it
/// and exits with what it returns.
using worker_main = int (*)(const std::string& spec);
void install_worker_main(worker_main main) noexcept;
/// Likewise for `--troupe-join=HOST:PORT`: serve a process pool on another host as a node.
void install_join_main(worker_main main) noexcept;

} // namespace troupe::detail
