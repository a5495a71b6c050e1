// The world's store: troupe's etcd client, its watch and lease keeper, against real etcd servers
// (tests skip where etcd is not installed), and against servers that misbehave.
#include "etcd_servers.hpp"
#include "store/etcd_client.hpp"
#include "store/etcd_codec.hpp"
#include "store/etcd_watch.hpp"
#include "store/lease_keeper.hpp"
#include "store/store_address.hpp"
#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using troupe::detail::parse_store_address;
using troupe::detail::store_endpoint;
namespace etcd = troupe::detail::etcd;
using troupe::testing::etcd_servers;

TEST(store_address, reads_every_server_in_order) {
  const auto endpoints = parse_store_address("etcd://10.0.0.1:2379,etcd-b:2380,[::1]:2381");
  ASSERT_EQ(endpoints.size(), 3u);
  EXPECT_EQ(endpoints[0], (store_endpoint{"10.0.0.1", 2379}));
  EXPECT_EQ(endpoints[1], (store_endpoint{"etcd-b", 2380}));
  EXPECT_EQ(endpoints[2], (store_endpoint{"::1", 2381}));
  EXPECT_EQ(endpoints[2].text(), "[::1]:2381");
}

TEST(store_address, names_the_world_after_the_servers) {
  using troupe::detail::parse_store_location;
  const auto named = parse_store_location("etcd://10.0.0.1:2379,[::1]:2381/job-42.v_2");
  EXPECT_EQ(named.servers, (std::vector<store_endpoint>{{"10.0.0.1", 2379}, {"::1", 2381}}));
  EXPECT_EQ(named.world, "job-42.v_2");
  EXPECT_EQ(parse_store_location("etcd://a:1").world, troupe::detail::default_store_world);
  for (const auto* wrong : {"etcd://a:1/", "etcd://a:1/a b", "etcd://a:1/a/b"})
    EXPECT_THROW(parse_store_location(wrong), troupe::invalid_argument) << wrong;
  EXPECT_THROW(parse_store_location("etcd://a:1/" + std::string(65, 'x')),
               troupe::invalid_argument);
}

void expect_refused(const std::string& address, const std::string& says) {
  try {
    parse_store_address(address);
    ADD_FAILURE() << address << " was taken";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find(says), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("world_options::store"), std::string::npos) << e.what();
  }
}

TEST(store_address, names_what_is_wrong) {
  expect_refused("http://a:1", "must start with etcd://");
  expect_refused("etcd://", "names no server");
  expect_refused("etcd://a:1,,b:2", "an empty server");
  expect_refused("etcd://a", "has no port");
  expect_refused("etcd://:2379", "has no host");
  expect_refused("etcd://a:0", "not one of 1 to 65535");
  expect_refused("etcd://a:65536", "not one of 1 to 65535");
  expect_refused("etcd://a:12x", "not one of 1 to 65535");
  std::string many = "etcd://a:1";
  for (int i = 0; i < 16; ++i)
    many += ",a:1";
  expect_refused(many, "more than 16 servers");
}

TEST(etcd_codec, base64_carries_any_bytes) {
  for (const std::string& bytes : {std::string{}, std::string{"a"}, std::string{"ab"},
                                   std::string{"abc"}, std::string("\0\xff\x10z", 4)})
    EXPECT_EQ(etcd::from_base64(etcd::base64(bytes), "test"), bytes);
  EXPECT_THROW(etcd::from_base64("abc", "test"), troupe::network_error);
  EXPECT_THROW(etcd::from_base64("ab!=", "test"), troupe::network_error);
}

TEST(etcd_codec, a_prefix_ends_where_its_keys_do) {
  EXPECT_EQ(etcd::prefix_end("/troupe/w/"), "/troupe/w0");
  EXPECT_EQ(etcd::prefix_end(std::string{"a\xff"}), "b");
  EXPECT_EQ(etcd::prefix_end(std::string{"\xff\xff"}), std::string(1, '\0'));
}

TEST(etcd_codec, a_mistyped_field_is_a_typed_error) {
  const auto document = nlohmann::json::parse(R"({"n":"12x","b":7,"f":"yes","a":{}})");
  EXPECT_THROW(etcd::number_field(document, "n"), troupe::network_error);
  EXPECT_THROW(etcd::bytes_field(document, "b"), troupe::network_error);
  EXPECT_THROW(etcd::flag_field(document, "f"), troupe::network_error);
  EXPECT_THROW(etcd::array_field(document, "a"), troupe::network_error);
  EXPECT_THROW(etcd::number_field(nlohmann::json::array(), "n"), troupe::network_error);
  EXPECT_EQ(etcd::number_field(document, "absent"), 0);
}

class etcd_store : public ::testing::Test {
protected:
  void SetUp() override {
    if (!etcd_servers::installed())
      GTEST_SKIP() << "etcd is not installed (scripts/setup.sh installs etcd-server)";
    servers_.emplace(1);
  }
  etcd::client_settings settings() const { return {servers_->endpoints(), nullptr, 2s}; }

  std::optional<etcd_servers> servers_;
};

TEST_F(etcd_store, puts_reads_and_erases_keys) {
  etcd::client store{settings()};
  const auto first = store.put("/w/a", "one");
  const auto second = store.put("/w/b", std::string("t\0wo", 4));
  EXPECT_GT(second, first);
  store.put("/x/c", "elsewhere");
  ASSERT_TRUE(store.get("/w/a"));
  EXPECT_EQ(store.get("/w/a")->value, "one");
  EXPECT_FALSE(store.get("/w/none"));
  const auto read = store.prefix("/w/", 10);
  ASSERT_EQ(read.items.size(), 2u);
  EXPECT_EQ(read.items[1].value, std::string("t\0wo", 4));
  EXPECT_GE(read.revision, second);
  EXPECT_TRUE(store.erase("/w/a"));
  EXPECT_FALSE(store.erase("/w/a"));
  EXPECT_EQ(store.prefix("/w/", 10).items.size(), 1u);
}

TEST_F(etcd_store, a_prefix_with_more_keys_than_its_limit_is_a_capacity_error) {
  etcd::client store{settings()};
  for (int i = 0; i < 5; ++i)
    store.put("/many/" + std::to_string(i), "x");
  EXPECT_EQ(store.prefix("/many/", 5).items.size(), 5u);
  try {
    store.prefix("/many/", 4);
    ADD_FAILURE() << "no capacity_error";
  } catch (const troupe::capacity_error& e) {
    EXPECT_NE(std::string{e.what()}.find("more than 4 keys under '/many/'"), std::string::npos)
      << e.what();
  }
}

TEST_F(etcd_store, creates_a_key_once) {
  etcd::client store{settings()};
  EXPECT_TRUE(store.create("/rank/1", "alice"));
  EXPECT_FALSE(store.create("/rank/1", "bob"));
  EXPECT_EQ(store.get("/rank/1")->value, "alice");
  // The same creation tried again (its first answer lost) is known as its own.
  const auto lease = store.grant(10s);
  EXPECT_TRUE(store.create("/rank/2", "carol", lease));
  EXPECT_TRUE(store.create("/rank/2", "carol", lease));
  EXPECT_FALSE(store.create("/rank/2", "dave", lease));
}

TEST_F(etcd_store, a_revoked_lease_takes_its_keys) {
  etcd::client store{settings()};
  const auto lease = store.grant(30s);
  store.put("/leased/a", "x", lease);
  EXPECT_EQ(store.get("/leased/a")->lease, lease);
  ASSERT_TRUE(store.keep_alive(lease));
  store.revoke(lease);
  EXPECT_FALSE(store.get("/leased/a"));
  EXPECT_FALSE(store.keep_alive(lease));
  EXPECT_NO_THROW(store.revoke(lease)); // already gone: nothing to end
}

/// Waits (up to `limit`) until `done` holds, under `mutex`.
template <class Done>
bool wait_for(std::mutex& mutex, std::condition_variable& changed, std::chrono::seconds limit,
              Done done) {
  std::unique_lock lock{mutex};
  return changed.wait_for(lock, limit, done);
}

TEST_F(etcd_store, a_kept_lease_outlives_its_ttl_and_a_dropped_one_expires) {
  etcd::client store{settings()};
  std::atomic<bool> kept_lost{false};
  {
    etcd::lease_keeper kept{settings(), 3s, [&](const std::string&) { kept_lost = true; }};
    const auto dropped = store.grant(3s);
    store.put("/ttl/kept", "x", kept.id());
    store.put("/ttl/dropped", "x", dropped);
    std::this_thread::sleep_for(5s);
    EXPECT_TRUE(store.get("/ttl/kept"));
    EXPECT_FALSE(store.get("/ttl/dropped"));
    EXPECT_FALSE(kept.lost());
  }
  EXPECT_FALSE(kept_lost);
  EXPECT_FALSE(store.get("/ttl/kept")); // revoked when the keeper ended
}

TEST_F(etcd_store, a_keeper_that_cannot_reach_the_store_says_so_within_its_ttl) {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<std::string> why;
  etcd::lease_keeper keeper{settings(), 3s, [&](std::string reason) {
                              std::scoped_lock lock{mutex};
                              why = std::move(reason);
                              changed.notify_all();
                            }};
  const auto killed = std::chrono::steady_clock::now();
  servers_->kill(0);
  ASSERT_TRUE(wait_for(mutex, changed, 10s, [&] { return why.has_value(); }));
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 6s);
  EXPECT_TRUE(keeper.lost());
  EXPECT_NE(why->find("did not renew its lease for 3 s"), std::string::npos) << *why;
}

/// The changes a watch handed over, as "+key=value" and "-key=", for a test to wait on.
struct seen_changes {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> seen;

  etcd::watch_handlers handlers() {
    return {[this](const std::vector<etcd::change>& changes) {
              std::scoped_lock lock{mutex};
              for (const auto& c : changes)
                seen.push_back((c.deleted ? "-" : "+") + c.item.key + "=" + c.item.value);
              changed.notify_all();
            },
            [] { ADD_FAILURE() << "resync"; }};
  }
  /// Whether `count` changes came within 10 s.
  bool wait_for(std::size_t count) {
    std::unique_lock lock{mutex};
    return changed.wait_for(lock, 10s, [&] { return seen.size() >= count; });
  }
};

TEST_F(etcd_store, a_watch_sees_every_change_under_its_prefix_in_order) {
  etcd::client store{settings()};
  seen_changes changes;
  etcd::watch watch{settings(), "/watched/", store.prefix("/watched/", 10).revision,
                    changes.handlers()};
  store.put("/watched/a", "1");
  store.put("/elsewhere", "1");
  store.put("/watched/b", "2");
  store.erase("/watched/a");
  ASSERT_TRUE(changes.wait_for(3));
  EXPECT_EQ(changes.seen,
            (std::vector<std::string>{"+/watched/a=1", "+/watched/b=2", "-/watched/a="}));
}

TEST_F(etcd_store, a_watch_from_compacted_revisions_asks_for_a_resync_and_goes_on) {
  etcd::client store{settings()};
  const auto before = store.prefix("/c/", 10).revision;
  store.put("/c/a", "1");
  const auto compacted_at = store.put("/other", "x");
  etcd::connection raw{servers_->endpoints()[0], nullptr, 1 << 20};
  ASSERT_EQ(raw
              .post("/v3/kv/compaction", {{"revision", std::to_string(compacted_at)}},
                    std::chrono::steady_clock::now() + 2s)
              .status,
            200u);
  std::atomic<int> resyncs{0};
  seen_changes changes;
  auto handlers = changes.handlers();
  handlers.on_resync = [&] { ++resyncs; };
  etcd::watch watch{settings(), "/c/", before, handlers};
  store.put("/c/b", "2");
  ASSERT_TRUE(changes.wait_for(1));
  EXPECT_EQ(resyncs.load(), 1);
  EXPECT_EQ(changes.seen, (std::vector<std::string>{"+/c/b=2"})); // /c/a is the resync's to read
}

TEST_F(etcd_store, a_watch_handler_that_throws_does_not_end_the_watch) {
  etcd::client store{settings()};
  seen_changes changes;
  auto handlers = changes.handlers();
  handlers.on_changes = [&, record = handlers.on_changes](const std::vector<etcd::change>& c) {
    record(c);
    throw std::runtime_error("a handler's bug");
  };
  etcd::watch watch{settings(), "/t/", store.prefix("/t/", 10).revision, handlers};
  store.put("/t/a", "1");
  ASSERT_TRUE(changes.wait_for(1));
  store.put("/t/b", "2");
  ASSERT_TRUE(changes.wait_for(2));
  EXPECT_EQ(watch.streams(), 1u); // the same stream: a handler's throw is not the server's fault
}

TEST_F(etcd_store, a_watch_goes_on_after_its_server_restarts_without_losing_a_change) {
  etcd::client store{settings()};
  seen_changes changes;
  etcd::watch watch{settings(), "/w/", store.prefix("/w/", 10).revision, changes.handlers(), 1s};
  store.put("/w/before", "x");
  ASSERT_TRUE(changes.wait_for(1));
  servers_->kill(0);
  std::this_thread::sleep_for(1500ms);
  servers_->restart(0);
  etcd::client again{settings()};
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (;;) {
    try {
      again.put("/w/after", "y");
      break;
    } catch (const troupe::error&) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "etcd did not come back";
    }
  }
  ASSERT_TRUE(changes.wait_for(2));
  EXPECT_EQ(changes.seen, (std::vector<std::string>{"+/w/before=x", "+/w/after=y"}));
  EXPECT_GE(watch.streams(), 2u);
}

TEST_F(etcd_store, a_server_that_does_not_answer_is_passed_over) {
  auto endpoints = servers_->endpoints();
  endpoints.insert(endpoints.begin(), store_endpoint{"127.0.0.1", 1}); // nothing listens there
  etcd::client store{{endpoints, nullptr, 2s}};
  store.put("/k", "v");
  EXPECT_EQ(store.get("/k")->value, "v");
}

class etcd_cluster_of_three : public ::testing::Test {
protected:
  void SetUp() override {
    if (!etcd_servers::installed())
      GTEST_SKIP() << "etcd is not installed (scripts/setup.sh installs etcd-server)";
    servers_.emplace(3);
  }
  etcd::client_settings settings_of(std::vector<int> servers) const {
    const auto all = servers_->endpoints();
    // Longer than a leader election (the servers' election timeout is 1 s): a request made
    // while the killed server's followers elect a new leader waits for it.
    etcd::client_settings settings{{}, nullptr, 6s};
    for (const int s : servers)
      settings.endpoints.push_back(all[static_cast<std::size_t>(s)]);
    return settings;
  }

  std::optional<etcd_servers> servers_;
};

TEST_F(etcd_cluster_of_three, one_server_killed_changes_nothing_for_its_clients) {
  etcd::client store{settings_of({0, 1, 2})};
  std::atomic<bool> lost{false};
  etcd::lease_keeper keeper{settings_of({0, 1, 2}), 3s, [&](const std::string&) { lost = true; }};
  store.put("/three/a", "1", keeper.id());
  servers_->kill(0); // the server both talk to first
  store.put("/three/b", "2");
  EXPECT_EQ(store.get("/three/a")->value, "1");
  std::this_thread::sleep_for(4s); // past the TTL: renewed by the others
  EXPECT_FALSE(lost);
  EXPECT_TRUE(store.get("/three/a"));
}

// etcd's one rule for partitions: a server without the cluster's quorum cannot renew a lease,
// so a member that reaches only such a server learns that it lost its lease within the TTL,
// and its watch there ends (the server has no leader) instead of going silent.
TEST_F(etcd_cluster_of_three, a_member_that_reaches_only_a_server_without_quorum_loses_its_lease) {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<std::string> why;
  etcd::lease_keeper keeper{settings_of({2}), 3s, [&](std::string reason) {
                              std::scoped_lock lock{mutex};
                              why = std::move(reason);
                              changed.notify_all();
                            }};
  etcd::client store{settings_of({2})};
  etcd::watch watch{settings_of({2}),
                    "/minority/",
                    store.prefix("/minority/", 1).revision,
                    {[](const std::vector<etcd::change>&) {}, [] {}},
                    30s};
  std::this_thread::sleep_for(500ms);
  const auto streams_before = watch.streams();
  servers_->kill(0);
  servers_->kill(1);
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_for(mutex, changed, 15s, [&] { return why.has_value(); }));
  EXPECT_LT(std::chrono::steady_clock::now() - cut, 8s);
  EXPECT_NE(why->find("did not renew its lease for 3 s"), std::string::npos) << *why;
  EXPECT_THROW(store.put("/minority/k", "v"), troupe::network_error);
  // Before the watch's own 30 s silence bound: the server ended the stream (etcd ends the
  // streams of clients that require a leader after three election timeouts without one).
  while (watch.streams() == streams_before && std::chrono::steady_clock::now() - cut < 20s)
    std::this_thread::sleep_for(100ms);
  EXPECT_GT(watch.streams(), streams_before);
}

TEST(etcd_client, a_store_out_of_reach_fails_typed_within_the_request_timeout) {
  etcd::client store{{{{"127.0.0.1", 1}, {"127.0.0.1", 2}}, nullptr, 1s}};
  const auto start = std::chrono::steady_clock::now();
  try {
    store.put("/k", "v");
    ADD_FAILURE() << "no error";
  } catch (const troupe::network_error& e) {
    EXPECT_NE(std::string{e.what()}.find("no etcd server of the world's store answered"),
              std::string::npos)
      << e.what();
    EXPECT_NE(std::string{e.what()}.find("127.0.0.1:2"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

/// A listener on loopback that answers every connection with `reply` (and then stays silent).
class fake_server {
public:
  explicit fake_server(std::string reply) : reply_{std::move(reply)} {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size);
    ::listen(fd_, 8);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread{[this] { serve(); }};
  }
  ~fake_server() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (const int client : clients_)
      ::close(client);
  }
  store_endpoint endpoint() const { return {"127.0.0.1", port_}; }

private:
  void serve() {
    for (;;) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0)
        return;
      clients_.push_back(client);
      char request[4096];
      [[maybe_unused]] const auto got = ::recv(client, request, sizeof request, 0);
      std::size_t sent = 0;
      while (sent < reply_.size()) {
        const auto n = ::send(client, reply_.data() + sent, reply_.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
          break;
        sent += static_cast<std::size_t>(n);
      }
    }
  }

  std::string reply_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::vector<int> clients_;
  std::thread thread_;
};

void expect_network_error(const std::string& reply, const std::string& says) {
  fake_server server{reply};
  etcd::client store{{{server.endpoint()}, nullptr, 1s, 1024}};
  const auto start = std::chrono::steady_clock::now();
  try {
    store.put("/k", "v");
    ADD_FAILURE() << "no error";
  } catch (const troupe::network_error& e) {
    EXPECT_NE(std::string{e.what()}.find(says), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(etcd_client, a_hostile_or_broken_server_fails_the_request_typed) {
  // A reply announcing more than the client takes: refused before it is read.
  expect_network_error("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "body limit");
  // Endless headers.
  expect_network_error("HTTP/1.1 200 OK\r\n" + std::string(64 * 1024, 'X'), "header limit");
  // Not HTTP.
  expect_network_error("SSH-2.0-OpenSSH\r\n\r\n", "bad version");
  // HTTP, but not JSON.
  expect_network_error("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "not JSON");
  // JSON of the wrong shape.
  expect_network_error("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]", "malformed");
  // Silent after accepting: the deadline.
  expect_network_error("", "in time");
}

TEST(etcd_client, a_watch_on_a_hostile_server_bounds_what_it_reads) {
  // A stream whose one document never ends: the watch drops it at the bound and tries again,
  // handing nothing over.
  fake_server server{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n" +
                     std::string(0x100000, '{')};
  std::atomic<int> changes{0};
  {
    etcd::watch watch{{{server.endpoint()}, nullptr, 1s, 1024},
                      "/p/",
                      0,
                      {[&](const std::vector<etcd::change>&) { ++changes; }, [] {}},
                      1s};
    std::this_thread::sleep_for(1500ms);
    EXPECT_GE(watch.streams(), 2u);
  }
  EXPECT_EQ(changes.load(), 0);
}

} // namespace

namespace {

/// Certificates from `scripts/make-certs.sh` in a folder removed at the end.
class cert_folder {
public:
  explicit cert_folder(const std::string& names) {
    char folder[] = "/tmp/troupe-etcd-certs-XXXXXX";
    path_ = ::mkdtemp(folder);
    const auto command = std::string{TROUPE_MAKE_CERTS} + " " + path_ + " " + names;
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("cannot make certificates: " + command);
  }
  ~cert_folder() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

TEST(etcd_tls, a_client_with_a_certificate_from_the_ca_is_served_and_others_are_refused) {
  if (!etcd_servers::installed())
    GTEST_SKIP() << "etcd is not installed (scripts/setup.sh installs etcd-server)";
  const cert_folder world{"etcd=127.0.0.1 member"};
  const cert_folder other{"member"};
  etcd_servers servers{1, "127.0.0.1",
                       troupe::testing::etcd_tls{world.file("etcd.pem"), world.file("etcd.key"),
                                                 world.file("ca.pem")}};
  const auto member =
    etcd::client_tls(world.file("member.pem"), world.file("member.key"), world.file("ca.pem"), "");
  etcd::client store{{servers.endpoints(), member, 2s}};
  store.put("/tls/k", "v");
  EXPECT_EQ(store.get("/tls/k")->value, "v");

  // A certificate from another CA: etcd refuses it (and it refuses etcd's).
  const auto stranger =
    etcd::client_tls(other.file("member.pem"), other.file("member.key"), other.file("ca.pem"), "");
  EXPECT_THROW(etcd::client({servers.endpoints(), stranger, 1s}).get("/tls/k"),
               troupe::network_error);
  // The world's CA, but no certificate of its own: etcd checks client certificates.
  auto anonymous =
    std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
  anonymous->load_verify_file(world.file("ca.pem"));
  EXPECT_THROW(etcd::client({servers.endpoints(), anonymous, 1s}).get("/tls/k"),
               troupe::network_error);
  // Plain HTTP to a TLS port.
  EXPECT_THROW(etcd::client({servers.endpoints(), nullptr, 1s}).get("/tls/k"),
               troupe::network_error);
}

TEST(etcd_tls, files_that_cannot_be_read_are_named) {
  try {
    etcd::client_tls("/nonexistent/member.pem", "/nonexistent/member.key", "/nonexistent/ca.pem",
                     "");
    ADD_FAILURE() << "no error";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("cannot read '/nonexistent/member.pem'"),
              std::string::npos)
      << e.what();
  }
}

} // namespace
