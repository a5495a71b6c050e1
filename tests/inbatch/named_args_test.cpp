// named_args::get for every arithmetic type: a number converts to the type asked for when it fits
// exactly, else the error names the argument.
#include "troupe/inbatch/named_args.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace troupe {
namespace {

template <class T>
class named_args_get : public ::testing::Test {};

using arithmetic =
  ::testing::Types<char, signed char, unsigned char, wchar_t, char8_t, char16_t, char32_t, short,
                   unsigned short, int, unsigned, long, unsigned long, long long,
                   unsigned long long, float, double, long double>;
TYPED_TEST_SUITE(named_args_get, arithmetic);

TYPED_TEST(named_args_get, converts_what_fits_and_names_what_does_not) {
  using T = TypeParam;
  const named_args args{
    {"small", 7}, {"negative", -1}, {"scale", 0.5}, {"huge", std::int64_t{1} << 62}};
  EXPECT_EQ(args.template get<T>("small"), T(7));
  EXPECT_EQ(args.template get_or<T>("absent", T(3)), T(3));
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_EQ(args.template get<T>("scale"), T(0.5)) << "the header's own example";
    EXPECT_EQ(args.template get<T>("negative"), T(-1));
  } else {
    EXPECT_THROW((void)args.template get<T>("scale"), invalid_argument) << "0.5 is no integer";
    if constexpr (std::is_signed_v<T>) {
      EXPECT_EQ(args.template get<T>("negative"), T(-1));
    } else {
      EXPECT_THROW((void)args.template get<T>("negative"), invalid_argument);
    }
  }
  if constexpr (sizeof(T) < 8 && !std::is_floating_point_v<T>) {
    EXPECT_THROW((void)args.template get<T>("huge"), invalid_argument);
  }
  if constexpr (std::is_same_v<T, float>) {
    EXPECT_EQ(args.template get<T>("huge"), T(std::int64_t{1} << 62)) << "a power of two is exact";
  }
}

TEST(named_args, an_integer_a_float_cannot_hold_exactly_is_refused) {
  const named_args args{{"odd", (std::int64_t{1} << 24) + 1}};
  EXPECT_THROW((void)args.get<float>("odd"), invalid_argument);
  EXPECT_EQ(args.get<double>("odd"), double((std::int64_t{1} << 24) + 1));
  try {
    (void)args.get<float>("odd");
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("'odd'"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe
