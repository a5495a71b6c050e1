#include "communications.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace troupe::graph::detail {

std::vector<std::vector<std::byte>> all_gather_bytes(collective_group& group,
                                                     const std::vector<std::byte>& mine) {
  const auto members = static_cast<std::size_t>(group.size());
  std::vector<std::vector<std::int64_t>> sizes(members, std::vector<std::int64_t>(1));
  group.all_gather(sizes, std::vector<std::int64_t>{static_cast<std::int64_t>(mine.size())});
  std::size_t longest = 0;
  for (const auto& s : sizes)
    longest = std::max(longest, static_cast<std::size_t>(s[0]));
  std::vector<std::uint8_t> padded(longest);
  std::transform(mine.begin(), mine.end(), padded.begin(),
                 [](std::byte b) { return static_cast<std::uint8_t>(b); });
  std::vector<std::vector<std::uint8_t>> all(members, std::vector<std::uint8_t>(longest));
  group.all_gather(all, padded);
  std::vector<std::vector<std::byte>> out(members);
  for (std::size_t r = 0; r < members; ++r)
    std::transform(all[r].begin(), all[r].begin() + sizes[r][0], std::back_inserter(out[r]),
                   [](std::uint8_t b) { return static_cast<std::byte>(b); });
  return out;
}

} // namespace troupe::graph::detail
