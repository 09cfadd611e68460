#include "base/tolerance.h"

#include "base/stats.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

using namespace egg;

TEST(Tolerance, DefaultsFollowKernelBench) {
  EXPECT_EQ(default_tolerance("float32").atol, 1e-4);
  EXPECT_EQ(default_tolerance("float32").rtol, 1e-4);
  EXPECT_EQ(default_tolerance("float16").atol, 1e-2);
  EXPECT_EQ(default_tolerance("bfloat16").rtol, 1e-2);
  EXPECT_EQ(default_tolerance("int64").atol, 0.0);
}

TEST(Tolerance, BoundIsAtolPlusRtolTimesRef) {
  const Tolerance tol{1e-4, 1e-4};
  // |out-ref| = 1.5e-4 <= 1e-4 + 1e-4*1 = 2e-4: passes; 2.5e-4 fails.
  const std::vector<double> ref = {1.0, 1.0};
  const std::vector<double> out = {1.00015, 1.00025};
  const Comparison c = compare(out, ref, tol);
  EXPECT_EQ(c.bad_count, 1);
  EXPECT_EQ(c.first_bad_index, 1);
  EXPECT_DOUBLE_EQ(c.ref_value, 1.0);
  EXPECT_NEAR(c.bad_value, 1.00025, 1e-12);
  EXPECT_NEAR(c.max_abs_error, 2.5e-4, 1e-12);
  EXPECT_NEAR(c.max_rel_error, 2.5e-4, 1e-12);
}

TEST(Tolerance, LargeValuesUseRelativePart) {
  const Comparison c =
      compare(std::vector<double>{1000.05}, std::vector<double>{1000.0}, {1e-4, 1e-4});
  EXPECT_TRUE(c.ok());  // 0.05 <= 1e-4 + 0.1
}

TEST(Tolerance, NanInOutputFailsAndIsCounted) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Comparison c =
      compare(std::vector<double>{0.0, nan, nan}, std::vector<double>{0.0, 1.0, nan}, {1, 1});
  EXPECT_EQ(c.bad_count, 1);
  EXPECT_EQ(c.nan_count, 1);
  EXPECT_EQ(c.first_bad_index, 1);
}

TEST(Tolerance, InfinitiesMustMatchExactly) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(compare(std::vector<double>{inf}, std::vector<double>{inf}, {}).ok());
  EXPECT_FALSE(compare(std::vector<double>{-inf}, std::vector<double>{inf}, {}).ok());
  EXPECT_FALSE(compare(std::vector<double>{1e30}, std::vector<double>{inf}, {}).ok());
}

TEST(Tolerance, ZeroToleranceIsExact) {
  EXPECT_TRUE(compare(std::vector<double>{3.0}, std::vector<double>{3.0}, {0, 0}).ok());
  EXPECT_FALSE(compare(std::vector<double>{3.0}, std::vector<double>{4.0}, {0, 0}).ok());
}

TEST(Summary, MedianAndPercentiles) {
  std::vector<double> v;
  for (int i = 10; i >= 0; --i) v.push_back(i);  // 0..10, unsorted
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 5.0);
  EXPECT_DOUBLE_EQ(s.p10, 1.0);
  EXPECT_DOUBLE_EQ(s.p90, 9.0);
  EXPECT_DOUBLE_EQ(summarize({}).median, 0.0);
  EXPECT_DOUBLE_EQ(summarize({2.0}).p90, 2.0);
}
