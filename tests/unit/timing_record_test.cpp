// The manifest's `timing` (pipeline/timing_record.h): the kernel against the PyTorch baselines.
#include "pipeline/timing_record.h"

#include <gtest/gtest.h>

namespace egg::pipeline {
namespace {

using nlohmann::json;

TEST(TimingRecord, WithoutATimedKernelEveryFigureIsNull) {
  const json t = timing_record(std::nullopt, std::nullopt);
  EXPECT_EQ(t, json({{"kernel_ms", nullptr},
                     {"eager_ms", nullptr},
                     {"compile_ms", nullptr},
                     {"speedup_vs_eager", nullptr},
                     {"speedup_vs_compile", nullptr}}));
}

TEST(TimingRecord, ATimedKernelWithoutBaselinesHasItsGpuAndBandwidth) {
  const json t = timing_record(KernelTiming{0.5, "NVIDIA H100", 1e9}, std::nullopt);
  EXPECT_EQ(t["kernel_ms"], 0.5);
  EXPECT_EQ(t["gpu"], "NVIDIA H100");
  EXPECT_DOUBLE_EQ(t["achieved_gbps"].get<double>(), 2000.0);
  EXPECT_TRUE(t["eager_ms"].is_null());
  EXPECT_TRUE(t["speedup_vs_compile"].is_null());
  EXPECT_FALSE(t.contains("baseline_error"));
}

TEST(TimingRecord, EachMeasuredBaselineComesWithTheKernelsSpeedupOverIt) {
  verify::Baseline b;
  b.eager_ms = 2.0;
  b.compile_ms = 1.0;
  b.eager_device_ms = 1.5;
  b.library_gemm_ms = 0.25;
  b.compile_max_autotune_ms = 0.75;
  b.kernels = {{"eager", json::array({{{"name", "gemm"}, {"ms", 0.25}}})}};
  b.error = "torch.compile max-autotune failed";
  const json t = timing_record(KernelTiming{0.5, "gpu", 0}, b);
  EXPECT_DOUBLE_EQ(t["speedup_vs_eager"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(t["speedup_vs_compile"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(t["speedup_vs_eager_device"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(t["pct_of_library_gemm"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(t["speedup_vs_compile_max_autotune"].get<double>(), 1.5);
  EXPECT_FALSE(t.contains("compile_device_ms"));  // not measured: left out, not null
  EXPECT_FALSE(t.contains("compile_max_autotune_device_ms"));
  EXPECT_EQ(t["baseline_kernels"], b.kernels);
  EXPECT_EQ(t["baseline_error"], b.error);
}

}  // namespace
}  // namespace egg::pipeline
