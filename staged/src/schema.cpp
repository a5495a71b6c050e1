#include "troupe/staged/schema.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <mutex>
#include <set>

namespace troupe::staged {

schema::schema(std::string name) : name_(std::move(name)) {
  if (name_.empty())
    throw invalid_argument("schema: a name is needed");
}

bool schema::has_field(const std::string& name) const {
  return std::find(fields_.begin(), fields_.end(), name) != fields_.end();
}

bool schema::has_property(const std::string& name) const { return properties_.contains(name); }

schema& schema::field(std::string name) {
  if (name.empty() || has_field(name) || has_property(name))
    throw invalid_argument("schema '" + name_ + "': field name '" + name + "' is empty or taken");
  fields_.push_back(std::move(name));
  return *this;
}

schema& schema::property(property_spec spec) {
  const auto where = "schema '" + name_ + "', property '" + spec.name + "': ";
  if (spec.name.empty() || has_field(spec.name) || has_property(spec.name))
    throw invalid_argument(where + "the name is empty or taken");
  if (static_cast<bool>(spec.compute) == spec.mixed.has_value())
    throw invalid_argument(where + "give a compute function or a mixed expression, one of them");
  if (spec.mixed) {
    const auto fields = spec.mixed->fields(), properties = spec.mixed->properties();
    spec.field_deps.insert(spec.field_deps.end(), fields.begin(), fields.end());
    spec.property_deps.insert(spec.property_deps.end(), properties.begin(), properties.end());
    spec.compute = [e = *spec.mixed](const record& r) { return e.evaluate(r); };
  }
  properties_.emplace(spec.name, std::move(spec));
  return *this;
}

const property_spec& schema::property_of(const std::string& name) const {
  auto at = properties_.find(name);
  if (at == properties_.end())
    throw invalid_argument("schema '" + name_ + "' has no property '" + name + "'");
  return at->second;
}

std::vector<std::string> schema::field_closure(const std::string& property) const {
  std::set<std::string> fields, seen;
  std::vector<std::string> todo{property};
  while (!todo.empty()) {
    const auto& p = property_of(todo.back());
    todo.pop_back();
    fields.insert(p.field_deps.begin(), p.field_deps.end());
    for (const auto& dep : p.property_deps)
      if (seen.insert(dep).second)
        todo.push_back(dep);
  }
  return {fields.begin(), fields.end()};
}

namespace {

std::mutex registry_mutex;
std::map<std::string, std::shared_ptr<const schema>>& registry() {
  static std::map<std::string, std::shared_ptr<const schema>> schemas;
  return schemas;
}

} // namespace

std::shared_ptr<const schema> register_schema(schema s) {
  auto shared = std::make_shared<const schema>(std::move(s));
  std::lock_guard guard{registry_mutex};
  if (!registry().emplace(shared->name(), shared).second)
    throw invalid_argument("register_schema: a schema named '" + shared->name() +
                           "' is registered already");
  return shared;
}

std::shared_ptr<const schema> find_schema(const std::string& name) {
  std::lock_guard guard{registry_mutex};
  auto at = registry().find(name);
  if (at == registry().end())
    throw invalid_argument("find_schema: no schema named '" + name +
                           "' is registered in this program (register_schema at namespace "
                           "scope, so that workers have it too)");
  return at->second;
}

} // namespace troupe::staged
