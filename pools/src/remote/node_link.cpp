#include "remote/node_link.hpp"

#include "process/chunk_runner.hpp"
#include "remote/pieces.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/detail/worker_mains.hpp"
#include "troupe/actors/network.hpp"
#include "troupe/actors/peer_proof.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/pools/pool_options.hpp"

#include <caf/all.hpp>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

using hello_atom = caf::atom_constant<caf::atom("nodehello")>; // node -> gate: a nonce, please
using enter_atom = caf::atom_constant<caf::atom("nodeenter")>; // node -> gate: the proof
using piece_atom = caf::atom_constant<caf::atom("piece")>; // a piece of a batch
using watch_atom = caf::atom_constant<caf::atom("watch")>; // node: monitor the pool's side

constexpr auto node_answer_timeout = 15s;
constexpr std::size_t max_open_nonces = 1024;

/// Installed at static initialisation: `--troupe-join=HOST:PORT` makes this program a node.
const bool join_main_installed = (install_join_main(&run_remote_node), true);

std::string label_of(const caf::actor& node) { return "node " + to_string(node.node()); }

// ---- the pool's side -----------------------------------------------------------------------

/// Receives one node slot's replies, and watches it.
struct receiver_state {
  std::weak_ptr<node_link> link;
  reassembler pieces;
  static inline const char* name = "troupe.node_receiver";
};

caf::behavior receiver(caf::stateful_actor<receiver_state>* self, std::weak_ptr<node_link> link,
                       caf::actor node) {
  self->state.link = std::move(link);
  self->monitor(node);
  self->set_default_handler(caf::drop);
  self->set_down_handler([self](caf::down_msg& down) {
    const handling scope{self};
    if (auto link = self->state.link.lock())
      link->lost("was lost (" + to_string(down.reason) +
                 "): it died, froze past the heartbeat timeout, or its connection broke");
    self->quit();
  });
  return {
    [self](piece_atom, std::uint32_t index, std::uint32_t count, std::vector<char>& piece) {
      const handling scope{self};
      auto whole = self->state.pieces.add(index, count, std::move(piece));
      auto link = self->state.link.lock();
      if (!link)
        return;
      if (self->state.pieces.broken())
        link->lost("broke the protocol (a piece out of order or too large)");
      else if (whole)
        link->delivered(std::move(*whole));
    },
  };
}

/// Refusals logged at most once a second, with how many there were.
class refusal_log {
public:
  void refused(const std::string& why) {
    ++count_;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < 1s)
      return;
    std::cerr << "troupe: refused " << count_ << " worker node" << (count_ == 1 ? "" : "s")
              << " (last: " << why << ")" << std::endl;
    count_ = 0;
    last_ = now;
  }

private:
  std::size_t count_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

struct gate_state {
  runtime_state* rt = nullptr;
  std::string secret;
  std::function<void(std::shared_ptr<worker_link>)> joined;
  std::map<caf::actor_addr, std::string> nonces; // handed out, not yet answered
  refusal_log refusals;
  static inline const char* name = "troupe.node_gate";
};

using join_reply = caf::result<bool, caf::actor>;

join_reply admit(caf::stateful_actor<gate_state>* self, const std::string& proof,
                 const caf::actor& node) {
  auto& st = self->state;
  auto at = st.nonces.find(node.address());
  const bool known = at != st.nonces.end();
  bool proven = known && st.secret.empty();
  if (known && !proven) {
    try {
      proven = same_proof(proof, proof_of(st.secret, at->second));
    } catch (const std::exception&) { // OpenSSL failed: no proof can be checked
    }
  }
  if (known)
    st.nonces.erase(at);
  if (!proven) {
    st.refusals.refused(label_of(node) + (known ? ": wrong secret" : ": no nonce asked for"));
    return join_reply{false, caf::actor{}};
  }
  auto link = std::make_shared<node_link>(*st.rt, node, label_of(node));
  auto watcher = self->spawn(receiver, std::weak_ptr<node_link>{link}, node);
  link->attach(watcher);
  st.joined(std::move(link));
  return join_reply{true, watcher};
}

caf::behavior gate(caf::stateful_actor<gate_state>* self, runtime_state* rt, std::string secret,
                   std::function<void(std::shared_ptr<worker_link>)> joined) {
  self->state.rt = rt;
  self->state.secret = std::move(secret);
  self->state.joined = std::move(joined);
  self->set_default_handler(caf::drop);
  return {
    [self](hello_atom, const caf::actor& node) {
      const handling scope{self};
      auto& nonces = self->state.nonces;
      if (nonces.size() >= max_open_nonces) // strangers asking and never answering
        nonces.erase(nonces.begin());
      std::string nonce;
      try {
        nonce = make_nonce();
      } catch (const std::exception& e) { // no randomness: nobody can join
        self->state.refusals.refused(std::string{"no nonce: "} + e.what());
        return nonce;
      }
      nonces[node.address()] = nonce;
      return nonce;
    },
    [self](enter_atom, const std::string& proof, const caf::actor& node) {
      const handling scope{self};
      return admit(self, proof, node);
    },
  };
}

} // namespace

node_link::node_link(runtime_state& rt, caf::actor node, std::string label)
  : rt_(rt), node_(std::move(node)), label_(std::move(label)) {}

node_link::~node_link() { kill(); }

bool node_link::send(const request_batch& requests) {
  if (!alive())
    return false;
  const auto bytes = serialize(requests);
  send_in_pieces(bytes, [&](std::uint32_t index, std::uint32_t count, std::vector<char> piece) {
    send_from_outside(node_, piece_atom::value, index, count, std::move(piece));
  });
  return true;
}

std::optional<reply_batch> node_link::receive(std::chrono::milliseconds wait) {
  std::unique_lock lock{mutex_};
  if (!arrived_.wait_for(lock, wait, [&] { return !replies_.empty(); }))
    return std::nullopt;
  auto bytes = std::move(replies_.front());
  replies_.pop_front();
  lock.unlock();
  return deserialize<reply_batch>(std::as_bytes(std::span{bytes}));
}

bool node_link::alive() {
  std::lock_guard guard{mutex_};
  return !lost_.has_value();
}

std::string node_link::lost_reason() const {
  std::lock_guard guard{mutex_};
  return lost_.value_or("is alive");
}

void node_link::kill() {
  lost("was let go");
  if (node_)
    caf::anon_send_exit(node_, caf::exit_reason::user_shutdown);
  if (receiver_)
    caf::anon_send_exit(receiver_, caf::exit_reason::user_shutdown);
  node_ = nullptr;
  receiver_ = nullptr;
}

void node_link::delivered(std::vector<char> replies) {
  {
    std::lock_guard guard{mutex_};
    replies_.push_back(std::move(replies));
  }
  arrived_.notify_all();
}

void node_link::lost(std::string why) {
  std::function<void()> notify;
  {
    std::lock_guard guard{mutex_};
    if (lost_)
      return;
    lost_ = std::move(why);
    notify = std::move(notify_lost_);
  }
  arrived_.notify_all();
  if (notify)
    notify();
}

void node_link::on_lost(std::function<void()> notify) {
  std::unique_lock lock{mutex_};
  if (!lost_) {
    notify_lost_ = std::move(notify);
    return;
  }
  lock.unlock();
  notify();
}

node_gate::node_gate(runtime_state& rt, const process_pool_options& options,
                     std::function<void(std::shared_ptr<worker_link>)> joined)
  : rt_(rt) {
  (void)join_main_installed;
  const bool tls = options.tls.has_value();
  check_listen_allowed(options.listen_address, tls, options.allow_insecure);
  if (tls)
    use_tls(rt, *options.tls);
  gate_ = rt.system->spawn(gate, &rt, options.remote_secret, std::move(joined));
  try {
    link_policy policy{options.remote_secret, {}, tls};
    policy.name = own_link_name(rt, policy, "pool");
    port_ = publish(rt, gate_, {options.listen_address, options.listen_port}, policy);
  } catch (...) {
    caf::anon_send_exit(gate_, caf::exit_reason::user_shutdown);
    throw;
  }
}

node_gate::~node_gate() {
  unpublish(rt_, gate_, port_);
  caf::anon_send_exit(gate_, caf::exit_reason::user_shutdown);
}

// ---- the node's side -----------------------------------------------------------------------

namespace {

/// Batches the node has received, for its main thread.
class node_inbox {
public:
  void push(std::vector<char> batch) {
    {
      std::lock_guard guard{mutex_};
      batches_.push_back(std::move(batch));
    }
    changed_.notify_all();
  }
  void close() {
    {
      std::lock_guard guard{mutex_};
      closed_ = true;
    }
    changed_.notify_all();
  }
  /// The next batch; nullopt once closed and drained.
  std::optional<std::vector<char>> pop() {
    std::unique_lock lock{mutex_};
    changed_.wait(lock, [&] { return closed_ || !batches_.empty(); });
    if (batches_.empty())
      return std::nullopt;
    auto batch = std::move(batches_.front());
    batches_.pop_front();
    return batch;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<char>> batches_;
  bool closed_ = false;
};

struct node_state {
  std::shared_ptr<node_inbox> inbox;
  reassembler pieces;
  static inline const char* name = "troupe.node";
};

caf::behavior node_actor(caf::stateful_actor<node_state>* self, std::shared_ptr<node_inbox> inbox) {
  self->state.inbox = std::move(inbox);
  self->set_default_handler(caf::drop);
  // The pool went away, or let this node go.
  self->set_down_handler([self](caf::down_msg&) {
    const handling scope{self};
    self->state.inbox->close();
    self->quit();
  });
  self->set_exit_handler([self](caf::exit_msg& exit) {
    const handling scope{self};
    self->state.inbox->close();
    self->quit(exit.reason);
  });
  return {
    [self](watch_atom, const caf::actor& pool_side) {
      const handling scope{self};
      self->monitor(pool_side);
    },
    [self](piece_atom, std::uint32_t index, std::uint32_t count, std::vector<char>& piece) {
      const handling scope{self};
      if (auto whole = self->state.pieces.add(index, count, std::move(piece)))
        self->state.inbox->push(std::move(*whole));
      else if (self->state.pieces.broken())
        self->state.inbox->close();
    },
  };
}

/// Proves the secret to the gate; the pool's side of this slot, or nullopt if refused.
std::optional<caf::actor> enter(runtime_state& state, const caf::actor& gate,
                                const caf::actor& me) {
  const char* secret = std::getenv("TROUPE_SECRET");
  caf::scoped_actor self{*state.system};
  std::string nonce;
  std::optional<caf::actor> admitted;
  self->request(gate, node_answer_timeout, hello_atom::value, me)
    .receive([&](std::string& given) { nonce = std::move(given); }, [](caf::error&) {});
  if (nonce.empty())
    return std::nullopt;
  self
    ->request(gate, node_answer_timeout, enter_atom::value,
              proof_of(secret != nullptr ? secret : "", nonce), me)
    .receive(
      [&](bool ok, caf::actor& pool_side) {
        if (ok)
          admitted = std::move(pool_side);
      },
      [](caf::error&) {});
  return admitted;
}

void serve_batches(node_inbox& inbox, const caf::actor& pool_side) {
  chunk_runner runner{0, "node " + std::to_string(getpid()), ""};
  while (auto bytes = inbox.pop()) {
    request_batch batch;
    try {
      batch = deserialize<request_batch>(std::as_bytes(std::span{*bytes}));
    } catch (const serialization_error&) {
      continue;
    }
    if (batch.slot)
      runner.set_index(*batch.slot);
    if (batch.context)
      runner.install(*batch.context);
    reply_batch replies;
    for (const auto& request : batch.chunks)
      replies.chunks.push_back(runner.run(request));
    send_in_pieces(
      serialize(replies), [&](std::uint32_t index, std::uint32_t count, std::vector<char> piece) {
        send_from_outside(pool_side, piece_atom::value, index, count, std::move(piece));
      });
  }
}

/// One worker slot: joins, serves batches until the pool lets it go or goes away.
int serve_one_slot(const std::string& address) {
  runtime_state state{1};
  try {
    const auto at = parse_endpoint(address, "--troupe-join");
    const auto tls = tls_options::from_environment();
    if (tls)
      use_tls(state, *tls);
    const char* secret = std::getenv("TROUPE_SECRET");
    link_policy policy{secret != nullptr ? secret : "", {}, tls.has_value()};
    policy.name = own_link_name(state, policy, "node-" + std::to_string(getpid()));
    auto gate = connect(state, at, policy, std::chrono::steady_clock::now() + node_answer_timeout);
    auto inbox = std::make_shared<node_inbox>();
    auto me = state.system->spawn(node_actor, inbox);
    auto pool_side = enter(state, gate, me);
    if (!pool_side) {
      std::cerr << "troupe: the pool at " << address
                << " refused this node (wrong TROUPE_SECRET, or no answer)\n";
      caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
      return 1;
    }
    send_from_outside(me, watch_atom::value, *pool_side);
    serve_batches(*inbox, *pool_side);
    caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "troupe: cannot join the pool at " << address << ": " << e.what() << "\n";
    return dynamic_cast<const invalid_argument*>(&e) != nullptr ? 2 : 1;
  }
}

} // namespace

int run_remote_node(const std::string& address) {
  // TROUPE_NODE_WORKERS slots per node, one process each. This runs from runtime's constructor
  // before the actor system starts any thread, so forking is safe.
  int slots = 1;
  if (const char* wanted = std::getenv("TROUPE_NODE_WORKERS"); wanted != nullptr && *wanted) {
    char* end = nullptr;
    const long n = std::strtol(wanted, &end, 10);
    if (*end != '\0' || n < 1 || n > 1024) {
      std::cerr << "troupe: TROUPE_NODE_WORKERS must be a number from 1 to 1024, got '" << wanted
                << "'\n";
      return 2;
    }
    slots = static_cast<int>(n);
  }
  std::vector<pid_t> siblings;
  for (int i = 1; i < slots; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); // killing the node kills all its slots
      std::exit(serve_one_slot(address));
    }
    if (pid > 0)
      siblings.push_back(pid);
  }
  int status = serve_one_slot(address);
  for (pid_t pid : siblings) {
    int sibling = 0;
    waitpid(pid, &sibling, 0);
    if (status == 0)
      status = WIFEXITED(sibling) ? WEXITSTATUS(sibling) : 1;
  }
  return status;
}

} // namespace troupe::detail
