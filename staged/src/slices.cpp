#include "slices.hpp"

#include "troupe/actors/error.hpp"

#include "hdf5_file.hpp"
#include "record_access.hpp"

#include <algorithm>

namespace troupe::staged::detail {

namespace {

/// Slice `i`'s position along each of `dims`, row-major.
std::map<std::string, std::size_t> index_of(std::size_t i, const shape& dims) {
  std::map<std::string, std::size_t> index;
  for (auto d = dims.dims().rbegin(); d != dims.dims().rend(); ++d) {
    index[d->name] = i % d->size;
    i /= d->size;
  }
  return index;
}

} // namespace

std::vector<slice_job> cut_slices(const record& r, const compute_plan& plan, std::size_t k,
                                  const compute_options& options) {
  const auto& st = plan.stages[k];
  std::vector<slice_job> jobs(st.distributed.volume());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto& job = jobs[i];
    const auto index = index_of(i, st.distributed);
    job.schema = r.definition().name();
    job.compute = st.properties;
    job.returned = st.returned;
    for (const auto& name : st.properties)
      if (auto op = plan.operations.find(name); op != plan.operations.end())
        job.operations.push_back(op->second);
    if (options.memory_limit) // PhiML's share: the limit over the slices running at once
      job.spill = spill_rule{options.cache_dir->string(),
                             *options.memory_limit / std::min(plan.workers, jobs.size()), k, i};
    for (const auto& f : st.fields)
      job.fields.emplace(f, r.get(f).slice(index));
    for (const auto& p : st.inputs)
      job.inputs.emplace(p, r.get(p).slice(index));
  }
  return jobs;
}

/// Keeps the smallest of `out` that fit `rule.limit` in memory; writes the rest to one file and
/// leaves references to it.
void spill(values& out, const spill_rule& rule) {
  std::vector<std::pair<std::size_t, std::string>> by_size;
  std::size_t total = 0;
  for (const auto& [name, t] : out) {
    by_size.emplace_back(t.nbytes(), name);
    total += t.nbytes();
  }
  if (total <= rule.limit)
    return;
  std::sort(by_size.begin(), by_size.end());
  std::size_t kept = 0;
  values to_disk;
  for (const auto& [bytes, name] : by_size) {
    if (to_disk.empty() && kept + bytes <= rule.limit)
      kept += bytes;
    else
      to_disk.emplace(name, out.at(name));
  }
  const auto file = write_cache_file(rule.folder, rule.stage, rule.slice, to_disk);
  for (const auto& [name, t] : to_disk)
    out.insert_or_assign(name, tensor::on_disk(file_ref{file, name}, t.dims()));
}

void compute_node(const record& r, const std::string& name,
                  const std::map<std::string, operation>& operations) {
  if (auto op = operations.find(name); op != operations.end())
    record_access::cache(r, name, op->second.apply(r));
  else
    (void)r.get(name); // same-stage dependencies are computed on the way
}

values run_slice(std::shared_ptr<const schema> definition, const slice_job& job) {
  auto slice = record_access::slice(std::move(definition), job.fields, job.inputs);
  std::map<std::string, operation> operations;
  for (const auto& op : job.operations)
    operations.emplace(op.name, op);
  values out;
  for (const auto& name : job.compute)
    compute_node(slice, name, operations);
  for (const auto& name : job.returned)
    out.emplace(name, slice.get(name));
  if (job.spill)
    spill(out, *job.spill);
  return out;
}

void stack_into(record& r, const stage& st, const std::vector<values>& results) {
  for (const auto& name : st.returned) {
    std::vector<tensor> parts;
    for (const auto& slice : results)
      parts.push_back(slice.at(name));
    auto whole = tensor::stack(std::move(parts), st.distributed);
    const auto& s = r.definition();
    if (s.has_property(name) && s.property_of(name).out &&
        !whole.dims().equivalent(*s.property_of(name).out))
      throw invalid_argument("property '" + name + "' of '" + s.name() + "': computed " +
                             whole.dims().describe() + ", declared out " +
                             s.property_of(name).out->describe());
    record_access::cache(r, name, std::move(whole));
  }
}

} // namespace troupe::staged::detail
