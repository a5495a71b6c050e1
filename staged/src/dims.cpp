#include "troupe/staged/dims.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

namespace troupe::staged {

const char* kind_name(dim_kind k) noexcept {
  static constexpr const char* names[] = {"batch", "spatial", "channel", "instance", "dual"};
  return names[static_cast<std::size_t>(k)];
}

dim batch(std::string name, std::size_t size) { return {std::move(name), dim_kind::batch, size}; }
dim spatial(std::string name, std::size_t size) {
  return {std::move(name), dim_kind::spatial, size};
}
dim channel(std::string name, std::size_t size) {
  return {std::move(name), dim_kind::channel, size};
}
dim instance(std::string name, std::size_t size) {
  return {std::move(name), dim_kind::instance, size};
}
dim dual(std::string name, std::size_t size) { return {std::move(name), dim_kind::dual, size}; }

dim_filter dim_filter::none() { return {by::none, dim_kind::batch, {}}; }
dim_filter dim_filter::all() { return {by::all, dim_kind::batch, {}}; }
dim_filter dim_filter::kind(dim_kind k) { return {by::kind, k, {}}; }
dim_filter dim_filter::names(std::vector<std::string> names) {
  return {by::names, dim_kind::batch, std::move(names)};
}

bool dim_filter::selects(const dim& d) const {
  switch (how_) {
  case by::none: return false;
  case by::all: return true;
  case by::kind: return d.kind == kind_;
  case by::names: return std::find(names_.begin(), names_.end(), d.name) != names_.end();
  }
  return false;
}

shape::shape(std::initializer_list<dim> dims) : shape(std::vector<dim>(dims)) {}

shape::shape(std::vector<dim> dims) : dims_(std::move(dims)) {
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i].name.empty())
      throw invalid_argument("shape: a dim needs a name, in " + describe());
    for (std::size_t j = 0; j < i; ++j)
      if (dims_[j].name == dims_[i].name)
        throw invalid_argument("shape: dim '" + dims_[i].name + "' twice in " + describe());
  }
}

bool shape::contains(const std::string& name) const {
  return std::any_of(dims_.begin(), dims_.end(), [&](const dim& d) { return d.name == name; });
}

std::size_t shape::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < dims_.size(); ++i)
    if (dims_[i].name == name)
      return i;
  throw invalid_argument("shape: no dim '" + name + "' in " + describe());
}

const dim& shape::at(const std::string& name) const { return dims_[index_of(name)]; }

std::size_t shape::volume() const {
  return std::accumulate(dims_.begin(), dims_.end(), std::size_t{1},
                         [](std::size_t v, const dim& d) { return v * d.size; });
}

std::vector<std::size_t> shape::sizes() const {
  std::vector<std::size_t> out;
  for (const auto& d : dims_)
    out.push_back(d.size);
  return out;
}

std::vector<std::string> shape::names() const {
  std::vector<std::string> out;
  for (const auto& d : dims_)
    out.push_back(d.name);
  return out;
}

shape shape::only(const dim_filter& filter) const {
  std::vector<dim> kept;
  std::copy_if(dims_.begin(), dims_.end(), std::back_inserter(kept),
               [&](const dim& d) { return filter.selects(d); });
  return shape{std::move(kept)};
}

shape shape::without(const dim_filter& filter) const {
  std::vector<dim> kept;
  std::copy_if(dims_.begin(), dims_.end(), std::back_inserter(kept),
               [&](const dim& d) { return !filter.selects(d); });
  return shape{std::move(kept)};
}

shape shape::merged(const shape& other) const {
  auto dims = dims_;
  for (const auto& d : other.dims_) {
    auto same =
      std::find_if(dims.begin(), dims.end(), [&](const dim& e) { return e.name == d.name; });
    if (same == dims.end())
      dims.push_back(d);
    else if (*same != d)
      throw invalid_argument("shape: dim '" + d.name + "' differs: " + describe() + " and " +
                             other.describe());
  }
  return shape{std::move(dims)};
}

bool shape::equivalent(const shape& other) const {
  return rank() == other.rank() && std::all_of(dims_.begin(), dims_.end(), [&](const dim& d) {
           return other.contains(d.name) && other.at(d.name) == d;
         });
}

std::string shape::describe() const {
  std::string text = "(";
  for (std::size_t i = 0; i < dims_.size(); ++i)
    text += (i ? ", " : "") + dims_[i].name + "=" + std::to_string(dims_[i].size) + " " +
            kind_name(dims_[i].kind);
  return text + ")";
}

} // namespace troupe::staged
