#include "placeholder_names.hpp"

#include "troupe/graph/errors.hpp"

#include <map>

namespace troupe::graph::detail {

namespace {

std::string described(const node& n) {
  return std::string{n.type() == dtype::float64 ? "float64" : "float32"} + " " +
         describe(n.shape());
}

} // namespace

void check_placeholder_names(std::span<const node_ptr> nodes) {
  std::map<std::string, const node*> seen;
  for (const auto& n : nodes) {
    if (n->what() != kind::placeholder)
      continue;
    auto [at, fresh] = seen.emplace(n->name(), n.get());
    if (!fresh && (at->second->shape() != n->shape() || at->second->type() != n->type()))
      throw name_clash_error("two placeholders named '" + n->name() +
                             "' in one DAG: " + described(*at->second) + " and " + described(*n) +
                             " (a name stands for one input)");
  }
}

} // namespace troupe::graph::detail
