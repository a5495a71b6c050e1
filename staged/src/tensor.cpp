#include "troupe/staged/tensor.hpp"

#include "troupe/actors/error.hpp"

#include "soft_cache.hpp"

#include <xtensor/xstrided_view.hpp>

namespace troupe::staged {

tensor::tensor() : memory_(std::make_shared<const xt::xarray<double>>(0.0)) {}

tensor::tensor(xt::xarray<double> values, shape dims) : dims_(std::move(dims)) {
  const std::vector<std::size_t> given(values.shape().begin(), values.shape().end());
  if (given != dims_.sizes())
    throw invalid_argument("tensor: values of " + std::to_string(given.size()) +
                           " axes (or other sizes) for dims " + dims_.describe());
  memory_ = std::make_shared<const xt::xarray<double>>(std::move(values));
}

tensor tensor::scalar(double value) { return {xt::xarray<double>(value), shape{}}; }

tensor tensor::on_disk(file_ref where, shape dims) {
  tensor t;
  t.memory_.reset();
  t.file_ = std::move(where);
  t.dims_ = std::move(dims);
  return t;
}

const xt::xarray<double>& tensor::values() const {
  if (memory_)
    return *memory_;
  if (!pinned_)
    pinned_ = shared_values();
  return *pinned_;
}

std::shared_ptr<const xt::xarray<double>> tensor::shared_values() const {
  if (memory_)
    return memory_;
  if (file_)
    return detail::load_cached(*file_, dims_);
  auto values = xt::xarray<double>::from_shape(dims_.sizes());
  const auto block = values.size() / std::max<std::size_t>(1, parts_.size());
  for (std::size_t i = 0; i < parts_.size(); ++i)
    std::copy_n(parts_[i].shared_values()->data(), block, values.data() + i * block);
  return std::make_shared<const xt::xarray<double>>(std::move(values));
}

std::vector<std::string> tensor::files() const {
  if (file_)
    return {file_->file};
  std::vector<std::string> out;
  for (const auto& part : parts_) {
    auto more = part.files();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

tensor tensor::slice(const std::map<std::string, std::size_t>& index) const {
  xt::xstrided_slice_vector at;
  std::vector<dim> kept;
  for (const auto& d : dims_.dims()) {
    if (auto it = index.find(d.name); it != index.end()) {
      if (it->second >= d.size)
        throw invalid_argument("tensor::slice: index " + std::to_string(it->second) + " of dim '" +
                               d.name + "' of size " + std::to_string(d.size));
      at.emplace_back(it->second);
    } else {
      at.emplace_back(xt::all());
      kept.push_back(d);
    }
  }
  if (kept.size() == dims_.rank())
    return *this;
  return {xt::xarray<double>(xt::strided_view(values(), at)), shape{std::move(kept)}};
}

tensor tensor::stack(std::vector<tensor> parts, const shape& along) {
  if (parts.size() != along.volume() || parts.empty())
    throw invalid_argument("tensor::stack: " + std::to_string(parts.size()) + " parts for " +
                           along.describe());
  const auto part_dims = parts.front().dims();
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!(parts[i].dims() == part_dims))
      throw invalid_argument("tensor::stack: part " + std::to_string(i) + " has dims " +
                             parts[i].dims().describe() + ", part 0 " + part_dims.describe());
  std::vector<dim> dims = along.dims();
  dims.insert(dims.end(), part_dims.dims().begin(), part_dims.dims().end());
  tensor out;
  out.dims_ = shape{std::move(dims)};
  out.along_ = along;
  out.parts_ = std::move(parts);
  out.memory_.reset();
  if (std::all_of(out.parts_.begin(), out.parts_.end(),
                  [](const tensor& p) { return p.available(); })) {
    out.memory_ = out.shared_values(); // all in memory: one array now, the parts let go
    out.parts_.clear();
  }
  return out;
}

} // namespace troupe::staged
