// The whole pipeline on fakes: a scripted frontend, nvcc and nvidia-smi.
#include "pipeline/artifacts.h"
#include "pipeline/eager_floor.h"
#include "pipeline/evaluate.h"
#include "pipeline/generate.h"
#include "pipeline/stage.h"
#include "verify/ncu.h"
#include "verify/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "fakes.h"
#include "spec_fixtures.h"
#include "util/error.h"
#include "util/files.h"

namespace egg::pipeline {
namespace {

using egg::testing::exited;
using egg::testing::has;
using nlohmann::json;
namespace fs = std::filesystem;

class PipelineTest : public ::testing::Test {
 protected:
  TempDir dir{fs::temp_directory_path(), "egg-pipeline-test"};
  json spec = egg::testing::gelu_bias_spec();
  json frontend_error;  // when set, the frontend fails with it
  bool nvcc_fails = false;
  std::string gpu_codes;        // what `nvcc --list-gpu-code` prints (empty: nothing known)
  std::string frontend_stderr;  // what the frontend prints on success
  json baseline = {{"eager", {{"median_ms", 1.0}}}};  // what `python -m egg_bench baseline` writes
  std::function<void()> before_baseline;              // runs as the baseline starts
  std::atomic<int> compiles{0};                       // nvcc compiles so far
  std::function<void()> before_compile;               // runs as each nvcc compile starts
  std::atomic<int> traces{0};                         // frontend runs so far
  egg::testing::FakeProcessRunner runner{[this](const ProcessSpec& p) { return answer(p); }};

  ProcessResult answer(const ProcessSpec& p) {
    const std::string exe = p.exe.filename().string();
    if (exe == "python3" && p.args.size() > 1 && p.args[1] == "egg_bench") {
      if (before_baseline) before_baseline();
      write_atomic(p.args.at(6), baseline.dump());
      return exited(0);
    }
    if (exe == "python3") {
      ++traces;
      fs::path out = p.args.at(6);
      if (!frontend_error.is_null()) {
        write_atomic(out / "error.json", frontend_error.dump());
        return exited(1);
      }
      write_atomic(out / "spec.json", spec.dump());
      write_atomic(out / "trace_times.json", R"({"import": 1.5, "capture": 0.25, "odd": "x"})");
      return exited(0, "", frontend_stderr);
    }
    if (exe == "nvcc") {
      if (p.args.at(0) == "--version")
        return exited(0, "nvcc\nCuda compilation tools, release 13.0, V13.0.88\n");
      if (p.args.at(0) == "--list-gpu-code") return exited(0, gpu_codes);
      ++compiles;
      if (before_compile) before_compile();
      return nvcc_fails ? exited(1, "", "kernel.cu(3): error: identifier undefined") : exited(0);
    }
    ProcessResult none;  // nvidia-smi: not installed
    return none;
  }

  GenerateOptions options() {
    if (!fs::exists(dir.path() / "src" / "gelu_bias.py"))
      write_atomic(dir.path() / "src" / "gelu_bias.py", "# op\n");
    GenerateOptions o;
    o.op_file = dir.path() / "src" / "gelu_bias.py";
    o.out_dir = dir.path() / "out";
    o.arches = {"sm_90"};
    o.python = "python3";
    o.nvcc = "nvcc";
    o.data_dir = EGG_TEST_DATA_DIR;
    o.cache_dir = dir.path() / "cache";
    return o;
  }

  GenerateResult run(const GenerateOptions& o) {
    Services services{runner};
    return generate(o, services);
  }
};

TEST_F(PipelineTest, GeneratesOutputsAndManifest) {
  auto r = run(options());
  EXPECT_EQ(r.name, "gelu_bias");
  EXPECT_EQ(r.cache_status, "miss");
  fs::path out = dir.path() / "out";
  ASSERT_TRUE(fs::exists(out / "gelu_bias.cu"));
  ASSERT_TRUE(fs::exists(out / "include" / "egg" / "gelu_bias.h"));
  json m = json::parse(read_file(out / "manifest.json").value());
  EXPECT_EQ(m["schema"], 1);
  EXPECT_EQ(m["status"]["sm_90"]["text"], "unverified: no GPU");
  EXPECT_EQ(m["backend"], "builtin");
  EXPECT_EQ(m["cache_key"], r.cache_key);
  EXPECT_EQ(m["op"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(m["timing"]["kernel_ms"].is_null());
  ASSERT_EQ(m["stages"].size(), 3u);
  EXPECT_EQ(m["stages"][0]["step"], "stage1");
  EXPECT_EQ(m["stages"][1]["step"], "stage2");
  auto dep = read_file(out / "gelu_bias.d").value();
  EXPECT_NE(dep.find("gelu_bias.cu:"), std::string::npos);
  EXPECT_NE(dep.find("/src/op.py"), std::string::npos) << dep;
  EXPECT_EQ(runner.count("nvcc"), 4);  // --version, --list-gpu-code and a compile check per stage
}

TEST_F(PipelineTest, SecondRunHitsTheCacheAndChangesNothing) {
  run(options());
  const int compiles = runner.count("nvcc");
  auto r = run(options());
  EXPECT_EQ(r.cache_status, "hit");
  EXPECT_TRUE(r.changed.empty());
  EXPECT_EQ(runner.count("nvcc"), compiles + 2);  // only --version and --list-gpu-code
}

TEST_F(PipelineTest, CommentOnlyEditKeepsTheKeyAndTheSources) {
  auto first = run(options());
  spec["nodes"][0]["line"] = 8;  // a comment moved every line down
  write_atomic(dir.path() / "src" / "gelu_bias.py", "# op\n# a comment\n");
  auto second = run(options());
  EXPECT_EQ(first.cache_key, second.cache_key);
  ASSERT_EQ(second.changed.size(), 1u);  // the manifest (op sha256), not the .cu or header
  EXPECT_EQ(second.changed[0].filename(), "manifest.json");
}

TEST_F(PipelineTest, ChangedConstantRegenerates) {
  auto first = run(options());
  spec["nodes"][0]["args"][1]["scalar"] = 0.25;
  auto second = run(options());
  EXPECT_NE(first.cache_key, second.cache_key);
  EXPECT_EQ(second.cache_status, "miss");
  EXPECT_NE(read_file(dir.path() / "out" / "gelu_bias.cu").value().find("0.25f"),
            std::string::npos);
}

// Tolerances below 1e-6 are keys of their own (std::to_string wrote both as 0.000000).
TEST_F(PipelineTest, ATighterToleranceRegenerates) {
  auto o = options();
  o.atol = 1e-7;
  auto first = run(o);
  o.atol = 2e-7;
  auto second = run(o);
  EXPECT_NE(first.cache_key, second.cache_key);
  EXPECT_EQ(second.cache_status, "miss");
}

TEST_F(PipelineTest, FrontendUserErrorLeavesNothingBehind) {
  frontend_error = {{"kind", "user"},
                    {"file", "/src/op.py"},
                    {"line", 3},
                    {"op", "get_inputs"},
                    {"message", "op.py defines no function get_inputs()"},
                    {"hint", "add it"}};
  try {
    run(options());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().op, "get_inputs");
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  EXPECT_FALSE(fs::exists(dir.path() / "cache" / "v1"));
}

TEST_F(PipelineTest, UnsupportedOpIsAUserErrorAndWritesNothing) {
  spec["nodes"][2]["op"] = "torch.sort";
  spec["nodes"][2]["target"] = "torch.sort";
  EXPECT_THROW(run(options()), UserError);
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST_F(PipelineTest, RequireVerifiedWithoutGpuFails) {
  auto o = options();
  o.require_verified = true;
  try {
    run(o);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not verified"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "gelu_bias.cu"));
}

TEST_F(PipelineTest, CompileFailureIsRepairedByFallingBackThenReported) {
  nvcc_fails = true;
  try {
    run(options());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("identifier undefined"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  // The debug agent tried the scalar structure after the vector one failed.
  EXPECT_GE(runner.count("nvcc"), 3);
}

// A GPU that verifies everything at a fixed time, or fails every candidate with one class.
// References that are ready at once; counts how often a candidate asked for them.
class FakeReferences : public verify::References {
 public:
  explicit FakeReferences(std::atomic<int>* asked) : asked_(asked) {}
  fs::path endpoint() override {
    ++*asked_;
    return "/nonexistent/fake-refs.sock";
  }
  json stats() const override { return {{"ok", true}, {"startup_ms", 5.0}}; }

 private:
  std::atomic<int>* asked_;
};

class FakeGpu : public verify::GpuVerifier {
 public:
  std::string fail;
  int fail_first = 0;   // the first runs fail as `fail` says, the others verify
  int fail_strict = 0;  // the first strict runs (the verify step's) fail compute-sanitizer
  int runs = 0, strict_runs = 0;
  std::vector<std::string> strict_sources;     // the candidate each strict run checked
  std::vector<std::optional<double>> cutoffs;  // each run's time_cutoff_ms
  std::atomic<int> reference_servers{0}, endpoint_calls{0};
  std::unique_ptr<verify::References> references(const verify::ReferenceRequest&) override {
    ++reference_servers;
    return std::make_unique<FakeReferences>(&endpoint_calls);
  }
  verify::GpuOutcome run(const fs::path& cu, const fs::path&, const fs::path&,
                         verify::References& refs, const fs::path&,
                         const verify::RunOptions& options) override {
    refs.endpoint();
    ++runs;
    cutoffs.push_back(options.time_cutoff_ms);
    verify::GpuOutcome o;
    bool fails = !fail.empty() && (fail_first == 0 || runs <= fail_first);
    if (fails) o.status = harness::status_from_name(fail).value();
    if (options.strict) {
      strict_sources.push_back(cu.string());
      if (++strict_runs <= fail_strict) {
        fails = true;
        o.status = harness::status_from_name("sanitizer").value();
      }
    }
    o.report = fails ? "max abs error 3.0\nrepro: egg-harness verify ..." : "";
    if (!fails) o.kernel_ms = 0.5 - 0.01 * runs;  // later candidates a little faster
    return o;
  }
  std::string gpu_name() const override { return "Fake H200"; }
  std::string gpu_arch() const override { return "sm_90"; }
};

TEST_F(PipelineTest, WithAGpuTheFastestVerifiedCandidateWinsAndTheStatusSaysVerified) {
  FakeGpu gpu;
  Services services{runner, &gpu};
  auto o = options();
  o.arches = {"sm_90", "sm_80"};
  o.baseline = false;
  auto r = generate(o, services);
  json m = json::parse(read_file(dir.path() / "out" / "manifest.json").value());
  EXPECT_EQ(m["status"]["sm_90"]["state"], "verified");
  EXPECT_EQ(m["status"]["sm_80"]["state"], "compiled, not verified on this GPU");
  EXPECT_TRUE(m["timing"]["kernel_ms"].is_number());
  EXPECT_GT(gpu.runs, 3);  // every stage-2 candidate was measured
  EXPECT_EQ(m["stages"][1]["decision"].get<std::string>().rfind("fastest verified", 0), 0u);
  // One reference server for the whole generation, asked by every run; the time per phase.
  EXPECT_EQ(gpu.reference_servers.load(), 1);
  EXPECT_EQ(gpu.endpoint_calls.load(), gpu.runs);
  for (const char* phase : {"trace", "compile", "references_startup"})
    EXPECT_TRUE(m["phases"].contains(phase)) << phase << " in " << m["phases"].dump();
  // The frontend's split of the trace (its trace_times.json), numbers only.
  EXPECT_EQ(m["phases"].value("trace_import", 0.0), 1.5) << m["phases"].dump();
  EXPECT_EQ(m["phases"].value("trace_capture", 0.0), 0.25);
  EXPECT_FALSE(m["phases"].contains("trace_odd"));
  // Once a candidate is measured, the others' timing may stop at 1.5x the best so far (a
  // challenger that slow cannot win); before that there is nothing to cut at.
  ASSERT_FALSE(gpu.cutoffs.empty());
  EXPECT_FALSE(gpu.cutoffs.front().has_value());
  int cut = 0;
  for (size_t i = 0; i < gpu.cutoffs.size(); ++i) {
    if (!gpu.cutoffs[i]) continue;
    ++cut;
    bool earlier = false;  // the fake's run k took 0.5 - 0.01 k ms
    for (size_t k = 1; k <= i; ++k)
      earlier = earlier || std::abs(*gpu.cutoffs[i] - 1.5 * (0.5 - 0.01 * double(k))) < 1e-9;
    EXPECT_TRUE(earlier) << "cutoff " << *gpu.cutoffs[i] << " of run " << i + 1;
  }
  EXPECT_GT(cut, 0);
}

// Stage 2 spends its budget on new candidates: a proposal stage 1 measured already (its winner,
// a runner-up) keeps stage 1's evaluation and is not timed again.
TEST_F(PipelineTest, StageTwoDoesNotMeasureWhatStageOneMeasured) {
  // A row sum: the reduction family's tunings of a stage-1 winner include that winner itself.
  using egg::testing::node;
  using egg::testing::ref;
  using egg::testing::tensor;
  spec = egg::testing::spec_around(
      {tensor("x", {64, 4096})}, json::array(),
      {node("s", "sum", {ref("x")}, {{"dim", {1}}, {"keepdim", false}, {"dtype", nullptr}}, {64},
            7)});
  FakeGpu gpu;
  Services services{runner, &gpu};
  auto o = options();
  o.baseline = false;
  auto r = generate(o, services);
  std::set<std::string> first;
  for (const auto& a : r.manifest["stages"][0]["attempts"]) first.insert(a.value("candidate", ""));
  ASSERT_FALSE(first.empty());
  int second = 0;
  for (const auto& a : r.manifest["stages"][1]["attempts"]) {
    ++second;
    EXPECT_FALSE(first.count(a.value("candidate", ""))) << a.dump();
  }
  EXPECT_GT(second, 0);
}

// The winner fails the verify step's compute-sanitizer run: the next fastest verified candidate
// is checked and emitted, and the manifest says which failed and why; when every one fails, the
// chosen kernel's failure is the error.
TEST_F(PipelineTest, AWinnerThatFailsTheFinalCheckGivesWayToTheNextFastestVerified) {
  FakeGpu gpu;
  gpu.fail_strict = 1;
  Services services{runner, &gpu};
  auto o = options();
  o.baseline = false;
  o.strict = true;
  auto r = generate(o, services);
  const json& verify = r.manifest["stages"][2];
  ASSERT_EQ(verify["rejected"].size(), 1u) << verify.dump();
  const std::string first = verify["rejected"][0]["candidate"];
  EXPECT_EQ(verify["rejected"][0]["failure_class"], "sanitizer");
  EXPECT_EQ(first, r.manifest["stages"][1]["chosen"].get<std::string>());  // stage 2's winner
  EXPECT_NE(r.manifest["candidate"], first);
  EXPECT_EQ(r.manifest["status"]["sm_90"]["state"], "verified");
  EXPECT_EQ(gpu.strict_runs, 2);
  EXPECT_NE(gpu.strict_sources[0], gpu.strict_sources[1]);

  FakeGpu hopeless;
  hopeless.fail_strict = 100;
  Services again{runner, &hopeless};
  o.cache_enabled = false;
  fs::remove_all(dir.path() / "out");
  try {
    generate(o, again);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("verify: the chosen kernel failed: sanitizer", 0), 0u) << what;
    EXPECT_NE(what.find("the next fastest verified candidates failed it too"), std::string::npos)
        << what;
  }
  EXPECT_EQ(hopeless.strict_runs, 1 + static_cast<int>(egg::pipeline::kRunnersUpKept));
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "gelu_bias.cu"));
}

TEST_F(PipelineTest, AGenerationReportsItsProgressAndACacheHitSaysNothingOfIt) {
  ::setenv("EGG_PROGRESS_SECONDS", "0", 1);  // every update is a line
  FakeGpu gpu;
  Services services{runner, &gpu};
  auto o = options();
  o.baseline = false;
  o.budget = 2;
  ::testing::internal::CaptureStderr();
  generate(o, services);
  const std::string first = ::testing::internal::GetCapturedStderr();
  ::testing::internal::CaptureStderr();
  generate(o, services);
  const std::string second = ::testing::internal::GetCapturedStderr();
  ::unsetenv("EGG_PROGRESS_SECONDS");
  EXPECT_NE(first.find("egg: gelu_bias: stage1, building 2 candidates"), std::string::npos)
      << first;
  EXPECT_NE(first.find("egg: gelu_bias: stage1, candidate 1/2, none verified yet"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("egg: gelu_bias: stage2, candidate 1/2, best so far "), std::string::npos)
      << first;
  EXPECT_NE(first.find("egg: gelu_bias: done in "), std::string::npos) << first;
  EXPECT_EQ(second.find("candidate"), std::string::npos) << second;
  EXPECT_EQ(second.find("done in"), std::string::npos) << second;
}

// Slower than eager beyond the noise: the log and the manifest say so; --require-faster stops.
TEST_F(PipelineTest, AKernelSlowerThanEagerIsRecordedAndFailsWhenFasterIsRequired) {
  FakeGpu gpu;  // candidates at about 0.45 ms
  Services services{runner, &gpu};
  auto o = options();
  baseline = {{"eager", {{"median_ms", 0.30}}}, {"compile", {{"median_ms", 0.25}}}};
  auto r = generate(o, services);
  EXPECT_EQ(r.manifest["vs_eager"]["verdict"], "slower");
  EXPECT_DOUBLE_EQ(r.manifest["vs_eager"]["eager_ms"].get<double>(), 0.30);
  EXPECT_EQ(r.manifest["vs_eager"]["kernel_ms"], r.manifest["timing"]["kernel_ms"]);
  EXPECT_DOUBLE_EQ(r.manifest["vs_eager"]["margin"].get<double>(), 0.03);

  fs::remove_all(dir.path() / "out");
  o.require_faster = true;  // a cache hit now: the recorded times decide
  try {
    generate(o, services);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("slower than eager PyTorch"), std::string::npos) << what;
    EXPECT_NE(what.find("0.3 ms"), std::string::npos) << what;
    EXPECT_NE(e.hint().find("EGG_REQUIRE_FASTER=OFF"), std::string::npos) << e.hint();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "gelu_bias.cu"));

  // 1 % slower than eager (a fresh GPU measures the same candidates the same): within the noise.
  const double kernel_ms = r.manifest["timing"]["kernel_ms"].get<double>();
  baseline = {{"eager", {{"median_ms", kernel_ms / 1.01}}}};
  o.cache_enabled = false;
  FakeGpu fresh;
  Services again{runner, &fresh};
  auto close = generate(o, again);
  EXPECT_DOUBLE_EQ(close.manifest["timing"]["kernel_ms"].get<double>(), kernel_ms);
  EXPECT_EQ(close.manifest["vs_eager"]["verdict"], "within_noise");
}

// The baselines do not wait for the kernel: they run while the stages compile candidates (here:
// a compile starts while the baseline process runs; run after the stages, none would).
TEST_F(PipelineTest, TheBaselinesAreTimedBesideTheStages) {
  FakeGpu gpu;
  Services services{runner, &gpu};
  std::atomic<bool> compiled_meanwhile{false};
  before_baseline = [&] {
    const int at_start = compiles.load();
    for (int i = 0; i < 1000 && !compiled_meanwhile; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      compiled_meanwhile = compiles.load() > at_start;
    }
  };
  auto r = generate(options(), services);
  EXPECT_TRUE(compiled_meanwhile);
  EXPECT_DOUBLE_EQ(r.manifest["timing"]["eager_ms"].get<double>(), 1.0);
  EXPECT_TRUE(r.manifest["phases"].contains("baselines")) << r.manifest["phases"].dump();
  EXPECT_TRUE(r.manifest["phases"].contains("baseline_wait")) << r.manifest["phases"].dump();
  // The baseline sizes its GPU memory admission from the traced spec.
  bool spec_passed = false;
  for (const auto& c : runner.calls)
    if (c.args.size() > 1 && c.args[1] == "egg_bench")
      spec_passed = std::find(c.args.begin(), c.args.end(), "--spec") != c.args.end();
  EXPECT_TRUE(spec_passed);
}

// CPU-heavy children (the frontend, nvcc compiles) hold the quiet lock shared; children that time
// (egg_bench, egg-harness) and nvcc's queries (--version, --list-gpu-code) do not.
TEST_F(PipelineTest, CpuHeavyChildrenAreMarkedForTheQuietLock) {
  FakeGpu gpu;
  Services services{runner, &gpu};
  generate(options(), services);
  int compiles = 0, traces = 0, baselines = 0;
  for (const auto& c : runner.calls) {
    const bool bench = c.args.size() > 1 && c.args[1] == "egg_bench";
    const bool version =
        !c.args.empty() && (c.args[0] == "--version" || c.args[0] == "--list-gpu-code");
    if (c.exe.filename() == "nvcc" && !version) {
      ++compiles;
      EXPECT_TRUE(c.cpu_work);
    } else if (c.exe.filename() == "python3" && !bench) {
      ++traces;
      EXPECT_TRUE(c.cpu_work);
    } else {
      baselines += bench;
      EXPECT_FALSE(c.cpu_work) << c.exe << " " << (c.args.empty() ? "" : c.args[0]);
    }
  }
  EXPECT_GT(compiles, 0);
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(baselines, 1);
}

TEST_F(PipelineTest, WithoutAGpuTheEagerComparisonIsNotMeasured) {
  auto o = options();
  o.require_faster = true;  // nothing measured: nothing to fail on
  auto r = run(o);
  EXPECT_EQ(r.manifest["vs_eager"]["verdict"], "not_measured");
  EXPECT_TRUE(r.manifest["vs_eager"]["eager_ms"].is_null());
}

TEST(EagerFloor, VerdictsAndText) {
  EXPECT_EQ(compare_with_eager({{"kernel_ms", 1.0}, {"eager_ms", 2.0}}).verdict,
            EagerVerdict::faster);
  EXPECT_EQ(compare_with_eager({{"kernel_ms", 1.02}, {"eager_ms", 1.0}}).verdict,
            EagerVerdict::within_noise);
  const auto slow = compare_with_eager({{"kernel_ms", 1.3}, {"eager_ms", 1.0}});
  EXPECT_EQ(slow.verdict, EagerVerdict::slower);
  EXPECT_EQ(describe(slow), "kernel 1.3 ms against eager PyTorch's 1 ms (30 % slower)");
  EXPECT_EQ(compare_with_eager({{"kernel_ms", 1.3}, {"eager_ms", nullptr}}).verdict,
            EagerVerdict::not_measured);
  EXPECT_EQ(compare_with_eager(json::object()).to_json()["verdict"], "not_measured");
  EXPECT_NO_THROW(report_eager_floor("k", "/src/op.py", slow, false));  // a warning only
  EXPECT_THROW(report_eager_floor("k", "/src/op.py", slow, true), UserError);
  // Plain sm_90 leaves the Hopper kernels out, and the error says how to let them in.
  try {
    report_eager_floor("k", "/src/op.py", slow, true, {"sm_90"});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_TRUE(has(e.hint(), "ARCH sm_90a")) << e.hint();
  }
  EXPECT_EQ(arch_advice({"sm_90a"}), "");
  EXPECT_EQ(arch_advice({"sm_80", "sm_89"}), "");
  EXPECT_TRUE(has(arch_advice({"sm_80", "sm_90"}), "wgmma"));
}

// At small sizes eager's host-timed figure is mostly Python's launch overhead: the floor takes
// eager's faster figure, its GPU time, so such a kernel is not "faster" for beating the overhead
// (the H200's lay_split_heads: 0.032 ms against 0.144 ms host, 0.0113 ms GPU).
TEST(EagerFloor, TheKernelIsComparedWithEagersFasterFigure) {
  const auto c =
      compare_with_eager({{"kernel_ms", 0.032}, {"eager_ms", 0.144}, {"eager_device_ms", 0.0113}});
  EXPECT_EQ(c.verdict, EagerVerdict::slower);
  EXPECT_DOUBLE_EQ(*c.eager_ms, 0.0113);
  EXPECT_EQ(c.to_json()["eager_basis"], "device");
  EXPECT_NE(describe(c).find("0.0113 ms of GPU time"), std::string::npos) << describe(c);
  // A device figure above the host one (host overhead hidden is not always smaller) is not taken.
  const auto host =
      compare_with_eager({{"kernel_ms", 0.5}, {"eager_ms", 1.0}, {"eager_device_ms", 1.2}});
  EXPECT_EQ(host.verdict, EagerVerdict::faster);
  EXPECT_EQ(host.to_json()["eager_basis"], "host");
}

// A GPU whose prebuild takes a while and records how many ran at once and where.
class PrebuildingGpu : public FakeGpu {
 public:
  std::mutex m;
  int active = 0, max_active = 0;
  std::set<fs::path> prebuilt, run_in;
  std::vector<fs::path> run_order;
  void prebuild(const fs::path&, const fs::path&, const fs::path& work) override {
    {
      std::lock_guard<std::mutex> lock(m);
      max_active = std::max(max_active, ++active);
      prebuilt.insert(work);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    std::lock_guard<std::mutex> lock(m);
    --active;
  }
  verify::GpuOutcome run(const fs::path& cu, const fs::path& inc, const fs::path& spec,
                         verify::References& refs, const fs::path& work,
                         const verify::RunOptions& options) override {
    run_in.insert(work);
    run_order.push_back(work);
    return FakeGpu::run(cu, inc, spec, refs, work, options);
  }
};

TEST_F(PipelineTest, WithAGpuAStagesCandidatesAreBuiltSideBySideThenMeasured) {
  PrebuildingGpu gpu;
  Services services{runner, &gpu};
  auto o = options();
  o.baseline = false;
  o.budget = 3;
  generate(o, services);
  EXPECT_GE(gpu.prebuilt.size(), 4u);  // stage 1 and stage 2 each built their candidates ahead
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_GE(gpu.max_active, 2);
  }
  for (const auto& work : gpu.prebuilt)
    EXPECT_TRUE(gpu.run_in.count(work)) << work << " was built but never measured";
}

// The verify step's library (the winner rebuilt for the final check) builds beside its object for
// every arch, not after it.
TEST_F(PipelineTest, TheFinalChecksLibraryIsBuiltBesideItsObject) {
  PrebuildingGpu gpu;
  Services services{runner, &gpu};
  auto o = options();
  o.baseline = false;
  generate(o, services);
  ASSERT_FALSE(gpu.run_order.empty());
  EXPECT_TRUE(gpu.prebuilt.count(gpu.run_order.back()))
      << gpu.run_order.back() << ": the final check built its library only when it ran";
}

TEST_F(PipelineTest, AnUnverifiedCacheEntryIsVerifiedOnAGpuAndReplaced) {
  auto o = options();
  o.baseline = false;
  run(o);  // no GPU: cached unverified
  FakeGpu gpu;
  Services services{runner, &gpu};
  auto r = generate(o, services);
  EXPECT_EQ(r.cache_status, "unverified-hit");
  EXPECT_GT(gpu.runs, 0);
  EXPECT_EQ(r.manifest["status"]["sm_90"]["state"], "verified");
  auto again = generate(o, services);  // now the verified entry is a plain hit
  EXPECT_EQ(again.cache_status, "hit");
  EXPECT_EQ(again.manifest["status"]["sm_90"]["state"], "verified");
}

TEST_F(PipelineTest, TheManifestNamesEachFailedCandidatesClassAndFirstLine) {
  FakeGpu gpu;
  gpu.fail = "mismatch";
  gpu.fail_first = 2;  // the first candidate and its repair fail; the repair has no repair
  Services services{runner, &gpu};
  auto o = options();
  o.baseline = false;
  generate(o, services);
  json m = json::parse(read_file(dir.path() / "out" / "manifest.json").value());
  int failed = 0;
  for (const auto& st : m["stages"]) {
    // A failed run the debug agent could not repair is recorded once, not as a repair attempt
    // and again as the candidate's result.
    const json list = st.value("attempts", json::array());
    for (size_t i = 1; i < list.size(); ++i)
      EXPECT_FALSE(list[i - 1].contains("agent") &&
                   list[i - 1]["candidate"] == list[i]["candidate"] &&
                   list[i - 1]["result"] == list[i]["result"])
          << list.dump();
    for (const auto& a : st.value("attempts", json::array()))
      if (a.contains("failure_class")) {
        ++failed;
        EXPECT_EQ(a["failure_class"], "mismatch") << a.dump();
        EXPECT_EQ(a["message"], "max abs error 3.0") << a.dump();  // the first line only
      }
  }
  EXPECT_EQ(failed, 2) << m["stages"].dump();
}

TEST_F(PipelineTest, WithAGpuAMismatchEverywhereFailsTheGeneration) {
  FakeGpu gpu;
  gpu.fail = "mismatch";
  Services services{runner, &gpu};
  try {
    generate(options(), services);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    // Every candidate run (repairs included) is named with its failure class and first line.
    const std::string text = e.what();
    EXPECT_NE(text.find("stage1: no candidate passed ("), std::string::npos) << text;
    size_t named = 0;
    for (size_t at = text.find(": mismatch: max abs error 3.0"); at != std::string::npos;
         at = text.find(": mismatch: max abs error 3.0", at + 1))
      ++named;
    EXPECT_EQ(named, static_cast<size_t>(gpu.runs)) << text;
    EXPECT_NE(text.find("last failure:\nmismatch: max abs error 3.0"), std::string::npos) << text;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

// One GPU shared by parallel generations: runs take turns (the timing lock) after random delays
// (other jobs' verification, memory waits), and a candidate's time depends on its code alone.
class ContendedGpu : public FakeGpu {
 public:
  std::mutex turn;
  std::atomic<int> in_flight{0}, most_in_flight{0};
  verify::GpuOutcome run(const fs::path& cu, const fs::path&, const fs::path&,
                         verify::References& refs, const fs::path&,
                         const verify::RunOptions&) override {
    refs.endpoint();
    const int now = ++in_flight;
    most_in_flight = std::max(most_in_flight.load(), now);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::hash<std::string>{}(cu.string()) % 15));
    verify::GpuOutcome o;
    {
      std::lock_guard<std::mutex> lock(turn);
      o.kernel_ms = 1.0 + static_cast<double>(read_file(cu).value_or("").size() % 97) / 100.0;
    }
    --in_flight;
    return o;
  }
};

TEST_F(PipelineTest, EightParallelGenerationsOnOneGpuGiveTheVerdictsOfOneAtATime) {
  auto one = [&](int i, verify::GpuVerifier& gpu) {
    auto o = options();
    o.op_file = dir.path() / "src" / ("op_" + std::to_string(i) + ".py");
    write_atomic(o.op_file, "# op " + std::to_string(i) + "\n");
    o.out_dir = dir.path() / ("out_" + std::to_string(i));
    o.cache_enabled = false;
    o.baseline = false;
    o.budget = 3;
    Services services{runner, &gpu};
    const auto r = generate(o, services);
    return std::make_pair(r.manifest["candidate"].get<std::string>(), r.status_text);
  };
  ContendedGpu sequential_gpu;
  std::vector<std::pair<std::string, std::string>> alone;
  for (int i = 0; i < 8; ++i) alone.push_back(one(i, sequential_gpu));
  ContendedGpu gpu;
  std::vector<std::pair<std::string, std::string>> together(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) threads.emplace_back([&, i] { together[i] = one(i, gpu); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(together, alone);
  EXPECT_GT(gpu.most_in_flight.load(), 1) << "the generations did overlap";
  EXPECT_EQ(gpu.reference_servers.load(), 8);  // one per generation
  for (const auto& [candidate, status] : together) EXPECT_EQ(status, "sm_90: verified");
}

// Two generations of one op into one cache at once (two build trees): the second waits for the
// first under the key's lock and takes its entry instead of generating it again. The first
// compile is held until both have traced, so without the lock both would miss.
TEST_F(PipelineTest, TwoGenerationsOfOneKernelIntoOneCacheGenerateItOnce) {
  std::atomic<bool> first{true};
  before_compile = [&] {
    if (!first.exchange(false)) return;
    for (int i = 0; i < 500 && traces.load() < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  };
  std::vector<std::string> statuses(2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      auto o = options();
      o.out_dir = dir.path() / ("out_" + std::to_string(i));
      statuses[i] = run(o).cache_status;
    });
  for (auto& t : threads) t.join();
  std::sort(statuses.begin(), statuses.end());
  EXPECT_EQ(statuses, (std::vector<std::string>{"hit", "miss"}));
  EXPECT_EQ(traces.load(), 2);
  EXPECT_TRUE(fs::exists(dir.path() / "out_0" / "gelu_bias.cu"));
  EXPECT_TRUE(fs::exists(dir.path() / "out_1" / "gelu_bias.cu"));
}

TEST_F(PipelineTest, BadArchIsAUserError) {
  auto o = options();
  o.arches = {"hopper"};
  EXPECT_THROW(run(o), UserError);
}

TEST_F(PipelineTest, CacheOffStillGenerates) {
  auto o = options();
  o.cache_enabled = false;
  EXPECT_EQ(run(o).cache_status, "off");
  EXPECT_FALSE(fs::exists(dir.path() / "cache"));
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

TEST(ProfileAgent, ReadsPtxasFactsAndNamesTheBottleneck) {
  auto facts = ptxas_facts(
      "ptxas info    : Used 40 registers, used 0 barriers, 380 bytes cmem[0]\n"
      "ptxas info    : Used 168 registers, 1024 bytes smem, 380 bytes cmem[0]\n"
      "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n");
  EXPECT_EQ(facts["registers"], 168);
  EXPECT_EQ(facts["spill_bytes"], 16);
  EXPECT_EQ(facts["smem_bytes"], 1024);
  auto p = profile_agent(facts, std::nullopt, 1e9, 1e8, false);
  EXPECT_EQ(p["bottleneck"], "latency");  // spills
  EXPECT_NEAR(p["occupancy_limit_by_registers"].get<double>(), 12.0 / 64,
              1e-9);  // 168 regs: 12 warps
  EXPECT_NE(p["feedback"].get<std::string>().find("static facts only"), std::string::npos);
  auto measured = profile_agent(ptxas_facts("Used 32 registers"), 0.25, 1e9, 1e8, true);
  EXPECT_EQ(measured["bottleneck"], "memory");
  EXPECT_NEAR(measured["achieved_gbps"].get<double>(), 4000.0, 1e-6);
  EXPECT_EQ(measured["occupancy_limit_by_registers"], 1.0);
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

TEST_F(PipelineTest, StepArtifactsAreDumpedEditedAndResumedFrom) {
  auto o = options();
  o.dump_dir = dir.path() / "dump";
  run(o);
  for (const char* f : {"spec.json", "stage1.cu", "stage2.cu", "verify.json"})
    EXPECT_TRUE(fs::exists(dir.path() / "dump" / f)) << f;
  // Hand-edit the stage-2 winner and resume from verify: the edit reaches the emitted .cu.
  std::string stage2 = read_file(dir.path() / "dump" / "stage2.cu").value();
  ASSERT_NE(stage2.find(kLaunchMarker), std::string::npos);
  write_atomic(dir.path() / "dump" / "stage2.cu", "// HAND EDITED\n" + stage2);
  auto resumed = options();
  resumed.override_dir = dir.path() / "dump";
  resumed.from_step = "verify";
  auto r = run(resumed);
  EXPECT_EQ(r.cache_status, "off");  // overrides bypass the cache
  EXPECT_NE(read_file(dir.path() / "out" / "gelu_bias.cu").value().find("// HAND EDITED"),
            std::string::npos);
  EXPECT_EQ(r.manifest["stages"][1]["override"], (dir.path() / "dump" / "stage2.cu").string());
}

TEST_F(PipelineTest, ResumingWithoutTheArtifactsIsAUserError) {
  auto o = options();
  o.from_step = "stage2";
  EXPECT_THROW(run(o), UserError);  // no --override-dir
  o.override_dir = dir.path() / "empty";
  fs::create_directories(o.override_dir);
  EXPECT_THROW(run(o), UserError);  // no stage1.cu there
  o.from_step = "nonsense";
  EXPECT_THROW(run(o), UserError);
}

TEST_F(PipelineTest, AnArtifactWithoutTheMarkerIsRejectedWithItsName) {
  write_atomic(dir.path() / "over" / "stage1.cu", "__global__ void k() {}\n");
  auto o = options();
  o.override_dir = dir.path() / "over";
  o.from_step = "stage2";
  try {
    run(o);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.where().file.find("stage1.cu"), std::string::npos);
  }
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

// The shape of `ncu --csv --metrics ...` output (details page), two kernels of one launch.
constexpr const char* kNcuCsv =
    "==PROF== Connected to process 123\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
    "Unit\","
    "\"Metric Value\"\n"
    "\"0\",\"123\",\"egg-harness\",\"h\",\"small\",\"1\",\"7\",\"(256, 1, 1)\",\"(8, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Command line profiler "
    "metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"3.10\"\n"
    "\"0\",\"123\",\"egg-harness\",\"h\",\"small\",\"1\",\"7\",\"(256, 1, 1)\",\"(8, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"nsecond\",\"2,016\"\n"
    "\"1\",\"123\",\"egg-harness\",\"h\",\"big\",\"1\",\"7\",\"(256, 1, 1)\",\"(132, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Command line profiler "
    "metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"91.45\"\n"
    "\"1\",\"123\",\"egg-harness\",\"h\",\"big\",\"1\",\"7\",\"(256, 1, 1)\",\"(132, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Command line profiler "
    "metrics\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"22.5\"\n"
    "\"1\",\"123\",\"egg-harness\",\"h\",\"big\",\"1\",\"7\",\"(256, 1, 1)\",\"(132, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"usecond\",\"1,234.5\"\n";

TEST(Ncu, ParsesTheLongestKernelsMetrics) {
  auto m = verify::parse_ncu_csv(kNcuCsv);
  ASSERT_TRUE(m.contains("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_DOUBLE_EQ(m["dram__throughput.avg.pct_of_peak_sustained_elapsed"]["value"].get<double>(),
                   91.45);
  EXPECT_DOUBLE_EQ(m["gpu__time_duration.sum"]["value"].get<double>(), 1234.5);
  EXPECT_TRUE(verify::parse_ncu_csv("==ERROR== profiling not supported\n").empty());
}

TEST(ProfileAgent, NcuCountersDecideTheBottleneck) {
  auto ncu = verify::parse_ncu_csv(kNcuCsv);
  auto p = profile_agent(ptxas_facts("Used 32 registers"), 1.0, 1e9, 1e12, true, ncu);
  EXPECT_EQ(p["bottleneck"], "memory");  // DRAM 91% against SM 22%, although FLOP/B says compute
  EXPECT_NE(p["feedback"].get<std::string>().find("DRAM 91%"), std::string::npos);
  auto idle =
      profile_agent(ptxas_facts("Used 32 registers"), 1.0, 1e9, 1e8, true,
                    {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", {{"value", 12.0}}},
                     {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {{"value", 20.0}}}});
  EXPECT_EQ(idle["bottleneck"], "latency");
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

TEST_F(PipelineTest, PrecisionOptInIsRecordedWithItsTolerance) {
  auto o = options();
  o.options["precision"] = "tf32";
  auto r = run(o);
  EXPECT_EQ(r.manifest["precision"], "tf32");
  EXPECT_EQ(r.manifest["tolerance"]["atol"], 1e-2);
  o.options["precision"] = "fp8";
  EXPECT_THROW(run(o), UserError);
}

// PRECISION fp32x3 keeps fp32's tolerance but judges every output against float64 (accuracy on),
// and refuses an accuracy mode that would judge it by the tolerance check alone.
TEST_F(PipelineTest, SplitPrecisionIsJudgedAgainstFloat64) {
  auto o = options();
  o.options["precision"] = "fp32x3";
  auto r = run(o);
  EXPECT_EQ(r.manifest["precision"], "fp32x3");
  EXPECT_EQ(r.manifest["accuracy_mode"], "on");
  EXPECT_EQ(r.manifest["tolerance"]["atol"], 1e-4);
  EXPECT_NE(r.manifest.dump().find("accuracy on"), std::string::npos) << r.manifest.dump();
  o.options["accuracy"] = "on";
  EXPECT_NO_THROW(run(o));
  o.options["accuracy"] = "off";
  EXPECT_THROW(run(o), UserError);
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

TEST_F(PipelineTest, AHandEditedStageThatFailsIsReportedNotTuned) {
  auto o = options();
  o.dump_dir = dir.path() / "dump";
  run(o);
  nvcc_fails = true;  // the edited kernel no longer compiles
  auto resumed = options();
  resumed.override_dir = dir.path() / "dump";
  resumed.from_step = "stage2";
  try {
    run(resumed);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("hand-edited stage-1 kernel fails: compile_error"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

// An in-memory object store for the remote cache.
struct ObjectStore {
  std::map<std::string, std::string> objects;
  cache::HttpCall call() {
    return [this](const std::string& method, const std::string& url, const std::string& body) {
      cache::HttpExchange r;
      if (method == "PUT") {
        objects[url] = body;
        r.status = 201;
      } else {
        r.status = objects.count(url) ? 200 : 404;
        if (r.status == 200) r.body = objects[url];
      }
      return r;
    };
  }
};

TEST_F(PipelineTest, ARemoteCacheServesAMachineWithAnEmptyLocalCache) {
  ObjectStore server;
  Services services{runner, nullptr, server.call()};
  auto o = options();
  o.remote_cache = "http://cache.example";
  o.remote_key = "the team's key, at least 16 bytes";
  auto first = generate(o, services);
  EXPECT_EQ(first.cache_status, "miss");
  EXPECT_EQ(server.objects.size(), 1u);
  const int compiles = runner.count("nvcc");
  o.cache_dir = dir.path() / "another-machine-cache";
  fs::remove_all(dir.path() / "out");
  auto second = generate(o, services);
  EXPECT_EQ(second.cache_status, "remote-hit");
  // --version, --list-gpu-code and one compile of the remote kernel: an untrusted entry is
  // compiled before emit.
  EXPECT_EQ(runner.count("nvcc"), compiles + 3);
  EXPECT_EQ(read_file(dir.path() / "out" / "gelu_bias.cu").has_value(), true);
  auto third = generate(o, services);  // now in the local cache too, trusted as it is
  EXPECT_EQ(third.cache_status, "hit");
  EXPECT_EQ(runner.count("nvcc"), compiles + 5);
}

TEST_F(PipelineTest, ARemoteKernelThatDoesNotCompileIsAMiss) {
  ObjectStore server;
  Services services{runner, nullptr, server.call()};
  auto o = options();
  o.remote_cache = "http://cache.example";
  o.remote_key = "the team's key, at least 16 bytes";
  generate(o, services);
  o.cache_dir = dir.path() / "another-machine-cache";
  nvcc_fails = true;  // the remote kernel does not compile here (nor would a local one)
  EXPECT_THROW(generate(o, services), UserError);
  EXPECT_EQ(cache::LocalStore(o.cache_dir).stats().entries, 0u);  // nothing copied
}

TEST_F(PipelineTest, WithoutAKeyTheRemoteCacheIsNotUsed) {
  ObjectStore server;
  Services services{runner, nullptr, server.call()};
  auto o = options();
  o.remote_cache = "http://cache.example";
  auto first = generate(o, services);
  EXPECT_EQ(first.cache_status, "miss");
  EXPECT_TRUE(server.objects.empty());  // nothing unsigned is uploaded
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

TEST_F(PipelineTest, MistakesThatNeedNoOpAreFoundBeforeTracing) {
  gpu_codes = "sm_80\nsm_90\n";
  auto expect_user_error = [&](GenerateOptions o, const std::string& fragment) {
    try {
      run(o);
      ADD_FAILURE() << "expected a UserError with " << fragment;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto o = options();
  o.arches = {"sm_999"};
  expect_user_error(o, "cannot compile for sm_999");
  o = options();
  o.backend = "gpt";
  expect_user_error(o, "unknown backend 'gpt'");
  o = options();
  write_atomic(dir.path() / "a_file", "x");
  o.out_dir = dir.path() / "a_file";
  expect_user_error(o, "is a file, not a folder");
  o = options();
  o.cache_dir = dir.path() / "a_file" / "cache";
  expect_user_error(o, "cannot be created");
  o = options();
  o.op_file = dir.path() / "src";
  expect_user_error(o, "the op file is a folder");
  EXPECT_EQ(runner.count("python3"), 0);  // op.py never ran
  o = options();
  o.arches = {"sm_90a"};  // a suffix of a known arch is known
  EXPECT_NO_THROW(run(o));
}

// An sm_90 GPU verifies sm_90a kernels (wgmma) where only sm_90a is asked for; its own arch
// otherwise.
TEST(VerifiedArch, AnArchSpecificTargetIsVerifiedOnItsGpu) {
  EXPECT_EQ(verify::verified_arch("sm_90", {"sm_90a"}), "sm_90a");
  EXPECT_EQ(verify::verified_arch("sm_90", {"sm_90", "sm_90a"}), "sm_90");
  EXPECT_EQ(verify::verified_arch("sm_90", {"sm_80"}), "sm_90");
  EXPECT_EQ(verify::verified_arch("sm_80", {"sm_90a"}), "sm_80");
}

TEST_F(PipelineTest, TheFrontendsWarningsReachTheUser) {
  frontend_stderr =
      "op.py printed this\negg: warning: op.py:4: forward: forward changes its input x in "
      "place\negg: hint: compute a new tensor\n";
  ::testing::internal::CaptureStderr();
  run(options());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("egg: warning: op.py:4: forward: forward changes its input x in place"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("egg: hint: compute a new tensor"), std::string::npos) << err;
  EXPECT_EQ(err.find("op.py printed this"), std::string::npos) << err;
}

}  // namespace
}  // namespace egg::pipeline

namespace egg::pipeline {
namespace {

TEST_F(PipelineTest, KeepWorkSaysWhichFolderItKept) {
  auto o = options();
  o.keep_work = true;
  ::testing::internal::CaptureStderr();
  run(o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string said = "keeping the work folder ";
  const auto at = err.find(said);
  ASSERT_NE(at, std::string::npos) << err;
  const fs::path kept = err.substr(at + said.size(), err.find('\n', at) - at - said.size());
  EXPECT_TRUE(fs::is_directory(kept / "frontend")) << kept;
  fs::remove_all(kept);
}

}  // namespace
}  // namespace egg::pipeline
