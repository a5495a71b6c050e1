#include "troupe/world/world_options.hpp"

#include "troupe/actors/error.hpp"

#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

namespace troupe {

namespace {

/// The first of `names` that is set, as a number; nullopt if none is set.
std::optional<int> number_from(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = std::getenv(name);
    if (text == nullptr)
      continue;
    std::string_view value{text};
    int number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc{} || end != value.data() + value.size() || number < 0)
      throw invalid_argument(std::string{"environment variable "} + name +
                             " must be a non-negative integer, got '" + std::string{value} + "'");
    return number;
  }
  return std::nullopt;
}

/// "a,b" as {"a", "b"}; empty items are kept, for checked() to name.
std::vector<std::string> comma_separated(std::string_view text) {
  std::vector<std::string> items;
  if (text.empty())
    return items;
  for (;;) {
    const auto comma = text.find(',');
    items.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos)
      return items;
    text.remove_prefix(comma + 1);
  }
}

/// Environment variable `name` as a flag: 1/true/yes or 0/false/no; nullopt if unset.
std::optional<bool> flag_from(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr)
    return std::nullopt;
  const std::string_view value{text};
  if (value == "1" || value == "true" || value == "yes")
    return true;
  if (value == "0" || value == "false" || value == "no")
    return false;
  throw invalid_argument(std::string{"environment variable "} + name +
                         " must be 1, true, yes, 0, false or no, got '" + std::string{value} + "'");
}

} // namespace

world_options world_options::from_environment() {
  world_options options;
  const char* troupe_rank = std::getenv("TROUPE_RANK");
  const bool any = troupe_rank != nullptr && std::string_view{troupe_rank} == "any";
  const auto rank =
    any ? std::optional{any_rank}
        : number_from({"TROUPE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"});
  const auto size =
    number_from({"TROUPE_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  if (!rank || !size)
    throw invalid_argument(std::string{"world_options::from_environment: no "} +
                           (!rank ? "rank" : "world size") +
                           " in the environment (TROUPE_RANK and TROUPE_WORLD_SIZE, or a "
                           "launcher's: mpirun, srun)");
  options.rank = *rank;
  options.world_size = *size;
  if (const auto max_size = number_from({"TROUPE_MAX_WORLD_SIZE"}))
    options.max_world_size = *max_size;
  if (const char* name = std::getenv("TROUPE_NAME"); name != nullptr && *name != '\0')
    options.name = name;
  else if (!any) // a member that asks for any rank must name itself (checked when it joins)
    options.name = "rank-" + std::to_string(options.rank);
  if (const char* address = std::getenv("TROUPE_ADDRESS"); address != nullptr && *address != '\0')
    options.address = address;
  if (const char* store = std::getenv("TROUPE_STORE"); store != nullptr)
    options.store = store;
  if (const char* secret = std::getenv("TROUPE_SECRET"); secret != nullptr)
    options.secret = secret;
  if (const auto rejoin = flag_from("TROUPE_REJOIN"))
    options.rejoin = *rejoin;
  if (const auto host_barriers = flag_from("TROUPE_HOST_BARRIERS"))
    options.host_barriers = *host_barriers;
  if (const char* devices = std::getenv("TROUPE_DEVICES"); devices != nullptr)
    options.devices = comma_separated(devices);
  options.tls = tls_options::from_environment();
  return options;
}

} // namespace troupe
