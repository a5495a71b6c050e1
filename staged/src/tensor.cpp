#include "troupe/staged/tensor.hpp"

#include "troupe/actors/error.hpp"

#include <xtensor/xstrided_view.hpp>

namespace troupe::staged {

tensor::tensor() : values_(xt::xarray<double>(0.0)) {}

tensor::tensor(xt::xarray<double> values, shape dims)
  : values_(std::move(values)), dims_(std::move(dims)) {
  const std::vector<std::size_t> given(values_.shape().begin(), values_.shape().end());
  if (given != dims_.sizes())
    throw invalid_argument("tensor: values of " + std::to_string(given.size()) +
                           " axes (or other sizes) for dims " + dims_.describe());
}

tensor tensor::scalar(double value) { return {xt::xarray<double>(value), shape{}}; }

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
  return {xt::xarray<double>(xt::strided_view(values_, at)), shape{std::move(kept)}};
}

tensor tensor::stack(const std::vector<tensor>& parts, const shape& along) {
  if (parts.size() != along.volume() || parts.empty())
    throw invalid_argument("tensor::stack: " + std::to_string(parts.size()) + " parts for " +
                           along.describe());
  const auto& part_dims = parts.front().dims();
  std::vector<dim> dims = along.dims();
  dims.insert(dims.end(), part_dims.dims().begin(), part_dims.dims().end());
  shape out_dims{std::move(dims)};
  auto values = xt::xarray<double>::from_shape(out_dims.sizes());
  const auto block = parts.front().values().size();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!(parts[i].dims() == part_dims))
      throw invalid_argument("tensor::stack: part " + std::to_string(i) + " has dims " +
                             parts[i].dims().describe() + ", part 0 " + part_dims.describe());
    std::copy_n(parts[i].values().data(), block, values.data() + i * block);
  }
  return {std::move(values), std::move(out_dims)};
}

} // namespace troupe::staged
