// What the staged/ tests share: a plan's stages as lists of names.
#pragma once

#include "troupe/staged/plan.hpp"

#include <string>
#include <vector>

namespace troupe::staged {

inline std::vector<std::vector<std::string>> stages_of(const compute_plan& plan) {
  std::vector<std::vector<std::string>> out;
  for (const auto& st : plan.stages)
    out.push_back(st.properties);
  return out;
}

} // namespace troupe::staged
