// The batches of a dependency graph (pytato's communication batch scheduler): each item's level
// is 0 if it needs nothing, else one more than the highest level of what it needs. Iterative
// and linear in items plus needs, so a chain of a million items is fine.
#pragma once

#include "troupe/graph/errors.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace troupe::graph::detail {

/// Levels of every item of `needs` (item: what it needs, each also an item). An item `a` that
/// `extends` item `b` needs, besides its own list, everything `b` needs (but not `b`): its level
/// is at least `b`'s, which lets lists that grow item after item be sent as their differences.
/// cycle_error, naming an item in the circle by `describe`, if items need each other in a
/// circle. `visits`, if given, counts the steps taken (for tests that the work is linear).
template <class Id>
std::map<Id, int> batch_levels(const std::map<Id, std::vector<Id>>& needs,
                               const std::function<std::string(const Id&)>& describe,
                               std::size_t* visits = nullptr,
                               const std::map<Id, Id>& extends = {}) {
  const auto base_of = [&](const Id& id) -> const Id* {
    const auto at = extends.find(id);
    return at == extends.end() ? nullptr : &at->second;
  };
  enum : char { fresh, open, done };
  std::map<Id, char> state;
  std::map<Id, int> level;
  std::size_t steps = 0;
  for (const auto& [start, unused] : needs) {
    if (state[start] == done)
      continue;
    std::vector<std::pair<const Id*, std::size_t>> stack{{&start, 0}};
    state[start] = open;
    while (!stack.empty()) {
      ++steps;
      auto& [id, next] = stack.back();
      const auto& wanted = needs.at(*id);
      const Id* base = base_of(*id); // walked after the item's own list, as its last need
      if (next < wanted.size() + (base != nullptr ? 1 : 0)) {
        const Id& need = next < wanted.size() ? wanted[next] : *base;
        ++next;
        auto& s = state[need];
        if (s == open)
          throw cycle_error("the dependencies go in a circle through " + describe(need));
        if (s == fresh) {
          s = open;
          stack.emplace_back(&needs.find(need)->first, 0);
        }
        continue;
      }
      int highest = -1;
      for (const auto& need : wanted)
        highest = std::max(highest, level.at(need));
      if (base != nullptr) // the highest level among the base's needs
        highest = std::max(highest, level.at(*base) - 1);
      level[*id] = highest + 1;
      state[*id] = done;
      stack.pop_back();
    }
  }
  if (visits != nullptr)
    *visits = steps;
  return level;
}

} // namespace troupe::graph::detail
