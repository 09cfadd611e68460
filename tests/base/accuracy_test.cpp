// The accuracy rule (base/accuracy.h) on host comparisons of float32 data with float64 references.
#include "base/accuracy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/tolerance.h"

namespace egg {
namespace {

constexpr Tolerance kFp32{1e-4, 1e-4};
constexpr Tolerance kAny{std::numeric_limits<double>::infinity(), 0.0};

// PyTorch's output `torch`, a kernel's `kernel`, the float64 truth `exact`.
AccuracyInputs inputs(const std::vector<float>& torch, const std::vector<float>& kernel,
                      const std::vector<double>& exact) {
  return {compare(torch, exact, kFp32), compare(kernel, exact, kAny), compare(kernel, torch, kAny)};
}

// 64 values near 1; PyTorch off the truth by `torch_err` at every element, the kernel by
// `kernel_err` (alternating signs, so neither is a copy of the other).
AccuracyInputs offsets(double torch_err, double kernel_err) {
  std::vector<double> exact;
  std::vector<float> torch, kernel;
  for (int i = 0; i < 64; ++i) {
    const double v = 1.0 + i / 64.0;
    exact.push_back(v);
    torch.push_back(static_cast<float>(v + torch_err));
    kernel.push_back(static_cast<float>(v + (i % 2 ? kernel_err : -kernel_err)));
  }
  return inputs(torch, kernel, exact);
}

TEST(Accuracy, ModeNamesRoundTrip) {
  for (AccuracyMode m : {AccuracyMode::off, AccuracyMode::automatic, AccuracyMode::on})
    EXPECT_EQ(accuracy_mode_from_name(accuracy_mode_name(m)), m);
  EXPECT_EQ(accuracy_mode_name(AccuracyMode::automatic), "auto");
  EXPECT_FALSE(accuracy_mode_from_name("sometimes"));
}

TEST(Accuracy, AutoLeavesTheToleranceCheckWherePyTorchIsDetermined) {
  // PyTorch within 1e-4 of float64: the rule does not apply, even to a kernel 10x worse.
  const AccuracyVerdict v = judge_accuracy(offsets(1e-5, 5e-3), AccuracyMode::automatic, 2);
  EXPECT_FALSE(v.applied());
  EXPECT_FALSE(v.ok());
  EXPECT_NEAR(v.torch_max_abs, 1e-5, 1e-6);
}

TEST(Accuracy, AutoPassesAKernelAsAccurateAsAnUndeterminedPyTorch) {
  // PyTorch misses float64 by 0.02 (TF32-class): a kernel off by 0.03 is within 2x.
  const AccuracyVerdict v = judge_accuracy(offsets(0.02, 0.03), AccuracyMode::automatic, 2);
  EXPECT_TRUE(v.applied());
  EXPECT_TRUE(v.ok());
  EXPECT_NEAR(v.kernel_max_abs, 0.03, 1e-6);
  EXPECT_NEAR(v.kernel_mean_abs, 0.03, 1e-6);
}

TEST(Accuracy, AKernelMoreThanKTimesWorseFails) {
  const AccuracyVerdict v = judge_accuracy(offsets(0.02, 0.05), AccuracyMode::automatic, 2);
  EXPECT_EQ(v.outcome, AccuracyOutcome::error_too_big);
  EXPECT_TRUE(judge_accuracy(offsets(0.02, 0.05), AccuracyMode::automatic, 3).ok());
}

TEST(Accuracy, TheMeanErrorCountsToo) {
  // PyTorch off by 0.02 at one element only; the kernel by 0.03 at every element: its max is
  // within 2x, its mean is not.
  std::vector<double> exact(64, 1.0);
  std::vector<float> torch(64, 1.0f), kernel(64, 1.03f);
  torch[5] = 1.02f;
  const AccuracyVerdict v =
      judge_accuracy(inputs(torch, kernel, exact), AccuracyMode::automatic, 2);
  EXPECT_TRUE(v.applied());
  EXPECT_LE(v.kernel_max_abs, 2 * v.torch_max_abs);
  EXPECT_EQ(v.outcome, AccuracyOutcome::error_too_big);
}

TEST(Accuracy, NanOrInfWherePyTorchHasANumberFails) {
  std::vector<double> exact(8, 2.0);
  std::vector<float> torch(8, 2.05f), kernel(8, 2.0f);
  kernel[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(judge_accuracy(inputs(torch, kernel, exact), AccuracyMode::automatic, 2).outcome,
            AccuracyOutcome::special_values);
  kernel[3] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(judge_accuracy(inputs(torch, kernel, exact), AccuracyMode::automatic, 2).outcome,
            AccuracyOutcome::special_values);
  // where PyTorch's own output is inf too, the same inf is no fault
  torch[3] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(judge_accuracy(inputs(torch, kernel, exact), AccuracyMode::automatic, 2).ok());
}

TEST(Accuracy, OnJudgesEveryOutputWithHalfAnUlpAsTheSmallestBound) {
  // PyTorch exact: a kernel rounding to float32 passes, one off by 1e-5 does not.
  std::vector<double> exact = {1.0 / 3.0, 2.0 / 3.0, 1000.0 / 7.0};
  std::vector<float> torch, rounded, off;
  for (double v : exact) {
    torch.push_back(static_cast<float>(v));
    rounded.push_back(static_cast<float>(v));
    off.push_back(static_cast<float>(v + 1e-5 * (1 + v)));
  }
  std::vector<double> torch_exact(torch.begin(), torch.end());  // PyTorch bit-exact to "truth"
  const AccuracyVerdict pass = judge_accuracy(inputs(torch, rounded, exact), AccuracyMode::on, 2);
  EXPECT_TRUE(pass.applied());
  EXPECT_TRUE(pass.ok());
  EXPECT_DOUBLE_EQ(pass.floor, std::ldexp(1000.0 / 7.0, -24));
  EXPECT_FALSE(judge_accuracy(inputs(torch, off, torch_exact), AccuracyMode::on, 2).ok());
  EXPECT_FALSE(judge_accuracy(inputs(torch, off, exact), AccuracyMode::off, 2).applied());
}

TEST(Accuracy, CompareAgainstFloat64SumsTheErrors) {
  const Comparison c =
      compare(std::vector<float>{1.5f, 2.0f, std::numeric_limits<float>::quiet_NaN()},
              std::vector<double>{1.0, 2.5, 3.0}, kAny);
  EXPECT_EQ(c.finite_count, 2);
  EXPECT_DOUBLE_EQ(c.sum_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(c.mean_abs_error(), 0.5);
  EXPECT_DOUBLE_EQ(c.max_abs_ref, 2.5);
  EXPECT_EQ(c.bad_count, 1);  // the NaN, under an infinite tolerance
}

}  // namespace
}  // namespace egg
