#include "verify/harness_verifier.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "runner.h"
#include "util/files.h"
#include "verify/ncu.h"

namespace egg::verify {
namespace fs = std::filesystem;

HarnessVerifier::HarnessVerifier(ProcessRunner& runner, fs::path nvcc, fs::path harness,
                                 GpuInfo gpu, std::chrono::milliseconds time_limit,
                                 std::vector<std::string> extra_flags)
    : runner_(runner),
      nvcc_(std::move(nvcc)),
      harness_(std::move(harness)),
      gpu_(std::move(gpu)),
      time_limit_(time_limit),
      extra_flags_(std::move(extra_flags)) {}

ProcessSpec HarnessVerifier::build_spec(const fs::path& cu, const fs::path& include_dir,
                                        const fs::path& so) const {
  ProcessSpec p;
  p.exe = nvcc_;
  const std::string num = toolchain::arch_number(gpu_.arch);
  p.args = {
      "-shared",   "-Xcompiler",         "-fPIC",     "-DEGG_CANDIDATE_ENTRY",
      "-O3",       "-std=c++17",         "-gencode",  "arch=compute_" + num + ",code=sm_" + num,
      "-I",        include_dir.string(), cu.string(), "-o",
      so.string(), "-lcublasLt",         "-lcublas"};
  p.args.insert(p.args.end(), extra_flags_.begin(), extra_flags_.end());
  p.timeout = std::chrono::minutes(5);
  p.activity = "compiling " + cu.filename().string() + " with nvcc";
  p.private_tmp = true;
  p.cpu_work = true;                           // nvcc: never during a timed span (base/gpu_lock.h)
  p.max_threads = toolchain::kNvccMaxThreads;  // cicc and ptxas over the free cores
  p.threads_flag = "--split-compile=";
  return p;
}

void HarnessVerifier::prebuild(const fs::path& cu, const fs::path& include_dir,
                               const fs::path& work) {
  const fs::path so = work / "candidate.so";
  fs::create_directories(work);
  ProcessResult built = runner_.run(build_spec(cu, include_dir, so));
  std::lock_guard<std::mutex> lock(prebuilt_mutex_);
  prebuilt_[so] = std::move(built);
}

GpuOutcome HarnessVerifier::run(const fs::path& cu, const fs::path& include_dir,
                                const fs::path& spec_json, References& refs, const fs::path& work,
                                const RunOptions& options) {
  GpuOutcome out;
  const fs::path so = work / "candidate.so";
  fs::create_directories(work);
  const ProcessSpec p = build_spec(cu, include_dir, so);
  std::optional<ProcessResult> prebuilt;
  {
    std::lock_guard<std::mutex> lock(prebuilt_mutex_);
    if (auto it = prebuilt_.find(so); it != prebuilt_.end()) {
      prebuilt = std::move(it->second);
      prebuilt_.erase(it);
    }
  }
  ProcessResult built = prebuilt ? *prebuilt : runner_.run(p);
  if (!built.ok()) {
    out.compile_error = true;
    out.report = built.out + built.err + "\nrepro: " + repro_line(p);
    return out;
  }
  harness::CandidateRun run;
  run.harness = harness_;
  run.library = so;
  run.spec = spec_json;
  const auto refs_started = std::chrono::steady_clock::now();
  run.refs = refs.endpoint();  // waits while the server computes the sets the first time
  const double refs_ready_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - refs_started)
          .count();
  run.work_dir = work;
  run.source = cu;
  run.tolerance = Tolerance{options.atol, options.rtol};
  run.accuracy = options.accuracy;
  run.time = options.time;
  run.time_cutoff_ms = options.time_cutoff_ms;
  run.strict = options.strict;
  run.time_limit = time_limit_;
  // The GPU's memory taken by other jobs is nobody's fault here: wait and run again.
  harness::VerifyResult r = harness::run_candidate(run);
  for (int attempt = 1; r.status == harness::VerifyStatus::gpu_busy && attempt < 30; ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    r = harness::run_candidate(run);
  }
  out.details = harness::to_json(r);
  out.details["phases_ms"]["refs_ready_wait"] = refs_ready_ms;
  if (r.status != harness::VerifyStatus::verified) {
    out.status = r.status;
    out.report = r.message;
    if (r.status == harness::VerifyStatus::mismatch)
      out.report += " (output " + r.output + ", max abs error " + std::to_string(r.max_abs_error) +
                    ", max rel error " + std::to_string(r.max_rel_error) + ", first bad index " +
                    std::to_string(r.first_bad_index) + ": " + std::to_string(r.bad_value) +
                    " vs reference " + std::to_string(r.ref_value) + ")";
    out.report += "\nrepro: " + r.repro;
    return out;
  }
  if (r.timing) out.kernel_ms = r.timing->event_ms.median;
  return out;
}

nlohmann::json HarnessVerifier::profile(const fs::path& work, const fs::path& spec_json,
                                        References& refs) {
  // ncu replays the winner for seconds: EGG_NCU=off skips it (e.g. a suite benchmark of many ops,
  // where the counters are not needed).
  if (const char* v = std::getenv("EGG_NCU"); v && std::string(v) == "off")
    return {{"unavailable", "counters not read (EGG_NCU=off)"}};
  auto ncu = find_on_path("ncu");
  if (!ncu && fs::exists("/usr/local/cuda/bin/ncu")) ncu = fs::path("/usr/local/cuda/bin/ncu");
  if (!ncu) return {{"unavailable", "ncu is not on PATH"}};
  ProcessSpec p;
  p.exe = *ncu;
  // Clocks stay as they are (METHOD.md); CUPTI is off in the harness, since ncu owns the counters.
  p.args = {"--clock-control", "none", "--csv", "--metrics", kNcuMetrics, harness_.string(),
            "verify", "--lib", (work / "candidate.so").string(), "--spec", spec_json.string(),
            "--refs", refs.endpoint().string(), "--work", (work / "ncu").string(), "--out",
            (work / "ncu" / "result.json").string(), "--max-sets", "1", "--no-cupti", "--no-guard",
            // Counters from a GPU nobody else times on: the harness holds the lock exclusively
            // around the replayed calls. Not this process around ncu: the harness under it takes
            // the lock too, and the reference server computes a set under it, so holding it here
            // would make both wait for ncu's time limit (seen on the H200: five minutes per build).
            "--exclusive-calls"};
  p.timeout = std::chrono::minutes(5);
  p.activity = "reading counters with ncu";
  const ProcessResult r = runner_.run(p);
  nlohmann::json metrics = parse_ncu_csv(r.out);
  if (metrics.empty())
    return {{"unavailable", "ncu read no metrics (exit " + std::to_string(r.exit_code) +
                                "): " + r.err.substr(0, r.err.find('\n'))}};
  return metrics;
}

std::optional<fs::path> find_harness(const fs::path& egg_gen_exe) {
  if (const char* env = std::getenv("EGG_HARNESS"); env && *env) return fs::path(env);
  std::error_code ec;
  const fs::path dir = egg_gen_exe.parent_path();
  for (const fs::path& candidate :
       {dir / "egg-harness", dir.parent_path() / "harness" / "egg-harness",
        dir.parent_path() / "bin" / "egg-harness"})
    if (fs::is_regular_file(candidate, ec)) return candidate;
  return std::nullopt;
}

namespace {

Baseline run_baseline(ProcessRunner& runner, const fs::path& python, const fs::path& data_dir,
                      const fs::path& op_file, const fs::path& work, bool max_autotune,
                      bool compile, const fs::path& spec_json) {
  Baseline b;
  ProcessSpec p;
  p.exe = python;
  const fs::path out = work / "baseline.json";
  p.args = {"-m", "egg_bench", "baseline", "--op", op_file.string(), "--out", out.string()};
  if (!spec_json.empty()) p.args.insert(p.args.end(), {"--spec", spec_json.string()});
  if (!compile)
    p.args.push_back("--no-compile");
  else if (!max_autotune)
    p.args.push_back("--no-max-autotune");
  p.env_set["PYTHONPATH"] = (data_dir / "python").string();
  p.env_set["PYTHONDONTWRITEBYTECODE"] = "1";
  p.timeout = std::chrono::minutes(10);
  p.activity = "timing the PyTorch baselines";
  ProcessResult r = runner.run(p);
  auto text = read_file(out);
  if (!r.ok() || !text) {
    b.error =
        "baseline timing failed: " + r.err.substr(r.err.size() > 800 ? r.err.size() - 800 : 0);
    return b;
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) {
    b.error = "baseline timing wrote malformed JSON";
    return b;
  }
  auto median = [&](const char* key) -> std::optional<double> {
    if (j.contains(key) && j[key].is_object() && j[key].contains("median_ms") &&
        j[key]["median_ms"].is_number())
      return j[key]["median_ms"].get<double>();
    return std::nullopt;
  };
  b.eager_ms = median("eager");
  b.compile_ms = median("compile");
  b.compile_max_autotune_ms = median("compile_max_autotune");
  b.compile_max_autotune_device_ms = median("compile_max_autotune_device");
  if (j.contains("eager_kernels") && j["eager_kernels"].value("gemm_library_ms", 0.0) > 0)
    b.library_gemm_ms = j["eager_kernels"]["gemm_library_ms"].get<double>();
  b.eager_device_ms = median("eager_device");
  b.compile_device_ms = median("compile_device");
  for (const char* key : {"eager", "compile", "compile_max_autotune"}) {
    const std::string profiled = std::string(key) + "_kernels";
    if (j.contains(profiled) && j[profiled].is_object() && j[profiled].contains("kernels") &&
        j[profiled]["kernels"].is_array())
      b.kernels[key] = j[profiled]["kernels"];
  }
  return b;
}

}  // namespace

Baseline time_baseline(ProcessRunner& runner, const fs::path& python, const fs::path& data_dir,
                       const fs::path& op_file, const fs::path& work, bool max_autotune,
                       bool compile, const fs::path& spec_json) {
  const auto started = std::chrono::steady_clock::now();
  Baseline b =
      run_baseline(runner, python, data_dir, op_file, work, max_autotune, compile, spec_json);
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return b;
}

}  // namespace egg::verify
