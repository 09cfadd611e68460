#include "pipeline/generate.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>

#include "backend/backend.h"
#include "cache/key_lock.h"
#include "cache/store.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "frontend/frontend.h"
#include "pipeline/artifacts.h"
#include "pipeline/eager_floor.h"
#include "pipeline/evaluate.h"
#include "pipeline/key.h"
#include "pipeline/roofline.h"
#include "pipeline/shared_cache.h"
#include "pipeline/stage.h"
#include "pipeline/tolerance.h"
#include "toolchain/cudnn.h"
#include "toolchain/nvcc.h"
#include "util/files.h"
#include "util/log.h"
#include "util/sha256.h"
#include "verify/harness_verifier.h"
#include "verify/verifier.h"
#include "version.h"

namespace egg::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Times one step and logs it at debug level (EGG_LOG=debug), as Halide's Lower.cpp does.
class StepTimer {
 public:
  explicit StepTimer(std::string step)
      : step_(std::move(step)), start_(std::chrono::steady_clock::now()) {
    log::debug("step " + step_);
  }
  ~StepTimer() {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start_);
    log::debug("step " + step_ + " took " + std::to_string(ms.count()) + " ms");
  }

 private:
  std::string step_;
  std::chrono::steady_clock::time_point start_;
};

std::string read_prompt(const fs::path& data_dir, const std::string& file) {
  auto text = read_file(data_dir / "prompts" / file);
  if (!text)
    throw InternalError("prompt " + (data_dir / "prompts" / file).string() +
                        " is missing; check --data-dir");
  return *text;
}

void validate(const GenerateOptions& o) {
  if (o.arches.empty())
    throw UserError("no target architecture given", "pass --arch sm_90 (egg_kernel: ARCH sm_90)");
  for (const auto& a : o.arches)
    if (toolchain::arch_number(a).empty())
      throw UserError("'" + a + "' is not a CUDA architecture",
                      "write it as sm_XX, e.g. sm_80 or sm_90");
  std::error_code ec;
  if (fs::is_directory(o.op_file, ec))
    throw UserError(SourceLocation{o.op_file.string(), 0, ""}, "the op file is a folder",
                    "pass the op.py inside it (egg-gen bench takes folders)");
  if (!fs::is_regular_file(o.op_file, ec))
    throw UserError(SourceLocation{o.op_file.string(), 0, ""}, "op file not found",
                    "check the path given to egg_kernel()/egg-gen generate");
  for (const auto& [k, v] : o.options)
    if (k.empty()) throw UserError("option '=" + v + "' has no name", "write options as key=value");
}

// A UserError when `dir` cannot become a writable folder: it, or its nearest existing ancestor,
// is not a folder, or that ancestor is not writable.
void check_writable_folder(const fs::path& dir, const std::string& option) {
  std::error_code ec;
  fs::path existing = fs::absolute(dir, ec).lexically_normal();
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  std::string problem;
  if (!fs::is_directory(existing, ec))
    problem = existing == fs::absolute(dir, ec).lexically_normal()
                  ? "is a file, not a folder"
                  : "cannot be created: " + existing.string() + " is a file";
  else if (::access(existing.c_str(), W_OK | X_OK) != 0)
    problem = "is not writable (" + existing.string() + ": " + std::strerror(errno) + ")";
  if (problem.empty()) return;
  const std::string hint =
      option == "--out"
          ? "pass --out a folder EGG may write (egg_kernel writes into the build tree)"
          : "pass --cache-dir (or set EGG_CACHE_DIR) to a writable folder, or use --no-cache";
  throw UserError(option + " " + dir.string() + " " + problem, hint);
}

// KernelBench's default tolerances by output dtype: fp32 1e-4/1e-4, fp16/bf16 1e-2/1e-2.
// PRECISION opt-in: "default" (PyTorch's defaults), "tf32" or "bf16" (TF32-class tolerance), or
// "fp32x3" (3xTF32 split precision, judged against float64 by the accuracy rule); anything else
// is a user error.
std::string precision(const GenerateOptions& o) {
  const std::string p = o.options.count("precision") ? o.options.at("precision") : "default";
  if (p != "default" && p != "tf32" && p != "bf16" && p != "fp32x3")
    throw UserError("PRECISION '" + p + "' is not known",
                    "use PRECISION fp32x3 (split-precision tensor-core math as accurate as "
                    "PyTorch's fp32), tf32 or bf16 to opt in to faster fp32 matrix math, or leave "
                    "it out");
  return p;
}

// OPTIONS deterministic=on|off (default off, PyTorch's default: torch.backends.cudnn.deterministic
// is False): whether library routes may run engines whose last bits differ from run to run.
bool deterministic(const GenerateOptions& o) {
  const auto it = o.options.find("deterministic");
  if (it == o.options.end() || it->second == "off") return false;
  if (it->second == "on") return true;
  throw UserError("OPTIONS deterministic='" + it->second + "' is not known",
                  "use OPTIONS deterministic=on for bitwise-repeatable library engines (as "
                  "torch.backends.cudnn.deterministic), or deterministic=off (the default)");
}

// OPTIONS accuracy=auto|on|off (base/accuracy.h): auto (the default) judges an output against
// the model computed in float64 where PyTorch's own output misses that by more than the
// tolerance; on judges every floating output so; off keeps the tolerance check alone.
// PRECISION fp32x3 makes it on: split-precision math rounds unlike cuBLAS's SGEMM, so a tolerance
// check against PyTorch's output is not the measure; its error against float64 is.
AccuracyMode accuracy(const GenerateOptions& o) {
  const bool split = precision(o) == "fp32x3";
  const auto it = o.options.find("accuracy");
  if (it == o.options.end()) return split ? AccuracyMode::on : AccuracyMode::automatic;
  const auto m = accuracy_mode_from_name(it->second);
  if (!m)
    throw UserError("OPTIONS accuracy='" + it->second + "' is not known",
                    "use OPTIONS accuracy=auto (the default: against float64 where PyTorch's own "
                    "output is not determined to the tolerance), on, or off");
  if (split && *m != AccuracyMode::on)
    throw UserError("OPTIONS accuracy=" + it->second + " with PRECISION fp32x3",
                    "leave OPTIONS accuracy out (PRECISION fp32x3 is always judged against the "
                    "model computed in float64: at most k times PyTorch's own error), or drop "
                    "PRECISION fp32x3");
  return *m;
}

// For the message when the chosen kernel and every runner-up failed the final check.
std::string tried_after(const json& rejected) {
  std::string text;
  for (std::size_t i = 1; i < rejected.size(); ++i)
    text += (i == 1 ? "" : "; ") + rejected[i]["candidate"].get<std::string>() + ": " +
            rejected[i]["message"].get<std::string>();
  return text.empty() ? text : "\nthe next fastest verified candidates failed it too: " + text;
}

// The user's tolerance, else the spec's default (pipeline/tolerance.h: by output dtype, TF32-class
// for PRECISION opt-ins and fp32 convolutions).
std::pair<double, double> tolerance(const GenerateOptions& o, const spec::Spec& s) {
  const Tolerance t = default_tolerance(s, precision(o));
  return {o.atol >= 0 ? o.atol : t.atol, o.rtol >= 0 ? o.rtol : t.rtol};
}

// Why the tolerance is what it is, for the manifest.
std::string tolerance_basis(const GenerateOptions& o, const spec::Spec& s) {
  if (o.atol >= 0 || o.rtol >= 0) return "set by the user (TOLERANCE / --tolerance)";
  return default_tolerance(s, precision(o)).basis;
}

std::string join_status(const json& status) {
  std::string s;
  for (auto it = status.begin(); it != status.end(); ++it)
    s += (s.empty() ? "" : ", ") + it.key() + ": " + it->value("text", "");
  return s;
}

// Says so in the build log where the winner was judged against the model computed in float64.
void report_accuracy(const std::string& name, const json& harness) {
  if (!harness.contains("accuracy") || !harness["accuracy"].is_object()) return;
  const json& a = harness["accuracy"];
  if (!a.value("passed", false)) return;
  auto num = [&](const char* k) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g", a.value(k, 0.0));
    return std::string(buf);
  };
  log::info(name + ": verified against the model computed in float64 (accuracy " +
            a.value("mode", std::string("auto")) + ", " + std::to_string(a.value("judged", 0)) +
            " output comparisons): PyTorch's own output misses it by up to " +
            num("torch_max_abs_error") + " (mean " + num("torch_mean_abs_error") +
            "), this kernel's by up to " + num("kernel_max_abs_error") + " (mean " +
            num("kernel_mean_abs_error") + "); at most " + num("factor") +
            " times PyTorch's own error passes (OPTIONS accuracy=off keeps the tolerance check "
            "alone)");
}

// Per-arch status after generation: the GPU's own arch verified (or not), the others compiled only.
json arch_status(const std::vector<std::string>& arches, verify::GpuVerifier* gpu,
                 const Evaluation& final_eval, std::pair<double, double> tol, bool verify_skipped,
                 const std::string& no_gpu_reason) {
  json status = json::object();
  for (const auto& arch : arches) {
    json st;
    if (verify_skipped) {
      st = {{"state", "unverified"}, {"reason", "verify step skipped (--from emit)"}};
    } else if (!gpu) {
      st = {{"state", "unverified"}, {"reason", no_gpu_reason}};
    } else if (arch != gpu->gpu_arch()) {
      st = {{"state", "compiled, not verified on this GPU"},
            {"reason", gpu->gpu_name() + " is " + gpu->gpu_arch()}};
    } else {
      st = {{"state", "verified"},
            {"reason", ""},
            {"gpu", gpu->gpu_name()},
            {"kernel_ms", final_eval.kernel_ms.value_or(0)}};
      st["harness"] = final_eval.profile.value("harness", json::object());
    }
    std::string reason = st.value("reason", "");
    st["text"] = reason.empty() ? st["state"].get<std::string>()
                                : st["state"].get<std::string>() + ": " + reason;
    st["tolerance"] = {{"atol", tol.first}, {"rtol", tol.second}};
    status[arch] = st;
  }
  return status;
}

}  // namespace

std::string default_name(const fs::path& op_file) {
  return contract::c_identifier(op_file.stem().string());
}

GenerateResult generate(const GenerateOptions& in, Services& services) {
  GenerateOptions o = in;
  validate(o);
  o.op_file = fs::absolute(o.op_file).lexically_normal();
  o.out_dir = fs::absolute(o.out_dir).lexically_normal();
  GenerateResult result;
  result.name = o.name.empty() ? default_name(o.op_file) : o.name;
  if (!contract::valid_kernel_name(result.name))
    throw UserError("'" + result.name + "' is not a valid kernel name",
                    "use a C identifier that is not a C++ keyword (egg_kernel NAME / --name)");
  std::vector<std::string> arches = o.arches;
  std::sort(arches.begin(), arches.end());
  arches.erase(std::unique(arches.begin(), arches.end()), arches.end());
  ArtifactDirs artifacts{o.dump_dir, o.override_dir, parse_step(o.from_step)};
  if (artifacts.from != Step::spec && o.override_dir.empty())
    throw UserError(
        "--from " + o.from_step + " needs --override-dir with the earlier steps' artifacts",
        "dump them first with --dump-dir, edit, then pass that folder as --override-dir");

  // Everything that can be checked without op.py is checked before it runs.
  check_writable_folder(o.out_dir, "--out");
  if (o.cache_enabled && !artifacts.active())
    check_writable_folder(o.cache_dir.empty() ? cache::default_root() : o.cache_dir, "--cache-dir");
  backend::BackendConfig bc;
  bc.name = o.backend;
  bc.model = o.model;
  bc.data_dir = o.data_dir;
  if (o.options.count("transcript")) bc.replay_transcript = o.options.at("transcript");
  bc.precision = precision(o);
  bc.wgmma =
      std::all_of(arches.begin(), arches.end(), [](const std::string& a) { return a == "sm_90a"; });
  const bool bitwise = deterministic(o);
  (void)accuracy(o);  // an unknown OPTIONS accuracy= is a user error before op.py runs
  backend::check_config(bc);
  if (!o.remote_cache.empty() && !o.remote_key.empty())
    (void)cache::EntrySigner(o.remote_key);  // a key too short to sign with is a user error
  const auto cudnn = toolchain::find_cudnn(o.cudnn, o.nvcc);
  bc.cudnn = !cudnn    ? backend::Cudnn::absent
             : bitwise ? backend::Cudnn::deterministic_engines
                       : backend::Cudnn::any_engine;
  toolchain::Nvcc nvcc(services.runner, o.nvcc, toolchain::cudnn_compile_flags(cudnn));
  const std::string nvcc_version = nvcc.version();
  nvcc.check_arches(arches);

  TempDir work(fs::temp_directory_path(), "egg-work-" + result.name);
  if (o.keep_work) {
    work.keep();
    log::info(result.name + ": keeping the work folder " + work.path().string());
  }

  // Step: spec (the frontend always runs: the cache key is over the normalized spec).
  spec::Spec s;
  const fs::path spec_json = work.path() / "frontend" / "spec.json";
  PhaseTimes phases;  // of this generation (the manifest's `phases`)
  {
    StepTimer t("spec");
    const auto started = std::chrono::steady_clock::now();
    frontend::FrontendConfig fc{o.python, o.data_dir, o.seeds, o.trace_timeout};
    s = frontend::trace(services.runner, fc, o.op_file, work.path() / "frontend");
    phases.add_since("trace", started);
    // The frontend's own split of it (import, model, inputs, capture, spec), when it wrote one.
    if (auto times = read_file(work.path() / "frontend" / "trace_times.json")) {
      const json parts = json::parse(*times, nullptr, false);
      if (parts.is_object())
        for (const auto& [part, seconds] : parts.items())
          if (seconds.is_number()) phases.add("trace_" + part, seconds.get<double>());
    }
    if (auto edited = artifacts.override_file("spec.json")) {
      s = spec::read_spec(*edited);
      log::info("spec: taken from " + edited->string());
    }
    artifacts.dump_file("spec.json", read_file(spec_json).value_or(""));
  }
  const auto tol = tolerance(o, s);
  bc.transcript_out = work.path() / "transcript.jsonl";
  bc.op_source = read_file(o.op_file).value_or("");
  bc.atol = tol.first;
  bc.rtol = tol.second;
  auto backend = backend::make_backend(bc);
  backend->check_supported(s);
  contract::Contract contract = contract::derive(s, result.name);

  const std::string stage1_objective = read_prompt(o.data_dir, "stage1_structure.md");
  const std::string stage2_objective = read_prompt(o.data_dir, "stage2_tuning.md");
  cache::KeyBuilder key = build_key(o, result.name, s, *backend, arches,
                                    {stage1_objective, stage2_objective}, nvcc_version);
  result.cache_key = key.key();

  const auto paths = emit::output_paths(o.out_dir, result.name);
  std::optional<cache::LocalStore> store;
  if (o.cache_enabled && !artifacts.active())
    store.emplace(o.cache_dir.empty() ? cache::default_root() : o.cache_dir);
  if (artifacts.active()) log::info(result.name + ": overrides in effect, the cache is bypassed");

  emit::Sources sources;
  json record;
  std::string transcript;
  cache::Lookup hit;
  if (store) hit = store->lookup(result.cache_key);
  // A miss is generated under the key's lock: another egg-gen generating the same kernel into
  // this cache (a second build tree) is waited for, and its entry is then a hit.
  std::optional<cache::KeyLock> key_lock;
  if (store && hit.status != cache::LookupStatus::hit) {
    key_lock.emplace(store->root(), result.cache_key, [&](long holder) {
      log::info(result.name + ": another egg-gen" +
                (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
                " is generating this kernel into " + store->root().string() +
                "; waiting for its result");
    });
    if (!key_lock->error().empty())
      log::warning(result.name + ": " + key_lock->error() +
                   " (the kernel is generated without the cache's lock)");
    if (key_lock->waited()) hit = store->lookup(result.cache_key);
  }
  // The shared cache, behind the local one: a signed remote hit that compiles here is copied into
  // the local store (pipeline/shared_cache.h).
  std::optional<cache::RemoteStore> remote;
  if (store)
    remote = open_shared_cache(o.remote_cache, o.remote_read_only, o.remote_key, services.http,
                               result.name);
  bool remote_hit = false;
  if (remote && hit.status != cache::LookupStatus::hit) {
    if (auto files =
            checked_remote_hit(*remote, result.cache_key, nvcc, arches, result.name, work.path())) {
      hit = cache::Lookup{cache::LookupStatus::hit, *files};
      remote_hit = true;
      store->store(result.cache_key, key.describe(), *files);
    }
  }
  result.cache_status = !store ? "off"
                        : hit.status == cache::LookupStatus::hit
                            ? (remote_hit ? "remote-hit" : "hit")
                        : hit.status == cache::LookupStatus::corrupt ? "corrupt"
                                                                     : "miss";
  // A kernel cached unverified (by a machine without a GPU) is generated again where a GPU can
  // verify it.
  bool reverify = false;
  if (hit.status == cache::LookupStatus::hit && services.gpu && hit.files.count("record.json")) {
    json cached = json::parse(hit.files["record.json"], nullptr, false);
    const std::string arch = services.gpu->gpu_arch();
    reverify = !cached.is_discarded() &&
               std::find(arches.begin(), arches.end(), arch) != arches.end() &&
               cached["status"].value(arch, json::object()).value("state", "") != "verified";
    if (reverify) {
      result.cache_status = "unverified-hit";
      log::info(result.name +
                ": the cached kernel was never verified; generating it again on this GPU");
    }
  }
  if (!reverify && hit.status == cache::LookupStatus::hit && hit.files.count("kernel.cu") &&
      hit.files.count("header.h") && hit.files.count("record.json")) {
    sources = {hit.files["kernel.cu"], hit.files["header.h"]};
    record = json::parse(hit.files["record.json"], nullptr, false);
    transcript = hit.files.count("transcript.jsonl") ? hit.files["transcript.jsonl"] : "";
  } else {
    if (result.cache_status == "hit" || result.cache_status == "remote-hit")
      result.cache_status = "corrupt";
    if (auto old = read_file(paths.manifest)) {  // say why it missed, against the previous manifest
      json m = json::parse(*old, nullptr, false);
      if (!m.is_discarded() && m.contains("cache_fields")) {
        std::string list;
        for (const auto& f : cache::changed_fields(m["cache_fields"], key.describe()))
          list += (list.empty() ? "" : ", ") + f;
        if (!list.empty()) log::info(result.name + ": cache miss, changed: " + list);
      }
    }
    const auto [bytes, flops] = roofline_inputs(s);  // pipeline/roofline.h
    // The reference outputs, computed and kept on the GPU while the first candidates compile.
    std::unique_ptr<verify::References> refs;
    if (services.gpu)
      refs = services.gpu->references({o.python, o.data_dir, o.op_file, spec_json,
                                       work.path() / "references", o.seeds, o.ref_device});
    // The PyTorch baselines do not depend on the kernel: they are timed beside the stages, in a
    // process of their own (its timed spans take the quiet lock exclusively, so they never
    // overlap a candidate's), and read once a kernel is timed. Overlapping them saves their
    // Python start, torch.compile's compilation and their wait for the GPU from every
    // generation. The future's destructor waits for the process on every path out.
    std::future<verify::Baseline> baseline_job;
    if (services.gpu && o.baseline) {
      baseline_job = std::async(std::launch::async, [&services, &o, &work, &spec_json] {
        return verify::time_baseline(services.runner, o.python, o.data_dir, o.op_file, work.path(),
                                     o.baseline_max_autotune, o.baseline_compile, spec_json);
      });
    }
    Evaluator evaluator({o.data_dir, work.path() / "candidates", spec_json, arches, backend->name(),
                         o.op_file.filename().string(), bytes, flops, tol.first, tol.second,
                         accuracy(o), refs.get()},
                        contract, nvcc, services.gpu);
    StageBudget budget;
    budget.max_candidates = std::max(1, o.budget);
    Progress progress = log_progress(result.name);
    backend::StageRequest request{
        &s, &contract, "stage1", stage1_objective, arches, std::nullopt, "unknown", "", {}};

    // Step: stage 1, algorithmic structure design.
    std::optional<StageOutcome> stage1;
    if (artifacts.from <= Step::stage1) {
      StepTimer t("stage1");
      stage1 = run_stage(*backend, request, evaluator, budget, std::nullopt, &progress);
    } else {
      auto file = artifacts.override_file("stage1.cu");
      if (!file) throw UserError("--from " + o.from_step + " needs stage1.cu in --override-dir");
      auto c = read_candidate_artifact(*file, "override:stage1");
      Evaluation ev = evaluator.evaluate(c, evaluator.can_measure());
      if (!ev.ok())
        throw UserError(SourceLocation{file->string(), 0, "stage1"},
                        "the hand-edited stage-1 kernel fails: " + ev.failure->text(),
                        "fix it, or resume from an earlier step");
      stage1 = StageOutcome{c, ev, {{"step", "stage1"}, {"override", file->string()}}, {}};
    }
    artifacts.dump_file("stage1.cu", candidate_artifact(stage1->winner));

    // Step: stage 2, hardware-specific tuning of the stage-1 winner. Only the winner, its profile
    // summary and the decisions taken cross the stage boundary.
    request.stage = "stage2";
    request.objective = stage2_objective;
    request.incumbent = stage1->winner;
    request.bottleneck = stage1->evaluation.profile.value("bottleneck", "unknown");
    request.profile_summary = stage1->evaluation.profile.value("feedback", "");
    request.recent.clear();
    std::optional<StageOutcome> stage2;
    if (artifacts.from <= Step::stage2) {
      StepTimer t("stage2");
      stage2 = run_stage(*backend, request, evaluator, budget, stage1, &progress);
    } else {
      auto file = artifacts.override_file("stage2.cu");
      if (!file) throw UserError("--from " + o.from_step + " needs stage2.cu in --override-dir");
      auto c = read_candidate_artifact(*file, "override:stage2");
      stage2 =
          StageOutcome{c, Evaluation{}, {{"step", "stage2"}, {"override", file->string()}}, {}};
    }
    artifacts.dump_file("stage2.cu", candidate_artifact(stage2->winner));

    // Step: verify the winner (compile for every arch; on the GPU: correctness and timing).
    Evaluation final_eval;
    json rejected = json::array();  // verified candidates that failed the final check
    const bool skip_verify = artifacts.from == Step::emit;
    if (!skip_verify) {
      StepTimer t("verify");
      // A stage's winner was measured in its stage; the verify step re-checks it for every declared
      // arch (and under compute-sanitizer when strict). Without a GPU the stage's compile check
      // stands. A winner that fails here gives way to the next fastest verified candidate.
      const bool recheck = !(artifacts.from <= Step::stage2 && !evaluator.can_measure());
      final_eval =
          !recheck ? stage2->evaluation : evaluator.evaluate(stage2->winner, false, o.strict, true);
      std::optional<Evaluation> first_failure;  // the chosen kernel's, reported if all fail
      for (std::size_t next = 0; recheck && !final_eval.ok(); ++next) {
        if (!first_failure) first_failure = final_eval;
        rejected.push_back(failure_record(stage2->winner.id, *final_eval.failure));
        if (next >= stage2->runners_up.size()) {
          final_eval = *first_failure;
          break;
        }
        const auto& [runner_up, measured] = stage2->runners_up[next];
        log::warning(result.name + ": the chosen kernel " + stage2->winner.id +
                     " failed the final check (" + final_eval.failure->first_line() +
                     "); trying the next fastest verified candidate, " + runner_up.id);
        stage2->winner = runner_up;
        stage2->evaluation = measured;
        final_eval = evaluator.evaluate(stage2->winner, false, o.strict, true);
      }
      if (final_eval.ok() && !final_eval.kernel_ms)
        final_eval.kernel_ms = stage2->evaluation.kernel_ms;
      // Every candidate is verified: the server's GPU memory goes back before the baselines.
      if (refs && !refs->stats().empty())
        evaluator.phases().add("references_startup", refs->stats().value("startup_ms", 0.0) / 1e3);
      refs.reset();
      if (!final_eval.ok())
        throw UserError("verify: the chosen kernel failed: " + final_eval.failure->text() +
                            tried_after(rejected),
                        "run again with --keep-work to inspect the candidate");
    }
    json status = arch_status(arches, services.gpu, final_eval, tol, skip_verify, o.no_gpu_reason);
    report_accuracy(result.name, final_eval.profile.value("harness", json::object()));
    // The baselines, timed the same way on the same GPU in the same run.
    json timing = {{"kernel_ms", nullptr},
                   {"eager_ms", nullptr},
                   {"compile_ms", nullptr},
                   {"speedup_vs_eager", nullptr},
                   {"speedup_vs_compile", nullptr}};
    if (services.gpu && final_eval.kernel_ms && *final_eval.kernel_ms > 0) {
      const double k = *final_eval.kernel_ms;
      timing["kernel_ms"] = k;
      timing["gpu"] = services.gpu->gpu_name();
      timing["achieved_gbps"] = roofline_inputs(s).bytes / (k * 1e-3) / 1e9;
      if (baseline_job.valid()) {
        StepTimer bt("baseline");
        const auto waited_from = std::chrono::steady_clock::now();
        const verify::Baseline b = baseline_job.get();
        // `baselines`: the job's own time (overlapping the stages); `baseline_wait`: what the
        // generation waited for it after its kernel was timed.
        evaluator.phases().add_since("baseline_wait", waited_from);
        if (b.eager_ms)
          timing["eager_ms"] = *b.eager_ms, timing["speedup_vs_eager"] = *b.eager_ms / k;
        if (b.compile_ms)
          timing["compile_ms"] = *b.compile_ms, timing["speedup_vs_compile"] = *b.compile_ms / k;
        if (b.eager_device_ms)
          timing["eager_device_ms"] = *b.eager_device_ms,
          timing["speedup_vs_eager_device"] = *b.eager_device_ms / k;
        // The library's GEMM (or conv) kernels alone against EGG's whole kernel, epilogue included.
        if (b.library_gemm_ms)
          timing["library_gemm_ms"] = *b.library_gemm_ms,
          timing["pct_of_library_gemm"] = 100.0 * *b.library_gemm_ms / k;
        if (b.compile_device_ms)
          timing["compile_device_ms"] = *b.compile_device_ms,
          timing["speedup_vs_compile_device"] = *b.compile_device_ms / k;
        // torch.compile's mode="max-autotune-no-cudagraphs" beside its default mode.
        if (b.compile_max_autotune_ms)
          timing["compile_max_autotune_ms"] = *b.compile_max_autotune_ms,
          timing["speedup_vs_compile_max_autotune"] = *b.compile_max_autotune_ms / k;
        if (b.compile_max_autotune_device_ms)
          timing["compile_max_autotune_device_ms"] = *b.compile_max_autotune_device_ms,
          timing["speedup_vs_compile_max_autotune_device"] = *b.compile_max_autotune_device_ms / k;
        if (!b.kernels.empty()) timing["baseline_kernels"] = b.kernels;
        if (!b.error.empty()) {
          timing["baseline_error"] = b.error;
          log::warning(result.name + ": " + b.error);
        }
        evaluator.phases().add("baselines", b.seconds);
      }
    }
    progress.finish(final_eval.kernel_ms, timing["eager_ms"].is_number()
                                              ? std::optional<double>(timing["eager_ms"])
                                              : std::nullopt);
    json phase_seconds = evaluator.phases().to_json();
    const json trace_seconds = phases.to_json();
    for (const auto& [phase, seconds] : trace_seconds.items()) phase_seconds[phase] = seconds;
    record = {
        {"candidate", stage2->winner.id},
        {"phases", phase_seconds},
        {"summary", stage2->winner.summary},
        {"params", stage2->winner.params},
        {"stages",
         json::array(
             {stage1->record,
              stage2->record,
              {{"step", "verify"}, {"profile", final_eval.profile}, {"rejected", rejected}}})},
        {"tokens", backend->usage()},
        {"timing", timing},
        {"status", status}};
    artifacts.dump_file("verify.json", record.dump(2) + "\n");
    sources = emit::render_sources(o.data_dir, contract, stage2->winner, backend->name(),
                                   o.op_file.filename().string());
    transcript = read_file(bc.transcript_out).value_or("");
    if (store) {
      cache::Files files{
          {"kernel.cu", sources.cu}, {"header.h", sources.header}, {"record.json", record.dump(2)}};
      if (!transcript.empty()) files["transcript.jsonl"] = transcript;
      try {  // a cache that fails now (a full disk) must not throw the kernel away
        store->store(result.cache_key, key.describe(), files, reverify);
      } catch (const std::exception& e) {
        log::warning(result.name + ": the kernel was not stored in the cache " +
                     store->root().string() + ": " + e.what());
      }
      std::string why;
      if (remote && !remote->read_only() &&
          !remote->put(result.cache_key, key.describe(), files, why))
        log::warning(result.name + ": " + why + " (shared cache " +
                     url_for_message(remote->base_url()) + ", --remote-cache / EGG_REMOTE_CACHE)");
    }
  }

  // Step: emit.
  StepTimer t("emit");
  const json& status = record["status"];
  result.status_text = join_status(status);
  bool all_verified = !status.empty();
  for (auto it = status.begin(); it != status.end(); ++it)
    all_verified = all_verified && it->value("state", "") == "verified";
  if (o.require_verified && !all_verified)
    throw UserError(
        SourceLocation{o.op_file.string(), 0, result.name},
        "kernel is not verified (" + result.status_text + ") and verification is required",
        "build on a machine with a GPU, use a cache or vendored kernels that were verified, or set "
        "EGG_REQUIRE_VERIFIED=OFF");
  // Never slower than eager, never silently (cache hits included: the times are the record's).
  const EagerComparison vs_eager = compare_with_eager(record.value("timing", json::object()));
  report_eager_floor(result.name, o.op_file.string(), vs_eager, o.require_faster);
  json manifest = {
      {"schema", kManifestSchema},
      {"name", result.name},
      {"op",
       {{"path", o.op_file.string()}, {"sha256", sha256_hex(read_file(o.op_file).value_or(""))}}},
      {"arches", arches},
      {"backend", backend->name()},
      {"model", o.model},
      {"options", o.options},
      {"generator", {{"name", "egg-gen"}, {"version", kEggVersion}}},
      {"nvcc_version", nvcc_version},
      {"cache_key", result.cache_key},
      {"cache_fields", key.describe()},
      {"precision", precision(o)},
      {"tolerance", {{"atol", tol.first}, {"rtol", tol.second}}},
      {"tolerance_basis", tolerance_basis(o, s)},
      {"accuracy_mode", std::string(accuracy_mode_name(accuracy(o)))},
      {"candidate", record.value("candidate", "")},
      {"summary", record.value("summary", "")},
      {"params", record.value("params", json::object())},
      {"status", status},
      {"timing", record.value("timing", json::object())},
      {"vs_eager", vs_eager.to_json()},
      {"tokens", record.value("tokens", json::object())},
      {"stages", record.value("stages", json::array())},
      {"phases", record.value("phases", json::object())},
      {"files",
       {{"cu", paths.cu.filename().string()},
        {"header", fs::relative(paths.header, o.out_dir).string()}}}};
  if (!transcript.empty()) manifest["files"]["transcript"] = "transcript.jsonl";
  std::vector<std::string> deps = s.deps;
  if (std::find(deps.begin(), deps.end(), o.op_file.string()) == deps.end())
    deps.insert(deps.begin(), o.op_file.string());
  result.changed =
      emit::write_outputs(paths, sources, manifest, emit::depfile_text(paths.cu, deps));
  result.manifest = manifest;
  if (!transcript.empty() &&
      write_if_changed(o.out_dir / "transcript.jsonl", transcript) == WriteOutcome::written)
    result.changed.push_back(o.out_dir / "transcript.jsonl");
  bool any_verified = false;
  for (auto it = status.begin(); it != status.end(); ++it)
    any_verified = any_verified || it->value("state", "") == "verified";
  if (!any_verified)
    log::warning(result.name + ": " + result.status_text +
                 " (the kernel compiles but nobody checked its results)");
  else if (!all_verified)
    log::warning(result.name + ": " + result.status_text +
                 " (only the local GPU's arch was checked)");
  return result;
}

}  // namespace egg::pipeline
