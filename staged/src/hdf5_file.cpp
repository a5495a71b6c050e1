#include "hdf5_file.hpp"

#include "troupe/staged/disk_cache.hpp"

#include "troupe/actors/error.hpp"

#include <hdf5.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace troupe::staged::detail {

namespace {

/// An HDF5 handle, closed by `close` when it goes.
class handle {
public:
  handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0)
      throw serialization_error("disk cache: " + what);
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  ~handle() { close_(id_); }
  hid_t operator*() const noexcept { return id_; }

private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// HDF5 builds without --enable-threadsafe must not be called from two threads at once (Debian's
/// is thread-safe; this lock keeps others correct, at no cost next to file I/O). Errors become
/// exceptions rather than printouts: the error stack's printing is set per thread.
std::unique_lock<std::mutex> use_hdf5() {
  static std::mutex mutex;
  std::unique_lock lock{mutex};
  thread_local const bool quiet = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  (void)quiet;
  return lock;
}

std::string dims_attribute(const shape& dims) {
  std::string text;
  for (const auto& d : dims.dims())
    text += (text.empty() ? "" : ",") + d.name + ":" + kind_name(d.kind);
  return text;
}

void write_dataset(hid_t file, const std::string& name, const tensor& t, const std::string& path) {
  const auto sizes = t.dims().sizes();
  const std::vector<hsize_t> extents(sizes.begin(), sizes.end());
  handle space{extents.empty()
                 ? H5Screate(H5S_SCALAR)
                 : H5Screate_simple(static_cast<int>(extents.size()), extents.data(), nullptr),
               H5Sclose, "no dataspace for '" + name + "' in " + path};
  handle set{
    H5Dcreate2(file, name.c_str(), H5T_IEEE_F64LE, *space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
    H5Dclose, "cannot create dataset '" + name + "' in " + path};
  if (H5Dwrite(*set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.values().data()) < 0)
    throw serialization_error("disk cache: cannot write '" + name + "' to " + path);
  const auto dims = dims_attribute(t.dims());
  handle type{H5Tcopy(H5T_C_S1), H5Tclose, "no string type"};
  H5Tset_size(*type, std::max<std::size_t>(1, dims.size()));
  handle scalar{H5Screate(H5S_SCALAR), H5Sclose, "no dataspace"};
  handle attribute{H5Acreate2(*set, "dims", *type, *scalar, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   "cannot label '" + name + "' in " + path};
  if (H5Awrite(*attribute, *type, dims.c_str()) < 0)
    throw serialization_error("disk cache: cannot label '" + name + "' in " + path);
}

/// The first free s<stage>_i<slice>_<k>.h5, taken with O_EXCL: no other writer gets it.
std::string reserve(const std::string& folder, std::size_t stage, std::size_t slice) {
  std::filesystem::create_directories(folder);
  for (std::size_t k = 0;; ++k) {
    const auto path =
      (std::filesystem::path{folder} / ("s" + std::to_string(stage) + "_i" + std::to_string(slice) +
                                        "_" + std::to_string(k) + ".h5"))
        .string();
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return path;
    }
    if (errno != EEXIST)
      throw serialization_error("disk cache: cannot create " + path + ": " + std::strerror(errno));
  }
}

} // namespace

std::string write_cache_file(const std::string& folder, std::size_t stage, std::size_t slice,
                             const std::map<std::string, tensor>& values) {
  const auto hdf5 = use_hdf5();
  const auto path = reserve(folder, stage, slice);
  const auto partial = path + ".partial";
  try {
    {
      handle file{H5Fcreate(partial.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                  "cannot create " + partial};
      for (const auto& [name, t] : values)
        write_dataset(*file, name, t, partial);
    }
    std::filesystem::rename(partial, path); // complete: it replaces the empty reservation
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    std::filesystem::remove(path, ignored);
    throw;
  }
  return path;
}

xt::xarray<double> read_dataset(const file_ref& where, const shape& dims) {
  const auto hdf5 = use_hdf5();
  const auto what = "dataset '" + where.dataset + "' of " + where.file;
  handle file{H5Fopen(where.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
              "cannot open " + where.file};
  handle set{H5Dopen2(*file, where.dataset.c_str(), H5P_DEFAULT), H5Dclose, "no " + what};
  handle space{H5Dget_space(*set), H5Sclose, "no dataspace for " + what};
  const int rank = H5Sget_simple_extent_ndims(*space);
  std::vector<hsize_t> extents(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(*space, extents.data(), nullptr);
  const auto sizes = dims.sizes();
  if (!std::equal(extents.begin(), extents.end(), sizes.begin(), sizes.end()))
    throw serialization_error("disk cache: " + what + " does not have the sizes of " +
                              dims.describe());
  auto values = xt::xarray<double>::from_shape(sizes);
  if (H5Dread(*set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw serialization_error("disk cache: cannot read " + what);
  return values;
}

} // namespace troupe::staged::detail

namespace troupe::staged {

bool disk_cache_available() noexcept { return true; }

} // namespace troupe::staged
