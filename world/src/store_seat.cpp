#include "store_seat.hpp"

#include "store/etcd_connection.hpp"

#include "troupe/actors/detail/readable.hpp"
#include "troupe/actors/peer_proof.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/task.hpp"

#include <boost/asio/ip/udp.hpp>

#include <algorithm>
#include <charconv>

namespace troupe::detail {

namespace {

/// How long one request to the store may take over every server it tries: longer than a leader
/// election of a cluster set up for a 3 s lease (a request made during one waits it out).
constexpr std::chrono::seconds store_request_timeout{5};

/// The most bytes a key's group and name may have together in the store (etcd takes keys of
/// up to 1.5 MiB; a world's keys name services and values).
constexpr std::size_t max_key_bytes = 8 * 1024;

etcd::client_settings settings_of(const world_options& options, const store_location& where) {
  etcd::client_settings settings;
  settings.endpoints = where.servers;
  settings.request_timeout = store_request_timeout;
  if (options.tls)
    settings.tls = etcd::client_tls(options.tls->certificate, options.tls->key,
                                    options.tls->ca_file, options.tls->passphrase);
  return settings;
}

/// The registry's news as messages to the member actor (no handler waits on it).
etcd::registry_handlers news_to(const caf::actor& member) {
  auto tell = [member](store_news news) { send_from_outside(member, std::move(news)); };
  return {[tell](const etcd::member_record& record) {
            tell({store_news::kind::joined, record});
          },
          [tell](const etcd::member_record& record) {
            tell({store_news::kind::left, record});
          },
          [tell](const etcd::member_record& record) {
            tell({store_news::kind::lost, record});
          },
          [tell](const std::string& why) {
            tell({store_news::kind::cut_off, {}, why});
          }};
}

reply_bytes rank_reply(int rank) { return to_wire(serialize(rank)); }

} // namespace

store_seat::store_seat(const world_options& options, const store_location& where, caf::actor member)
  : where_(where), max_world_size_(options.max_world_size), member_(std::move(member)),
    client_(settings_of(options, where)) {
  registry_ = std::make_unique<etcd::member_registry>(
    etcd::registry_settings{client_.settings(), where_.world, max_world_size_, store_lease_ttl},
    news_to(member_));
}

store_seat::~store_seat() { registry_.reset(); }

endpoint store_seat::listen_address(const store_location& where) {
  const bool local = std::all_of(where.servers.begin(), where.servers.end(),
                                 [](const auto& server) { return is_loopback(server.host); });
  return {local ? "127.0.0.1" : "0.0.0.0", 0};
}

std::string store_seat::advertised_host() const {
  // A UDP socket "connected" to the first server sends nothing; the kernel only picks the route,
  // and with it the local address the others can reach this member at.
  const auto& server = where_.servers.front();
  try {
    boost::asio::io_context io;
    boost::asio::ip::udp::resolver resolver{io};
    const auto found = resolver.resolve(server.host, std::to_string(server.port));
    boost::asio::ip::udp::socket socket{io};
    socket.connect(*found.begin());
    return socket.local_endpoint().address().to_string();
  } catch (const boost::system::system_error& e) {
    throw network_error("world: no route to the store's server " + server.text() +
                        " to tell the others where this member listens: " + e.what());
  }
}

std::string store_seat::prefix() const { return "/troupe/" + where_.world + "/"; }

stored_world store_seat::identify() {
  const auto formed = client_.prefix(prefix() + "formed/", max_world_size_);
  if (!formed.items.empty())
    return {formed.items.front().value, true};
  // The founders share the id the first of them made; it lives with that member's lease, long
  // enough for the others to read it while the world forms (a later joiner takes the formed
  // world's from "formed/").
  const auto id_key = prefix() + "id";
  for (int tries = 0; tries < 3; ++tries) {
    if (auto made = make_nonce().substr(0, 16); client_.create(id_key, made, registry_->lease()))
      return {made, false};
    if (const auto held = client_.get(id_key); held && !held->value.empty())
      return {held->value.substr(0, 64), false};
  }
  throw network_error("world: the store's id of world '" + where_.world +
                      "' came and went three times in a row");
}

void store_seat::claim(etcd::member_record record, bool formed_before) {
  int rank = -1;
  try {
    rank = registry_->claim(record);
  } catch (const etcd::rank_held& e) {
    throw rank_taken(std::string{"world: "} + e.what());
  } catch (const state_error& e) {
    throw invalid_argument(std::string{"world: "} + e.what());
  }
  store_news claimed{store_news::kind::claimed, registry_->member(rank).value_or(record)};
  claimed.formed_before = formed_before;
  send_from_outside(member_, std::move(claimed));
}

void store_seat::mark_formed(const std::string& id, int rank) {
  client_.put(prefix() + "formed/" + std::to_string(rank), id, registry_->lease());
}

void store_seat::leave() noexcept {
  try {
    registry_->leave();
  } catch (const std::exception&) {
    // The store is out of reach: the others take this member for lost, which it is to them.
  }
}

std::string store_seat::key_name(key_table table, const std::string& group,
                                 const std::string& key) const {
  if (group.size() + key.size() > max_key_bytes)
    throw invalid_argument("a key of " + readable_bytes(key.size()) + " in group '" +
                           group.substr(0, 255) + "' is over the store's limit of " +
                           readable_bytes(max_key_bytes));
  // The group's length first: no group and key make another's name.
  return prefix() + (table == key_table::paired ? "paired/" : "services/") +
         std::to_string(group.size()) + ":" + group + "/" + key;
}

reply_bytes store_seat::keys(key_operation op, key_table table, const std::string& group,
                             const std::string& key, int rank) {
  const auto name = key_name(table, group, key);
  const auto what = key_what(table, key);
  const auto where = " on group '" + group + "'";
  switch (op) {
  case key_operation::add:
    if (!client_.create(name, std::to_string(rank), registry_->lease()))
      throw key_error(what + " already " +
                      (table == key_table::paired ? "paired to" : "registered on") + " group '" +
                      group + "'");
    return {};
  case key_operation::remove: {
    // Only its holder removes a key, and nobody else can take it while it is held: no race
    // between the read and the removal.
    const auto held = client_.get(name);
    if (!held || held->value != std::to_string(rank))
      throw key_error(what + " not found" + where +
                      (held ? " from this member (another has it)" : ""));
    client_.erase(name);
    return {};
  }
  case key_operation::holds: {
    const auto held = client_.get(name);
    if (!held)
      throw key_error(what + " not found" + where);
    int holder = -1;
    if (std::from_chars(held->value.data(), held->value.data() + held->value.size(), holder).ec ==
          std::errc{} &&
        holder >= 0 && holder < max_world_size_)
      return rank_reply(holder);
    return {}; // held, by a record this member cannot read: nobody to remember
  }
  case key_operation::lookup: {
    const auto held = client_.get(name);
    int holder = -1;
    if (!held)
      throw_not_found(name, what, where);
    if (std::from_chars(held->value.data(), held->value.data() + held->value.size(), holder).ec !=
        std::errc{})
      throw key_error(what + " not found" + where);
    if (holder < 0 || holder >= max_world_size_)
      throw key_error(what + where + " names no rank of this world");
    return rank_reply(holder);
  }
  }
  throw invalid_argument("unknown key operation");
}

// A key goes with its holder's lease, at the revision its record goes: the store's history just
// before tells whether the key was that member's. Asked only when a lookup finds nothing; each
// look back is a request, and none starts once a request's time has passed (up to 16 losses
// would otherwise be 16 requests' time at worst).
void store_seat::throw_not_found(const std::string& name, const std::string& what,
                                 const std::string& where) {
  const auto deadline = std::chrono::steady_clock::now() + store_request_timeout;
  for (const auto& loss : registry_->losses()) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw key_error(what + " not found" + where + " (the store's history of the members that " +
                      "went was not read in time)");
    std::optional<etcd::key_value> before;
    try {
      before = client_.get(name, loss.revision - 1);
    } catch (const etcd::refusal&) {
      break; // compacted away: nothing older is known either
    }
    if (before && before->value == std::to_string(loss.record.rank))
      throw peer_lost(what + where + " went with its member: member '" + loss.record.name +
                      "' (rank " + std::to_string(loss.record.rank) + ") " +
                      (loss.record.left ? "has left the world" : "was lost"));
  }
  throw key_error(what + " not found" + where);
}

std::uint64_t store_seat::requests() const { return client_.requests(); }

int free_store_rank(const world_options& options) {
  const auto where = parse_store_location(options.store);
  etcd::client store{settings_of(options, where)};
  const auto prefix = "/troupe/" + where.world + "/members/";
  std::vector<bool> held(static_cast<std::size_t>(options.max_world_size), false);
  // A record's key ends in its rank's seven digits (member_registry.cpp); what is no rank of
  // this world is no member of it.
  for (const auto& item : store.prefix(prefix, options.max_world_size + 64).items) {
    int rank = -1;
    const auto digits = std::string_view{item.key}.substr(prefix.size());
    if (std::from_chars(digits.data(), digits.data() + digits.size(), rank).ec == std::errc{} &&
        rank >= 0 && rank < options.max_world_size)
      held[static_cast<std::size_t>(rank)] = true;
  }
  for (int rank = options.world_size; rank < options.max_world_size; ++rank)
    if (!held[static_cast<std::size_t>(rank)])
      return rank;
  throw invalid_argument("world: no rank is free for '" + options.name +
                         "': the world has its most members (" +
                         std::to_string(options.max_world_size) + ")");
}

} // namespace troupe::detail
