// A tensor with named dims: an xt::xarray<double> whose axes are a staged::shape, in order.
//
//   tensor t{xt::xarray<double>{{1, 2, 3}, {4, 5, 6}}, {batch("example", 2), spatial("x", 3)}};
//   t.slice({{"example", 1}});          // (x=3): {4, 5, 6}
//   t.slice({{"time", 0}});             // t itself: a dim it lacks is not sliced (PhiML's expand)
//   tensor::stack(parts, {batch("example", 2)});   // the slices back, stacked dims first
#pragma once

#include "troupe/staged/dims.hpp"

#include <xtensor/xarray.hpp>

#include <map>
#include <string>
#include <vector>

namespace troupe::staged {

class tensor {
public:
  /// A 0-d tensor holding 0.
  tensor();
  /// invalid_argument if `values` has another number of axes or other sizes than `dims`.
  tensor(xt::xarray<double> values, shape dims);
  static tensor scalar(double value);

  const shape& dims() const noexcept { return dims_; }
  const xt::xarray<double>& values() const noexcept { return values_; }
  std::size_t nbytes() const noexcept { return values_.size() * sizeof(double); }

  /// The sub-tensor at `index` (dim name -> position): those dims go; dims this tensor lacks
  /// are ignored, so a value without a split dim is the same in every slice.
  tensor slice(const std::map<std::string, std::size_t>& index) const;
  /// `parts` (row-major over `along`'s dims, all of one shape) stacked into one tensor whose
  /// dims are `along`'s, then the parts'.
  static tensor stack(const std::vector<tensor>& parts, const shape& along);

  template <class Archive>
  void serialize(Archive& ar) {
    ar(dims_, values_);
  }

private:
  xt::xarray<double> values_;
  shape dims_;
};

} // namespace troupe::staged
