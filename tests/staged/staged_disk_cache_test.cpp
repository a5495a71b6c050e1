// staged/'s disk cache (other_seeds.md §1c 5, 13-16): results over a slice's share of the
// memory limit go to HDF5 files, read back on access through a soft cache.
#include "troupe/actors/serialization.hpp"
#include "troupe/pools/thread_pool.hpp"
#include "troupe/staged/disk_cache.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include <gtest/gtest.h>

#include <hdf5.h>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace troupe::staged {
namespace {

namespace fs = std::filesystem;

/// A folder of its own for the test, removed with everything in it.
class scratch_folder {
public:
  scratch_folder() {
    std::string pattern = (fs::temp_directory_path() / "troupe-staged-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~scratch_folder() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::set<std::string> files() const {
    std::set<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(path_))
      out.insert(entry.path().string());
    return out;
  }

private:
  fs::path path_;
};

tensor plus(const tensor& t, double v) { return {t.values() + v, t.dims()}; }

/// PhiML's own test: p1 = value + 1, p1_mean over everything, rel_p1 = p1 - p1_mean.
std::shared_ptr<const schema> phiml_case() {
  schema s{"phiml_case"};
  s.field("value");
  s.property({.name = "p1", .field_deps = {"value"}, .compute = [](const record& r) {
                return plus(r.get("value"), 1.0);
              }});
  s.property(
    {.name = "p1_mean",
     .property_deps = {"p1"},
     .required_dims = dim_filter::all(),
     .compute = [](const record& r) { return tensor::scalar(xt::mean(r.get("p1").values())()); }});
  s.property({.name = "rel_p1", .property_deps = {"p1", "p1_mean"}, .compute = [](const record& r) {
                return plus(r.get("p1"), -r.get("p1_mean").values()());
              }});
  return std::make_shared<const schema>(std::move(s));
}

class staged_disk_cache : public ::testing::Test {
protected:
  runtime rt;
  thread_pool pool{rt, {.workers = 2}};
  scratch_folder folder;
};

// §1c 5.
TEST_F(staged_disk_cache, phimls_own_test_with_a_one_byte_limit) {
  record r{phiml_case(), {{"value", tensor{xt::arange<double>(2), {batch("example", 2)}}}}};
  parallel_compute(r, {"rel_p1"},
                   {.max_workers = 1, .memory_limit = 1, .cache_dir = folder.path() / "cache"},
                   pool);
  const auto& rel = r.get("rel_p1");
  EXPECT_FALSE(rel.available());
  EXPECT_TRUE(xt::allclose(rel.values(), xt::xarray<double>{-0.5, 0.5}));
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"rel_p1"}));
}

/// result = 2 data over 3 slices.
std::shared_ptr<const schema> doubling() {
  schema s{"doubling"};
  s.field("data").property(
    {.name = "result", .field_deps = {"data"}, .compute = [](const record& r) {
       return tensor{2.0 * r.get("data").values(), r.get("data").dims()};
     }});
  return std::make_shared<const schema>(std::move(s));
}

// §1c 13, and the files as HDF5 alone reads them.
TEST_F(staged_disk_cache, a_file_per_slice_created_exclusively_and_never_overwritten) {
  record r{doubling(), {{"data", tensor{xt::xarray<double>{1, 2, 3}, {batch("data", 3)}}}}};
  const compute_options options{.memory_limit = 1, .cache_dir = folder.path()};
  parallel_compute(r, {"result"}, options, pool);
  const auto p = [&](const char* name) { return (folder.path() / name).string(); };
  EXPECT_EQ(get_cache_files(r),
            (std::set<std::string>{p("s0_i0_0.h5"), p("s0_i1_0.h5"), p("s0_i2_0.h5")}));
  EXPECT_EQ(r.get("result").values(), (xt::xarray<double>{2, 4, 6}));

  record again{doubling(), {{"data", tensor{xt::xarray<double>{1, 2, 3}, {batch("data", 3)}}}}};
  parallel_compute(again, {"result"}, options, pool);
  EXPECT_EQ(get_cache_files(again),
            (std::set<std::string>{p("s0_i0_1.h5"), p("s0_i1_1.h5"), p("s0_i2_1.h5")}));
  EXPECT_EQ(folder.files().size(), 6u) << "the first run's files remain; no .partial is left";

  // Slice 1's file, read with the HDF5 library alone: dataset "result", 4.0, its dims.
  const hid_t file = H5Fopen(p("s0_i1_0.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t set = H5Dopen2(file, "result", H5P_DEFAULT);
  double value = 0;
  EXPECT_GE(H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), 0);
  EXPECT_EQ(value, 4.0);
  EXPECT_GT(H5Aexists(set, "dims"), 0);
  H5Dclose(set);
  H5Fclose(file);
}

// §1c 14: the limit is shared by the slices running at once; the smallest results stay.
TEST_F(staged_disk_cache, the_smallest_results_stay_within_a_slices_share) {
  schema s{"sizes"};
  s.field("data");
  s.property({.name = "small", .field_deps = {"data"}, .compute = [](const record& r) {
                return r.get("data"); // 8 bytes a slice
              }});
  s.property({.name = "big", .field_deps = {"data"}, .compute = [](const record&) {
                return tensor{xt::ones<double>({125}), {spatial("x", 125)}}; // 1000 bytes
              }});
  record r{std::make_shared<const schema>(std::move(s)),
           {{"data", tensor{xt::xarray<double>{1, 2}, {batch("data", 2)}}}}};
  // 2 slices at once: 100 bytes each.
  parallel_compute(r, {"small", "big"},
                   {.max_workers = 2, .memory_limit = 200, .cache_dir = folder.path()}, pool);
  EXPECT_TRUE(r.get("small").available());
  EXPECT_FALSE(r.get("big").available());
  EXPECT_EQ(r.get("big").dims(), (shape{batch("data", 2), spatial("x", 125)}));
  EXPECT_EQ(xt::sum(r.get("big").values())(), 250.0);
}

/// result = 2 [1, 2, 3], each slice's part in a file of its own.
tensor spilled_result(thread_pool& pool, const scratch_folder& folder) {
  record r{doubling(), {{"data", tensor{xt::xarray<double>{1, 2, 3}, {batch("data", 3)}}}}};
  parallel_compute(r, {"result"}, {.memory_limit = 1, .cache_dir = folder.path()}, pool);
  return r.get("result");
}

// §1c 15: a read from disk calls the callbacks first; a reread within the time to live reuses
// what was read; after it, or with no time to live, the files are read again.
TEST_F(staged_disk_cache, reads_go_through_a_soft_cache_with_a_time_to_live) {
  const auto result = spilled_result(pool, folder);
  std::atomic<int> loads{0};
  const auto subscription = on_load_into_memory([&](const file_ref&) { ++loads; });
  set_cache_ttl(std::chrono::seconds{60});
  EXPECT_EQ(*result.shared_values(), (xt::xarray<double>{2, 4, 6}));
  EXPECT_EQ(loads, 3) << "a file a part";
  (void)result.shared_values();
  EXPECT_EQ(loads, 3) << "within the time to live";

  set_cache_ttl(std::chrono::milliseconds{20});
  (void)result.shared_values(); // held for 20 ms from now
  std::this_thread::sleep_for(std::chrono::milliseconds{200});
  (void)result.shared_values();
  EXPECT_EQ(loads, 6) << "after the time to live";

  set_cache_ttl(std::nullopt);
  (void)result.shared_values();
  (void)result.shared_values();
  EXPECT_EQ(loads, 12) << "no time to live: every read reads";
  set_cache_ttl(std::chrono::seconds{2});
}

// §1c 16: a tensor on disk travels as where it is, never as its values.
TEST_F(staged_disk_cache, a_tensor_on_disk_serializes_without_its_values) {
  const auto small = tensor::on_disk(file_ref{"/x/s0_i0_0.h5", "p"}, shape{batch("data", 3)});
  const auto large = tensor::on_disk(file_ref{"/x/s0_i0_0.h5", "p"}, shape{batch("data", 300000)});
  EXPECT_EQ(troupe::serialize(small).size(), troupe::serialize(large).size());
  // 3 slices of 8,000 bytes each, on disk: the stack travels as 3 references.
  record r{doubling(),
           {{"data", tensor{xt::ones<double>({3, 1000}), {batch("data", 3), spatial("x", 1000)}}}}};
  parallel_compute(r, {"result"}, {.memory_limit = 1, .cache_dir = folder.path()}, pool);
  const auto bytes = troupe::serialize(r.get("result"));
  EXPECT_LT(bytes.size(), 1000u);
  const auto back = troupe::deserialize<tensor>(bytes);
  EXPECT_FALSE(back.available());
  EXPECT_EQ(back.values(), 2.0 * xt::ones<double>({3, 1000}));
}

// A file that cannot be written whole is not left behind: neither the reserved name nor the
// part written (here HDF5 refuses a dataset name with a '/' after the file is made).
TEST_F(staged_disk_cache, a_file_that_fails_mid_write_leaves_nothing) {
  schema s{"bad_name"};
  s.field("data").property({.name = "no/such/group",
                            .field_deps = {"data"},
                            .compute = [](const record& r) { return r.get("data"); }});
  record r{std::make_shared<const schema>(std::move(s)),
           {{"data", tensor{xt::xarray<double>{1, 2, 3}, {batch("data", 3)}}}}};
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(
    parallel_compute(r, {"no/such/group"}, {.memory_limit = 1, .cache_dir = folder.path()}, pool),
    troupe::serialization_error);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "HDF5's error stack, printed";
  EXPECT_TRUE(folder.files().empty());
}

TEST_F(staged_disk_cache, a_missing_file_is_a_serialization_error_naming_it) {
  const auto gone =
    tensor::on_disk(file_ref{(folder.path() / "gone.h5").string(), "p"}, shape{batch("data", 3)});
  try {
    (void)gone.values();
    FAIL() << "a missing file was read";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("gone.h5"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe::staged
