#include "troupe/staged/record.hpp"

#include "troupe/staged/errors.hpp"

#include <algorithm>
#include <set>

namespace troupe::staged {

record::record(std::shared_ptr<const schema> definition, std::map<std::string, tensor> fields)
  : schema_(std::move(definition)), fields_(std::move(fields)) {
  if (!schema_)
    throw invalid_argument("record: no schema");
  for (const auto& [name, value] : fields_)
    if (!schema_->has_field(name))
      throw invalid_argument("record of '" + schema_->name() + "': no field '" + name + "'");
  for (const auto& name : schema_->fields())
    if (!fields_.contains(name))
      throw invalid_argument("record of '" + schema_->name() + "': field '" + name + "' not given");
  (void)dims(); // fields whose dims of one name differ are refused here
}

record::record(std::shared_ptr<const schema> definition, std::map<std::string, tensor> fields,
               std::map<std::string, tensor> cached, bool computing)
  : schema_(std::move(definition)), fields_(std::move(fields)), cache_(std::move(cached)),
    computing_(computing), partial_(true) {}

const tensor& record::get(const std::string& name) const {
  if (auto at = fields_.find(name); at != fields_.end())
    return at->second;
  if (schema_->has_field(name))
    throw invalid_argument("record of '" + schema_->name() + "': field '" + name +
                           "' was not sent to this slice: name it in the field_deps of " +
                           (reading_ ? "property '" + *reading_ + "', which reads it"
                                     : std::string{"the property that reads it"}));
  if (auto at = cache_.find(name); at != cache_.end())
    return at->second;
  const auto& p = schema_->property_of(name);
  if (!computing_ && p.on_direct_eval == direct_eval::raise)
    throw non_parallel_access("record of '" + schema_->name() + "': property '" + name +
                              "' is read before parallel_compute computed it (its " +
                              "on_direct_eval is raise)");
  return computed(p);
}

const tensor& record::computed(const property_spec& p) const {
  if (!in_progress_.insert(p.name).second)
    throw invalid_plan("property '" + p.name + "' of '" + schema_->name() +
                       "' reads itself, through the properties it reads");
  struct done {
    std::set<std::string>& in_progress;
    const std::string& name;
    const std::string*& reading;
    const std::string* outer;
    ~done() {
      in_progress.erase(name);
      reading = outer;
    }
  } finished{in_progress_, p.name, reading_, reading_};
  reading_ = &p.name;
  auto value = p.compute(*this);
  // A slice's value lacks the dims its stage splits: the whole result is checked when stacked.
  if (p.out && !partial_ && !value.dims().equivalent(*p.out))
    throw invalid_argument("property '" + p.name + "' of '" + schema_->name() + "': computed " +
                           value.dims().describe() + ", declared out " + p.out->describe());
  return cache_.insert_or_assign(p.name, std::move(value)).first->second;
}

bool record::is_cached(const std::string& property) const { return cache_.contains(property); }

std::vector<std::string> record::cached() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : cache_)
    names.push_back(name);
  return names;
}

void record::set_cached(const std::string& property, tensor value) {
  (void)schema_->property_of(property); // invalid_argument if there is none
  cache_.insert_or_assign(property, std::move(value));
}

void record::forget(const std::string& property) { cache_.erase(property); }

shape record::dims() const {
  shape all;
  for (const auto& [name, value] : fields_)
    all = all.merged(value.dims());
  return all;
}

record record::replace(std::map<std::string, tensor> changes) const {
  auto fields = fields_;
  for (auto& [name, value] : changes) {
    if (!schema_->has_field(name))
      throw invalid_argument("record::replace: '" + schema_->name() + "' has no field '" + name +
                             "'");
    fields.insert_or_assign(name, std::move(value));
  }
  record out{schema_, std::move(fields)};
  for (const auto& [name, value] : cache_) {
    const auto reads = schema_->field_closure(name);
    if (std::none_of(reads.begin(), reads.end(),
                     [&](const std::string& f) { return changes.contains(f); }))
      out.cache_.emplace(name, value);
  }
  return out;
}

} // namespace troupe::staged
