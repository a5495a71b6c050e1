// Who the members of a world are, by rank: their names and devices. The member actor writes it
// (when the world forms, and when a member joins the running world) while users' threads read it:
// it owns its lock. Its rows are made for every rank the world may ever have
// (world_options::max_world_size), and a rank, once given, keeps its name: a reference to a name
// stays valid, and a name never names two ranks.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::detail {

class member_table {
public:
  /// A table for ranks 0 to `capacity` - 1, none given yet.
  explicit member_table(int capacity);

  /// Gives `rank` to `name`, with its `devices`; false (and nothing changed) if the rank is
  /// outside the table or held by another name. Giving a rank its own name again changes nothing.
  bool add(int rank, const std::string& name, std::vector<std::string> devices);
  /// The new devices of `rank`, whose member joined again as a new process.
  void renew(int rank, std::vector<std::string> devices);
  /// Adds the roster the world formed with, by rank: an empty name leaves its rank as it was
  /// (a member that joined may be known here before the roster is).
  void adopt(const std::vector<std::string>& names,
             const std::vector<std::vector<std::string>>& devices);

  /// The name of `rank`, or null if no member holds it (the reference lives as the table does).
  const std::string* name(int rank) const;
  /// The rank `name` holds, if any (the first given it: callers give a name one rank).
  std::optional<int> rank_of(std::string_view name) const;
  /// The devices of `rank`; empty if no member holds it.
  std::vector<std::string> devices(int rank) const;
  /// Every given rank's name, indexed by rank ("" for ranks not given).
  std::vector<std::string> names() const;
  /// How many ranks are given.
  int size() const;
  int capacity() const noexcept { return static_cast<int>(names_.size()); }

private:
  mutable std::shared_mutex mutex_;
  std::vector<std::string> names_; // by rank; sized once, so references to names stay valid
  std::vector<std::vector<std::string>> devices_;
  std::map<std::string, int, std::less<>> ranks_; // by name: rank_of on every call by name
  int given_ = 0;
};

} // namespace troupe::detail
