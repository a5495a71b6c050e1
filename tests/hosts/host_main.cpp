// The hosts tests' member program: runs the role its environment names (host_roles.hpp). As a
// node or a pool's worker, runtime's constructor never returns.
#include "host_roles.hpp"

#include "troupe/actors/error.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace troupe::hosts {

std::map<std::string, role>& roles() {
  static std::map<std::string, role> all;
  return all;
}

troupe::world_options member_options() {
  auto options = troupe::world_options::from_environment();
  options.timeout = 30s;
  options.allow_insecure = !options.tls;
  return options;
}

std::string test_dir() {
  const char* dir = std::getenv("TROUPE_TEST_DIR");
  require(dir != nullptr, "TROUPE_TEST_DIR is set");
  return dir;
}

void mark(const std::string& name) { std::ofstream{test_dir() + "/" + name} << "\n"; }

void await_mark(const std::string& name, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!std::filesystem::exists(test_dir() + "/" + name)) {
    require(std::chrono::steady_clock::now() < until, "mark '" + name + "' came in time");
    std::this_thread::sleep_for(10ms);
  }
}

std::string failure_of(const std::function<void()>& call, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  try {
    while (std::chrono::steady_clock::now() < until)
      call();
  } catch (const troupe::partition_error&) {
    return "partition_error";
  } catch (const troupe::peer_lost&) {
    return "peer_lost";
  } catch (const troupe::timeout_error&) {
    return "timeout_error";
  } catch (const troupe::state_error&) {
    return "state_error";
  } catch (const troupe::network_error&) {
    return "network_error";
  }
  return "none";
}

} // namespace troupe::hosts

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  const char* name = std::getenv("TROUPE_TEST_ROLE");
  const auto at = name ? troupe::hosts::roles().find(name) : troupe::hosts::roles().end();
  if (at == troupe::hosts::roles().end()) {
    std::cerr << "usage: TROUPE_TEST_ROLE=ROLE " << argv[0] << " (roles:";
    for (const auto& [each, body] : troupe::hosts::roles())
      std::cerr << " " << each;
    std::cerr << ")\n";
    return 2;
  }
  try {
    at->second(rt);
  } catch (const std::exception& e) {
    std::cerr << "member " << (std::getenv("TROUPE_RANK") ? std::getenv("TROUPE_RANK") : "?")
              << ", role " << name << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
