#pragma once

#include "troupe/actors/tls_options.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace troupe {

/// How a thread pool is made: its workers, their initializer, and how often they are replaced.
struct pool_options {
  /// Number of workers, at least 1. Default: std::thread::hardware_concurrency().
  /// Context pools default to the number of contexts they are given.
  std::optional<int> workers;

  /// Runs once in each worker, in the worker's thread, before its first task. If it throws, the
  /// tasks handed to that worker fail with its exception (rather than never running).
  std::function<void()> initializer;

  /// A worker is replaced by a fresh one (new thread, initializer run again) after running this
  /// many tasks, a task being one chunk. Unset: workers live as long as the pool. At least 1.
  std::optional<std::size_t> max_tasks_per_worker;
};

/// How a process pool is made: its worker processes, their initializer, retries, heartbeats, and
/// the nodes on other hosts it takes.
struct process_pool_options {
  /// Number of worker processes, at least 1. Default: std::thread::hardware_concurrency().
  std::optional<int> workers;

  /// Name of a registered task without arguments (TROUPE_TASK) each worker process runs once
  /// before its first task. If it throws, the chunks given to that worker fail with its
  /// exception (as it comes back from a worker: see troupe/actors/remote_exception.hpp).
  std::string initializer;

  /// A worker process is replaced by a fresh one after running this many tasks (chunks).
  std::optional<std::size_t> max_tasks_per_worker;

  /// A chunk whose worker process died or froze is run again on the replacement up to this
  /// many times before its items fail with troupe::worker_lost.
  std::size_t max_retries = 0;

  /// A worker whose heartbeat has been still this long is taken for frozen: it is killed and
  /// replaced, and what it held fails (or is retried). The clock starts with a worker's first
  /// heartbeat, once the program's static initialisation is done.
  std::chrono::milliseconds heartbeat_timeout{2000};

  /// A worker process that has not beaten its heart this long after it was started (a program
  /// whose static initialisation hangs, say) is killed, and what it held fails with
  /// troupe::worker_lost saying that it did not start.
  std::chrono::milliseconds startup_timeout{60000};

  /// Encoded arguments or results of one chunk (chunksize items) larger than this fail that
  /// chunk's items with troupe::capacity_error naming both sizes, and the pool goes on. 0: any
  /// size the machine's shared memory holds travels (large values through segments of their
  /// own). Otherwise at least 64 KiB.
  std::size_t max_message_bytes = 0;

  /// Non-empty: the pool also takes worker nodes from other hosts, which run this program as
  /// `prog --troupe-join=HOST:PORT` with this secret in the environment variable TROUPE_SECRET.
  /// The secret never crosses the network: a node proves it knows it (an HMAC of a nonce the
  /// pool makes). A node that cannot is refused, and refusals are logged on stderr, at most one
  /// line a second.
  std::string remote_secret;
  /// Nodes over TLS (this certificate, and every node's checked against the CA); a node
  /// without a certificate from that CA is refused. A node takes its own from TROUPE_TLS_CERT,
  /// TROUPE_TLS_KEY, TROUPE_TLS_CA (and TROUPE_TLS_PASSPHRASE). With TLS alone (no secret), the
  /// certificate is the credential. Setting it takes nodes even without a secret.
  std::optional<tls_options> tls;
  /// Where the pool listens for nodes: loopback unless you ask for more, and beyond loopback
  /// only with TLS or allow_insecure.
  std::string listen_address = "127.0.0.1";
  /// Lets the pool listen beyond loopback without TLS (logged): the secret still keeps
  /// strangers out, but the traffic is neither encrypted nor authenticated.
  bool allow_insecure = false;
  /// 0 picks a free port (see process_pool::listen_port()).
  std::uint16_t listen_port = 0;
};

} // namespace troupe
