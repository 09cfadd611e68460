#include <gtest/gtest.h>

#include <algorithm>

#include "fakes.h"
#include "util/files.h"
#include "verify/harness_verifier.h"

namespace egg::verify {
namespace {

namespace fs = std::filesystem;
using egg::testing::exited;
using egg::testing::FakeProcessRunner;

// The value after `flag` in a spec's arguments.
std::string arg_after(const ProcessSpec& spec, const std::string& flag) {
  for (size_t i = 0; i + 1 < spec.args.size(); ++i)
    if (spec.args[i] == flag) return spec.args[i + 1];
  return "";
}

TEST(Baseline, ReadsEagerCompileDeviceTimesAndTheLibrarysGemmTime) {
  TempDir dir(fs::temp_directory_path(), "egg-baseline-test");
  FakeProcessRunner runner([](const ProcessSpec& spec) {
    write_atomic(arg_after(spec, "--out"), R"({
      "eager": {"median_ms": 0.30}, "eager_device": {"median_ms": 0.20},
      "compile": {"median_ms": 0.25, "compile_s": 9.0}, "compile_device": {"median_ms": 0.18},
      "compile_max_autotune": {"median_ms": 0.22, "mode": "max-autotune-no-cudagraphs"},
      "compile_max_autotune_device": {"median_ms": 0.16},
      "eager_kernels": {"device_ms": 0.2, "gemm_library_ms": 0.15, "gemm_kernels": ["sm90_xmma"]}
    })");
    return exited(0);
  });
  Baseline b = time_baseline(runner, "python3", "/data", "/ops/op.py", dir.path());
  EXPECT_TRUE(b.error.empty()) << b.error;
  EXPECT_DOUBLE_EQ(b.eager_ms.value(), 0.30);
  EXPECT_DOUBLE_EQ(b.eager_device_ms.value(), 0.20);
  EXPECT_DOUBLE_EQ(b.compile_ms.value(), 0.25);
  EXPECT_DOUBLE_EQ(b.compile_device_ms.value(), 0.18);
  EXPECT_DOUBLE_EQ(b.compile_max_autotune_ms.value(), 0.22);
  EXPECT_DOUBLE_EQ(b.compile_max_autotune_device_ms.value(), 0.16);
  EXPECT_DOUBLE_EQ(b.library_gemm_ms.value(), 0.15);
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(arg_after(runner.calls[0], "--op"), "/ops/op.py");
  const auto& args = runner.calls[0].args;
  EXPECT_EQ(std::count(args.begin(), args.end(), "--no-max-autotune"), 0);
  TempDir quick(fs::temp_directory_path(), "egg-baseline-test");
  time_baseline(runner, "python3", "/data", "/ops/op.py", quick.path(), /*max_autotune=*/false);
  const auto& quick_args = runner.calls.at(1).args;
  EXPECT_EQ(std::count(quick_args.begin(), quick_args.end(), "--no-max-autotune"), 1);
  // Eager alone (egg-gen generate without --compare-compile): no torch.compile at all.
  TempDir eager(fs::temp_directory_path(), "egg-baseline-test");
  time_baseline(runner, "python3", "/data", "/ops/op.py", eager.path(), true, /*compile=*/false);
  const auto& eager_args = runner.calls.at(2).args;
  EXPECT_EQ(std::count(eager_args.begin(), eager_args.end(), "--no-compile"), 1);
}

TEST(Baseline, NoGemmKernelsNoLibraryFigureAndAFailureIsAnError) {
  TempDir dir(fs::temp_directory_path(), "egg-baseline-test");
  FakeProcessRunner ok([](const ProcessSpec& spec) {
    write_atomic(arg_after(spec, "--out"),
                 R"({"eager": {"median_ms": 0.1}, "eager_kernels": {"gemm_library_ms": 0.0}})");
    return exited(0);
  });
  Baseline b = time_baseline(ok, "python3", "/data", "/ops/op.py", dir.path());
  EXPECT_FALSE(b.library_gemm_ms.has_value());
  EXPECT_FALSE(b.compile_ms.has_value());
  EXPECT_FALSE(b.compile_max_autotune_ms.has_value());
  FakeProcessRunner failing([](const ProcessSpec&) { return exited(1, "", "CUDA error: busy"); });
  TempDir dir2(fs::temp_directory_path(), "egg-baseline-test");
  Baseline f = time_baseline(failing, "python3", "/data", "/ops/op.py", dir2.path());
  EXPECT_NE(f.error.find("CUDA error: busy"), std::string::npos) << f.error;
  EXPECT_FALSE(f.eager_ms.has_value());
}

}  // namespace
}  // namespace egg::verify
