#include "troupe/inbatch/named_args.hpp"

namespace troupe {

std::vector<std::string> named_args::names() const {
  std::vector<std::string> out;
  out.reserve(values_.size());
  for (const auto& [name, v] : values_)
    out.push_back(name);
  return out;
}

std::string named_args::kind_of(const value& v) {
  static const char* const kinds[] = {"a bool", "an integer", "a floating-point number",
                                      "a string"};
  return kinds[v.index()];
}

} // namespace troupe
