// What a build of troupe without an optional engine says when a program asks for it: a typed
// error naming the engine and the option that brings it, before any work is done.
#include "troupe/actors/error.hpp"
#include "troupe/assigner/onnx_model.hpp"
#include "troupe/staged/disk_cache.hpp"
#include "troupe/staged/errors.hpp"
#include "troupe/staged/parallel_compute.hpp"
#include "troupe/troupe.hpp"
#if __has_include("troupe/collectives/collective_group.hpp")
#include "troupe/collectives/collective_group.hpp"
#endif

#include <gtest/gtest.h>

#include <string>

namespace {

template <class Error, class Call>
std::string message_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no " << typeid(Error).name() << " was thrown";
  return {};
}

// Each case is compiled only into a build without its engine: there is nothing to skip.
#if !TROUPE_TEST_ONNX
TEST(engines_off, a_model_from_onnx_is_refused_naming_the_option) {
  EXPECT_FALSE(troupe::onnx_available());
  const auto what = message_of<troupe::invalid_argument>([] {
    troupe::model_from_onnx_bytes(std::string{"\x08\x07", 2});
  });
  EXPECT_NE(what.find("TROUPE_WITH_ONNX"), std::string::npos) << what;
}
#endif

#if !TROUPE_TEST_HDF5
TEST(engines_off, a_memory_limit_is_refused_when_there_is_no_disk_cache) {
  using namespace troupe::staged;
  EXPECT_FALSE(disk_cache_available());
  schema s{"engines_off"};
  s.field("data");
  s.property({.name = "twice", .field_deps = {"data"}, .compute = [](const record& r) {
                return tensor::scalar(2 * r.get("data").values()());
              }});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", tensor::scalar(1)}}};
  const auto what = message_of<invalid_plan>(
    [&] { plan_compute(r, {"twice"}, {.memory_limit = 1, .cache_dir = "/nonexistent"}); });
  EXPECT_NE(what.find("TROUPE_WITH_HDF5"), std::string::npos) << what;
}
#endif

#if __has_include("troupe/collectives/collective_group.hpp")
TEST(engines_off, only_the_engines_built_are_available) {
  EXPECT_EQ(troupe::collective_backend_available(troupe::collective_backend::gloo),
            static_cast<bool>(TROUPE_TEST_GLOO));
  EXPECT_EQ(troupe::collective_backend_available(troupe::collective_backend::mpi),
            static_cast<bool>(TROUPE_TEST_MPI));
}
#endif

} // namespace
