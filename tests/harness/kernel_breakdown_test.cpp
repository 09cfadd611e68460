#include "kernel_breakdown.h"

#include <gtest/gtest.h>

using namespace egg::harness;

namespace {

// Trial t (t = 0, 1, 2) spans [1000 t, 1000 (t + 1)) ns; each runs a GEMM then an epilogue, the
// GEMM taking 100 + 10 t ns and the epilogue 50 ns.
std::vector<KernelRecord> two_kernels_a_trial() {
  std::vector<KernelRecord> ks;
  for (std::uint64_t t = 0; t < 3; ++t) {
    // Listed out of order: CUPTI's buffers need not be sorted.
    ks.push_back({1000 * t + 400, 1000 * t + 450, 7, "_Z13conv_epiloguePf"});
    ks.push_back({1000 * t + 100, 1000 * t + 200 + 10 * t, 7, "_Z4gemmPKfS0_Pf"});
  }
  ks.push_back({50, 80, 7, "warm_up_left_over"});  // before the first mark: not a trial's
  return ks;
}

}  // namespace

TEST(KernelBreakdown, SumsEachTrialAndTimesEachKernelByPosition) {
  const KernelBreakdown b = kernel_breakdown(two_kernels_a_trial(), {90, 1000, 2000, 3000});
  ASSERT_EQ(b.trial_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(b.trial_ms[0], 150e-6);
  EXPECT_DOUBLE_EQ(b.trial_ms[2], 170e-6);
  EXPECT_EQ(b.kernels, 6u);
  ASSERT_EQ(b.per_kernel.size(), 2u);
  EXPECT_EQ(b.per_kernel[0].name, "gemm");
  EXPECT_DOUBLE_EQ(b.per_kernel[0].median_ms, 110e-6);  // the middle trial's
  EXPECT_EQ(b.per_kernel[1].name, "conv_epilogue");
  EXPECT_DOUBLE_EQ(b.per_kernel[1].median_ms, 50e-6);
}

TEST(KernelBreakdown, TrialsThatRanDifferentKernelsGiveNoPerKernelTimes) {
  auto ks = two_kernels_a_trial();
  ks.push_back({2500, 2600, 7, "_Z5extraPf"});  // the last trial ran a third kernel
  const KernelBreakdown b = kernel_breakdown(ks, {90, 1000, 2000, 3000});
  EXPECT_EQ(b.kernels, 7u);
  EXPECT_DOUBLE_EQ(b.trial_ms[2], 270e-6);
  EXPECT_TRUE(b.per_kernel.empty());
  EXPECT_TRUE(kernel_breakdown(ks, {90}).trial_ms.empty());  // no trial at all
}

TEST(KernelBreakdown, NamesAreDemangledWithoutTheirParameters) {
  EXPECT_EQ(short_kernel_name("_Z4gemmPKfS0_Pf"), "gemm");
  EXPECT_EQ(short_kernel_name("_ZN7cutlass7Kernel2I4TileEEvN4Tile6ParamsE"),
            "cutlass::Kernel2<Tile>");
  EXPECT_EQ(short_kernel_name("not_mangled_kernel"), "not_mangled_kernel");
  EXPECT_EQ(short_kernel_name(std::string(300, 'k')).size(), 160u);
}
