// A tensor with named dims: an xt::xarray<double> whose axes are a staged::shape, in order. Its
// values live in memory, in a dataset of an HDF5 file (parallel_compute's disk cache, see
// disk_cache.hpp), or as a stack of such parts, loaded when read.
//
//   tensor t{xt::xarray<double>{{1, 2, 3}, {4, 5, 6}}, {batch("example", 2), spatial("x", 3)}};
//   t.slice({{"example", 1}});          // (x=3): {4, 5, 6}
//   t.slice({{"time", 0}});             // t itself: a dim it lacks is not sliced (PhiML's expand)
//   tensor::stack(parts, {batch("example", 2)});   // the slices back, stacked dims first
#pragma once

#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/staged/dims.hpp"

#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <xtensor/xarray.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace troupe::staged {

/// Where a tensor kept on disk is: a dataset of an HDF5 file.
struct file_ref {
  std::string file; ///< a path
  /// The dataset's name in the file.
  std::string dataset;
  /// The same file and dataset.
  bool operator==(const file_ref&) const = default;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(file, dataset);
  }
};

/// A tensor of named dims (PhiML's Tensor, of doubles): in memory, or on disk in an HDF5 dataset
/// and read when first needed.
class tensor {
public:
  /// A 0-d tensor holding 0.
  tensor();
  /// invalid_argument if `values` has another number of axes or other sizes than `dims`.
  tensor(xt::xarray<double> values, shape dims);
  /// A 0-d tensor holding `value`.
  static tensor scalar(double value);
  /// A tensor of `dims` whose values are in `where`, read when first needed.
  static tensor on_disk(file_ref where, shape dims);

  /// Its named dims.
  const shape& dims() const noexcept { return dims_; }
  /// In memory (false while its values are on disk, loaded or not).
  bool available() const noexcept { return memory_ != nullptr; }
  /// The bytes its values take in memory.
  std::size_t nbytes() const noexcept { return dims_.volume() * sizeof(double); }

  /// The values, kept with this tensor: read from disk the first time (see shared_values()).
  const xt::xarray<double>& values() const;
  /// The values, shared: from disk through the soft cache (disk_cache.hpp: a reread within the
  /// cache's time to live reuses them; each read from disk first calls the on-load callbacks).
  std::shared_ptr<const xt::xarray<double>> shared_values() const;
  /// The files whose datasets hold this tensor's values (none if in memory).
  std::vector<std::string> files() const;

  /// The sub-tensor at `index` (dim name -> position): those dims go; dims this tensor lacks
  /// are ignored, so a value without a split dim is the same in every slice.
  tensor slice(const std::map<std::string, std::size_t>& index) const;
  /// `parts` (row-major over `along`'s dims, all of one shape) stacked into one tensor whose
  /// dims are `along`'s, then the parts'. Parts on disk stay there: the stack reads them when
  /// it is read.
  static tensor stack(std::vector<tensor> parts, const shape& along);

  /// In memory: the dims and values. On disk: the dims and where, never the values.
  template <class Archive>
  void save(Archive& ar) const {
    ar(kind(), dims_);
    if (memory_)
      ar(*memory_);
    else if (file_)
      ar(*file_);
    else
      ar(along_, parts_);
  }
  template <class Archive>
  void load(Archive& ar) {
    std::uint8_t k = 0;
    shape dims;
    ar(k, dims);
    *this = tensor{};
    memory_.reset();
    dims_ = std::move(dims);
    if (k == 0) {
      auto values = std::make_shared<xt::xarray<double>>();
      ar(*values);
      memory_ = std::move(values);
    } else if (k == 1) {
      file_.emplace();
      ar(*file_);
    } else {
      ar(along_, parts_);
    }
  }

private:
  std::uint8_t kind() const noexcept { return memory_ ? 0 : (file_ ? 1 : 2); }
  std::shared_ptr<const xt::xarray<double>> read() const;

  shape dims_;
  std::shared_ptr<const xt::xarray<double>> memory_;
  std::optional<file_ref> file_; // or on disk
  shape along_; // or a stack of parts
  std::vector<tensor> parts_;
  mutable std::shared_ptr<const xt::xarray<double>> pinned_; // values(), once read
};

} // namespace troupe::staged
