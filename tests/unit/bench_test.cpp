#include "pipeline/bench.h"

#include <gtest/gtest.h>

namespace egg::pipeline {
namespace {

using nlohmann::json;

json manifest(bool verified, double k, double eager, double compile) {
  return {
      {"status",
       {{"sm_90",
         {{"state", verified ? "verified" : "unverified"}, {"reason", verified ? "" : "no GPU"}}}}},
      {"timing",
       {{"kernel_ms", k},
        {"eager_ms", eager},
        {"compile_ms", compile},
        {"speedup_vs_eager", eager / k},
        {"speedup_vs_compile", compile / k},
        {"achieved_gbps", 4000.0}}},
      {"candidate", "c"}};
}

TEST(Bench, SummaryCountsCorrectRateFast1AndGeomean) {
  json rows = json::array({bench_row("a", manifest(true, 1.0, 2.0, 0.5), 1.0),
                           bench_row("b", manifest(true, 1.0, 8.0, 2.0), 1.0),
                           bench_error_row("c", "x.py:3: cumsum: unsupported\nmore", 1.0)});
  json r = bench_report(rows, "Fake", 4300.0);
  EXPECT_EQ(r["summary"]["ops"], 3);
  EXPECT_EQ(r["summary"]["verified"], 2);
  EXPECT_NEAR(r["summary"]["correct_rate"].get<double>(), 2.0 / 3, 1e-9);
  EXPECT_NEAR(r["summary"]["fast_1_vs_eager"].get<double>(), 2.0 / 3, 1e-9);
  EXPECT_NEAR(r["summary"]["fast_1_vs_compile"].get<double>(), 1.0 / 3, 1e-9);
  EXPECT_NEAR(r["summary"]["geomean_speedup_vs_eager"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR(r["rows"][0]["pct_of_copy_bw"].get<double>(), 100.0 * 4000 / 4300, 1e-9);
  std::string text = bench_text(r);
  EXPECT_NE(text.find("verified 2 (67%)"), std::string::npos) << text;
  EXPECT_NE(text.find("failed: x.py:3: cumsum: unsupported"), std::string::npos);
  EXPECT_NE(bench_markdown(r).find("| a | yes |"), std::string::npos);
}

TEST(Bench, DeviceTimeSpeedupsCarriedAndAveragedWhenPresent) {
  json m = manifest(true, 1.0, 2.0, 4.0);
  m["timing"]["eager_device_ms"] = 1.5;
  m["timing"]["speedup_vs_eager_device"] = 1.5;
  m["timing"]["compile_device_ms"] = 3.0;
  m["timing"]["speedup_vs_compile_device"] = 3.0;
  json m2 = manifest(true, 1.0, 2.0, 4.0);
  m2["timing"]["speedup_vs_eager_device"] = 6.0;
  json rows = json::array({bench_row("a", m, 1.0), bench_row("b", m2, 1.0),
                           bench_row("c", manifest(true, 1.0, 2.0, 4.0), 1.0),
                           bench_error_row("d", "failed", 1.0)});
  EXPECT_EQ(rows[0]["eager_device_ms"], 1.5);
  EXPECT_TRUE(rows[2]["speedup_vs_eager_device"].is_null());
  json r = bench_report(rows, "Fake", 0);
  EXPECT_NEAR(r["summary"]["geomean_speedup_vs_eager_device"].get<double>(), 3.0, 1e-9);
  EXPECT_NEAR(r["summary"]["geomean_speedup_vs_compile_device"].get<double>(), 3.0, 1e-9);
  // a (1.5x, 3x) and b (6x vs eager) are faster in device time; of 4 ops.
  EXPECT_NEAR(r["summary"]["fast_1_vs_eager_device"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(r["summary"]["fast_1_vs_compile_device"].get<double>(), 0.25, 1e-9);
  const std::string text = bench_text(r);
  EXPECT_NE(
      text.find("device time (host overhead hidden): fast_1 vs eager 50%, vs torch.compile 25%, "
                "geomean vs eager 3.00x, vs torch.compile 3.00x"),
      std::string::npos)
      << text;
  const std::string md = bench_markdown(r);
  EXPECT_NE(
      md.find("| a | yes | 1.0000 | 2.0000 | 4.0000 | - | 2.00x | 4.00x | -x | 1.50x | 3.00x |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("3.00x vs eager, 3.00x vs torch.compile"), std::string::npos) << md;
}

TEST(Bench, BothTorchCompileModesAndTheEagerVerdictAreReported) {
  json m = manifest(true, 1.0, 2.0, 4.0);
  m["timing"]["compile_max_autotune_ms"] = 3.0;
  m["timing"]["speedup_vs_compile_max_autotune"] = 3.0;
  m["vs_eager"] = {{"verdict", "faster"}};
  json slow = manifest(true, 1.0, 0.5, 0.8);
  slow["timing"]["compile_max_autotune_ms"] = 0.75;
  slow["timing"]["speedup_vs_compile_max_autotune"] = 0.75;
  slow["vs_eager"] = {{"verdict", "slower"}};
  json rows = json::array({bench_row("a", m, 1.0), bench_row("b", slow, 1.0)});
  EXPECT_EQ(rows[0]["compile_max_autotune_ms"], 3.0);
  EXPECT_EQ(rows[1]["vs_eager"], "slower");
  json r = bench_report(rows, "Fake", 0);
  EXPECT_NEAR(r["summary"]["geomean_speedup_vs_compile_max_autotune"].get<double>(), 1.5, 1e-9);
  EXPECT_NEAR(r["summary"]["fast_1_vs_compile_max_autotune"].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(r["summary"]["slower_than_eager"], 1);
  const std::string text = bench_text(r);
  EXPECT_NE(text.find("slower than eager beyond 3 % noise"), std::string::npos) << text;
  EXPECT_NE(text.find("vs max-autotune-no-cudagraphs 1.50x; slower than eager 1"),
            std::string::npos)
      << text;
  EXPECT_NE(bench_markdown(r).find("| 3.0000 | 2.00x | 4.00x | 3.00x |"), std::string::npos)
      << bench_markdown(r);
}

TEST(Bench, RowsCarryEachStagesSeconds) {
  json m = manifest(true, 1.0, 2.0, 4.0);
  m["stages"] = json::array({{{"step", "stage1"}, {"seconds", 12.5}},
                             {{"step", "stage2"}, {"seconds", 30.0}},
                             {{"step", "verify"}}});
  json row = bench_row("a", m, 50.0);
  EXPECT_EQ(row["stage1_s"], 12.5);
  EXPECT_EQ(row["stage2_s"], 30.0);
  EXPECT_FALSE(row.contains("verify_s"));
}

TEST(Bench, UnverifiedKernelsAreNotFast) {
  json rows = json::array({bench_row("a", manifest(false, 1.0, 2.0, 2.0), 1.0)});
  json r = bench_report(rows, "none", 0);
  EXPECT_EQ(r["summary"]["fast_1_vs_eager"].get<double>(), 0.0);
}

// A folder of models (each <model>/op.py) runs side by side: every op needs its own name, and so
// its own output folder. Stems shared by several ops take their folder's name.
TEST(Bench, OpsThatShareAFileNameGetTheirFoldersName) {
  const std::vector<std::filesystem::path> ops = {"models/mlp/op.py", "suite/ew_gelu.py",
                                                  "models/resnet_block/op.py", "a/x/op.py",
                                                  "b/x/op.py"};
  EXPECT_EQ(bench_names(ops),
            (std::vector<std::string>{"mlp_op", "ew_gelu", "resnet_block_op", "x_op", "x_op_2"}));
  EXPECT_EQ(bench_names({"suite/ew_gelu.py"}), (std::vector<std::string>{"ew_gelu"}));
}

}  // namespace
}  // namespace egg::pipeline
