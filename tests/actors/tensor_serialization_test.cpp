#include "troupe/actors/tensor_serialization.hpp"

#include "../map_tensor_store.hpp"

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xrandom.hpp>

#include <complex>
#include <cstdint>
#include <map>
#include <random>

namespace {

using troupe::testing::map_store;

template <class Tensor>
void expect_tensor_round_trip(const Tensor& t) {
  const auto back = troupe::deserialize<Tensor>(troupe::serialize(t));
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.layout(), t.layout());
  EXPECT_EQ(back, t);
}

template <class T>
class tensor_of : public ::testing::Test {};

using element_types = ::testing::Types<bool, char, signed char, unsigned char, std::int16_t,
                                       std::uint16_t, std::int32_t, std::uint32_t, std::int64_t,
                                       std::uint64_t, float, double, long double>;
TYPED_TEST_SUITE(tensor_of, element_types);

TYPED_TEST(tensor_of, xarray_of_every_shape_round_trips) {
  using T = TypeParam;
  xt::xarray<T> scalar = T(1); // 0-d
  xt::xarray<T> empty = xt::xarray<T>::from_shape({3, 0, 2}); // no elements
  xt::xarray<T> vec = xt::arange<int>(7) % 2;
  xt::xarray<T> cube = xt::reshape_view(xt::arange<int>(24) % 2, {2, 3, 4});
  expect_tensor_round_trip(scalar);
  expect_tensor_round_trip(empty);
  expect_tensor_round_trip(vec);
  expect_tensor_round_trip(cube);
}

TYPED_TEST(tensor_of, xtensor_and_column_major_round_trip) {
  using T = TypeParam;
  xt::xtensor<T, 2> m = xt::reshape_view(xt::arange<int>(6) % 2, {2, 3});
  xt::xtensor<T, 0> zero_d = T(1);
  xt::xarray<T, xt::layout_type::column_major> col =
    xt::reshape_view(xt::arange<int>(12) % 2, {3, 4});
  xt::xtensor<T, 3, xt::layout_type::column_major> col3 =
    xt::reshape_view(xt::arange<int>(8) % 2, {2, 2, 2});
  expect_tensor_round_trip(m);
  expect_tensor_round_trip(zero_d);
  expect_tensor_round_trip(col);
  expect_tensor_round_trip(col3);
}

TEST(tensor_serialization, dynamic_layout_keeps_its_runtime_layout) {
  xt::xarray<float, xt::layout_type::dynamic> a;
  a.resize({2, 3}, xt::layout_type::column_major);
  for (std::size_t i = 0; i < a.size(); ++i)
    a.data()[i] = static_cast<float>(i);
  const auto back = troupe::deserialize<decltype(a)>(troupe::serialize(a));
  EXPECT_EQ(back.layout(), xt::layout_type::column_major);
  EXPECT_EQ(back, a);
}

TEST(tensor_serialization, elements_are_written_as_one_block) {
  // Header + layout + rank + extents + storage byte + exactly the element bytes: no per-element
  // framing.
  xt::xarray<double> a = xt::random::rand<double>({100, 10});
  const auto bytes = troupe::serialize(a);
  EXPECT_EQ(bytes.size(),
            troupe::detail::blob_header_size + 1 + 8 + 2 * 8 + 1 + 1000 * sizeof(double));
  const double* first = reinterpret_cast<const double*>(bytes.data() + bytes.size() - 8000);
  EXPECT_EQ(std::memcmp(first, a.data(), 8000), 0);
}

struct sample {
  std::string label;
  xt::xarray<float> features;
  xt::xtensor<std::int64_t, 1> ids;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(label, features, ids);
  }
};

TEST(tensor_serialization, structs_holding_tensors_round_trip) {
  sample s{"batch", xt::random::randn<float>({4, 5}), {1, 2, 3}};
  const auto back = troupe::deserialize<sample>(troupe::serialize(s));
  EXPECT_EQ(back.label, s.label);
  EXPECT_EQ(back.features, s.features);
  EXPECT_EQ(back.ids, s.ids);
}

TEST(tensor_serialization, a_map_of_tensors_round_trips) {
  const xt::xarray<float> weights = xt::random::randn<float>({3, 2});
  // snippet-begin: serialize
  auto bytes = troupe::serialize(std::map<std::string, xt::xarray<float>>{{"w", weights}});
  auto back = troupe::deserialize<std::map<std::string, xt::xarray<float>>>(bytes);
  // snippet-end: serialize
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back.at("w"), weights);
}

template <class T>
std::vector<std::byte> forged(const std::vector<std::uint64_t>& words, std::uint8_t layout = 0x00) {
  std::vector<std::byte> blob(troupe::detail::blob_header_size);
  blob.push_back(std::byte{layout});
  for (auto w : words) {
    const auto* p = reinterpret_cast<const std::byte*>(&w);
    blob.insert(blob.end(), p, p + 8);
  }
  troupe::detail::seal(blob, troupe::detail::type_tag(typeid(T).name()));
  return blob;
}

TEST(tensor_serialization, a_forged_shape_is_rejected_before_allocating) {
  const auto row_major = static_cast<std::uint8_t>(xt::layout_type::row_major);
  // rank 2, shape 10^8 x 10^7 = 10^15 elements, no data behind it
  EXPECT_THROW((void)troupe::deserialize<xt::xarray<float>>(
                 forged<xt::xarray<float>>({2, 100'000'000, 10'000'000}, row_major)),
               troupe::serialization_error);
  // extents whose product overflows 64 bits
  EXPECT_THROW((void)troupe::deserialize<xt::xarray<float>>(
                 forged<xt::xarray<float>>({2, 1ULL << 40, 1ULL << 40}, row_major)),
               troupe::serialization_error);
  // rank that does not match an xtensor's fixed rank
  EXPECT_THROW((void)(troupe::deserialize<xt::xtensor<float, 2>>(
                 forged<xt::xtensor<float, 2>>({3, 1, 1, 1}, row_major))),
               troupe::serialization_error);
  // unknown layout byte
  EXPECT_THROW((void)troupe::deserialize<xt::xarray<float>>(forged<xt::xarray<float>>({0}, 0x55)),
               troupe::serialization_error);
}

TEST(tensor_serialization, a_bool_tensor_with_a_byte_other_than_0_or_1_is_rejected) {
  const auto row_major = static_cast<std::uint8_t>(xt::layout_type::row_major);
  auto blob = forged<xt::xarray<bool>>({1, 3}, row_major);
  blob.push_back(std::byte{0}); // inline elements
  blob.push_back(std::byte{1});
  blob.push_back(std::byte{9});
  blob.push_back(std::byte{0});
  troupe::detail::seal(blob, troupe::detail::type_tag(typeid(xt::xarray<bool>).name()));
  EXPECT_THROW((void)troupe::deserialize<xt::xarray<bool>>(blob), troupe::serialization_error);
}

/// A tensor store over a map, standing in for the queues' shared-memory segments.

/// A blob for xt::xarray<float> with `shape` and the given storage (inline bytes or a handle).
std::vector<std::byte> forged_tensor(const std::vector<std::uint64_t>& shape, std::uint8_t storage,
                                     const std::string& handle = "") {
  std::vector<std::byte> blob(troupe::detail::blob_header_size);
  const auto put = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    blob.insert(blob.end(), b, b + n);
  };
  const std::uint8_t layout = static_cast<std::uint8_t>(xt::layout_type::row_major);
  const std::uint64_t rank = shape.size();
  put(&layout, 1);
  put(&rank, 8);
  for (auto e : shape)
    put(&e, 8);
  put(&storage, 1);
  if (storage == 1) {
    const std::uint64_t length = handle.size();
    put(&length, 8);
    put(handle.data(), handle.size());
  }
  troupe::detail::seal(blob, troupe::detail::type_tag(typeid(xt::xarray<float>).name()));
  return blob;
}

TEST(tensor_serialization, a_zero_extent_cannot_hide_extents_whose_strides_overflow) {
  const std::uint64_t huge = std::uint64_t{1} << 40;
  EXPECT_THROW((void)troupe::deserialize<xt::xarray<float>>(forged_tensor({0, huge, huge}, 0)),
               troupe::serialization_error);
  const auto empty = troupe::deserialize<xt::xarray<float>>(forged_tensor({0, 3, 4}, 0));
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.shape(), (xt::xarray<float>::shape_type{0, 3, 4}));
}

TEST(tensor_serialization, a_forged_shape_for_a_tensor_kept_outside_is_refused_before_sizing) {
  map_store store;
  store.kept["t0"].resize(64);
  troupe::detail::tensor_store_scope scope{store};
  try {
    (void)troupe::deserialize<xt::xarray<float>>(forged_tensor({1u << 30}, 1, "t0"));
    FAIL() << "a 4 GiB shape was accepted for 64 kept bytes";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("keeps 64"), std::string::npos) << e.what();
  }
}

TEST(tensor_serialization, large_tensors_go_to_an_active_store_and_come_back_from_it) {
  map_store store;
  const xt::xarray<float> big = xt::random::rand<float>({8, 8}), small = {1.f, 2.f};
  std::vector<std::byte> blob;
  {
    troupe::detail::tensor_store_scope scope{store};
    blob = troupe::serialize(std::pair{big, small});
  }
  EXPECT_EQ(store.kept.size(), 1u) << "only the large tensor is kept outside";
  EXPECT_LT(blob.size(), 200u);
  EXPECT_THROW((void)(troupe::deserialize<std::pair<xt::xarray<float>, xt::xarray<float>>>(blob)),
               troupe::serialization_error)
    << "no store active: the handle cannot be resolved";
  troupe::detail::tensor_store_scope scope{store};
  const auto back = troupe::deserialize<std::pair<xt::xarray<float>, xt::xarray<float>>>(blob);
  EXPECT_EQ(back.first, big);
  EXPECT_EQ(back.second, small);
}

TEST(tensor_serialization, corrupted_and_truncated_tensor_blobs_are_rejected) {
  std::mt19937_64 rng{11};
  const xt::xarray<float> a = xt::random::rand<float>({8, 8});
  const auto valid = troupe::serialize(a);
  for (int round = 0; round < 500; ++round) {
    auto bytes = valid;
    bytes[rng() % bytes.size()] ^= std::byte{static_cast<unsigned char>(1 + rng() % 255)};
    if (round % 2)
      bytes.resize(rng() % bytes.size());
    EXPECT_THROW((void)troupe::deserialize<xt::xarray<float>>(bytes), troupe::serialization_error);
  }
  EXPECT_THROW((void)troupe::deserialize<xt::xarray<double>>(valid), troupe::serialization_error);
  EXPECT_THROW((void)(troupe::deserialize<xt::xarray<float, xt::layout_type::column_major>>(valid)),
               troupe::serialization_error);
}

} // namespace
