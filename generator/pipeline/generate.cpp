#include "pipeline/generate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <utility>

#include "backend/backend.h"
#include "cache/store.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "frontend/frontend.h"
#include "pipeline/artifacts.h"
#include "pipeline/cache_lookup.h"
#include "pipeline/eager_floor.h"
#include "pipeline/evaluate.h"
#include "pipeline/key.h"
#include "pipeline/prepare.h"
#include "pipeline/roofline.h"
#include "pipeline/stage.h"
#include "pipeline/timing_record.h"
#include "pipeline/tolerance.h"
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

// What the spec step gives the steps after it.
struct Traced {
  spec::Spec s;
  fs::path spec_json;  // the frontend's, read by the candidates' checks and the baselines
  PhaseTimes phases;   // of this generation's trace (the manifest's `phases`)
};

// The frontend's own split of the trace (import, model, inputs, capture, spec), when it wrote one.
void add_trace_parts(PhaseTimes& phases, const fs::path& frontend_dir) {
  if (auto times = read_file(frontend_dir / "trace_times.json")) {
    const json parts = json::parse(*times, nullptr, false);
    if (parts.is_object())
      for (const auto& [part, seconds] : parts.items())
        if (seconds.is_number()) phases.add("trace_" + part, seconds.get<double>());
  }
}

// Step: spec (the frontend always runs: the cache key is over the normalized spec).
Traced spec_step(const Setup& setup, ProcessRunner& runner, const fs::path& work) {
  const GenerateOptions& o = setup.o;
  Traced traced{{}, work / "frontend" / "spec.json", {}};
  StepTimer t("spec");
  const auto started = std::chrono::steady_clock::now();
  frontend::FrontendConfig fc{o.python, o.data_dir, o.seeds, o.trace_timeout};
  traced.s = frontend::trace(runner, fc, o.op_file, work / "frontend");
  traced.phases.add_since("trace", started);
  add_trace_parts(traced.phases, work / "frontend");
  if (auto edited = setup.artifacts.override_file("spec.json")) {
    traced.s = spec::read_spec(*edited);
    log::info("spec: taken from " + edited->string());
  }
  setup.artifacts.dump_file("spec.json", read_file(traced.spec_json).value_or(""));
  return traced;
}

// What is generated, once the spec is known: the tolerance, the backend, the contract, the stages'
// objectives and the cache key over all of them.
struct Plan {
  std::pair<double, double> tol;
  std::unique_ptr<backend::Backend> backend;
  contract::Contract contract;
  std::string stage1_objective, stage2_objective;
  cache::KeyBuilder key;
};

Plan plan_generation(Setup& setup, const spec::Spec& s, const fs::path& work) {
  const auto tol = tolerance(setup.o, s);
  backend::BackendConfig& bc = setup.bc;
  bc.transcript_out = work / "transcript.jsonl";
  bc.op_source = read_file(setup.o.op_file).value_or("");
  bc.atol = tol.first;
  bc.rtol = tol.second;
  auto backend = backend::make_backend(bc);
  backend->check_supported(s);
  contract::Contract contract = contract::derive(s, setup.name);

  std::string stage1_objective = read_prompt(setup.o.data_dir, "stage1_structure.md");
  std::string stage2_objective = read_prompt(setup.o.data_dir, "stage2_tuning.md");
  cache::KeyBuilder key = build_key(setup.o, setup.name, s, *backend, setup.arches,
                                    {stage1_objective, stage2_objective}, setup.nvcc_version);
  return Plan{tol,
              std::move(backend),
              std::move(contract),
              std::move(stage1_objective),
              std::move(stage2_objective),
              std::move(key)};
}

// What the steps after the spec share.
struct Run {
  Setup& setup;
  const Traced& traced;
  const Plan& plan;
  const fs::path& work;  // the work folder
  Services& services;
};

// The kernel to emit, from the cache or generated.
struct Outcome {
  emit::Sources sources;
  json record;  // the verify step's record (verify.json, the cache's record.json)
  std::string transcript;
};

Outcome cached_outcome(const cache::Files& files) {
  Outcome out;
  out.sources = {files.at("kernel.cu"), files.at("header.h")};
  out.record = json::parse(files.at("record.json"), nullptr, false);
  const auto transcript = files.find("transcript.jsonl");
  out.transcript = transcript != files.end() ? transcript->second : "";
  return out;
}

// The PyTorch baselines do not depend on the kernel: they are timed beside the stages, in a
// process of their own (its timed spans take the quiet lock exclusively, so they never overlap a
// candidate's), and read once a kernel is timed. Overlapping them saves their Python start,
// torch.compile's compilation and their wait for the GPU from every generation. The future's
// destructor waits for the process on every path out.
std::future<verify::Baseline> start_baselines(const Run& run) {
  const GenerateOptions& o = run.setup.o;
  if (!run.services.gpu || !o.baseline) return {};
  return std::async(std::launch::async, [&runner = run.services.runner, &o, work = run.work,
                                         spec_json = run.traced.spec_json] {
    return verify::time_baseline(runner, o.python, o.data_dir, o.op_file, work,
                                 o.baseline_max_autotune, o.baseline_compile, spec_json);
  });
}

// Step: stage 1, algorithmic structure design (or the hand-edited stage1.cu, checked).
std::optional<StageOutcome> stage1_step(const Run& run, const backend::StageRequest& request,
                                        Evaluator& evaluator, const StageBudget& budget,
                                        Progress& progress) {
  const ArtifactDirs& artifacts = run.setup.artifacts;
  std::optional<StageOutcome> stage1;
  if (artifacts.from <= Step::stage1) {
    StepTimer t("stage1");
    stage1 = run_stage(*run.plan.backend, request, evaluator, budget, std::nullopt, &progress);
  } else {
    auto file = artifacts.override_file("stage1.cu");
    if (!file)
      throw UserError("--from " + run.setup.o.from_step + " needs stage1.cu in --override-dir");
    auto c = read_candidate_artifact(*file, "override:stage1");
    Evaluation ev = evaluator.evaluate(c, evaluator.can_measure());
    if (!ev.ok())
      throw UserError(SourceLocation{file->string(), 0, "stage1"},
                      "the hand-edited stage-1 kernel fails: " + ev.failure->text(),
                      "fix it, or resume from an earlier step");
    stage1 = StageOutcome{c, ev, {{"step", "stage1"}, {"override", file->string()}}, {}};
  }
  artifacts.dump_file("stage1.cu", candidate_artifact(stage1->winner));
  return stage1;
}

// Step: stage 2, hardware-specific tuning of the stage-1 winner (or the hand-edited stage2.cu).
std::optional<StageOutcome> stage2_step(const Run& run, const backend::StageRequest& request,
                                        Evaluator& evaluator, const StageBudget& budget,
                                        const std::optional<StageOutcome>& stage1,
                                        Progress& progress) {
  const ArtifactDirs& artifacts = run.setup.artifacts;
  std::optional<StageOutcome> stage2;
  if (artifacts.from <= Step::stage2) {
    StepTimer t("stage2");
    stage2 = run_stage(*run.plan.backend, request, evaluator, budget, stage1, &progress);
  } else {
    auto file = artifacts.override_file("stage2.cu");
    if (!file)
      throw UserError("--from " + run.setup.o.from_step + " needs stage2.cu in --override-dir");
    auto c = read_candidate_artifact(*file, "override:stage2");
    stage2 = StageOutcome{c, Evaluation{}, {{"step", "stage2"}, {"override", file->string()}}, {}};
  }
  artifacts.dump_file("stage2.cu", candidate_artifact(stage2->winner));
  return stage2;
}

struct Stages {
  std::optional<StageOutcome> stage1, stage2;
};

// Stage 1, then stage 2 on its winner. Only the winner, its profile summary and the decisions
// taken cross the stage boundary.
Stages run_stages(const Run& run, Evaluator& evaluator, Progress& progress) {
  StageBudget budget;
  budget.max_candidates = std::max(1, run.setup.o.budget);
  backend::StageRequest request{&run.traced.s,
                                &run.plan.contract,
                                "stage1",
                                run.plan.stage1_objective,
                                run.setup.arches,
                                std::nullopt,
                                "unknown",
                                "",
                                {}};
  Stages stages;
  stages.stage1 = stage1_step(run, request, evaluator, budget, progress);
  request.stage = "stage2";
  request.objective = run.plan.stage2_objective;
  request.incumbent = stages.stage1->winner;
  request.bottleneck = stages.stage1->evaluation.profile.value("bottleneck", "unknown");
  request.profile_summary = stages.stage1->evaluation.profile.value("feedback", "");
  request.recent.clear();
  stages.stage2 = stage2_step(run, request, evaluator, budget, stages.stage1, progress);
  return stages;
}

// What the verify step found.
struct Verified {
  Evaluation eval;                // the final check's (none when the step is skipped)
  json rejected = json::array();  // verified candidates that failed the final check
};

// A winner that fails the final check gives way to the next fastest verified candidate, each
// failure recorded in `v.rejected`; when every one fails, the chosen kernel's failure stands.
void fall_back_to_runners_up(Verified& v, StageOutcome& stage2, Evaluator& evaluator,
                             const Setup& setup) {
  std::optional<Evaluation> first_failure;  // the chosen kernel's, reported if all fail
  for (std::size_t next = 0; !v.eval.ok(); ++next) {
    if (!first_failure) first_failure = v.eval;
    v.rejected.push_back(failure_record(stage2.winner.id, *v.eval.failure));
    if (next >= stage2.runners_up.size()) {
      v.eval = *first_failure;
      break;
    }
    const auto& [runner_up, measured] = stage2.runners_up[next];
    log::warning(setup.name + ": the chosen kernel " + stage2.winner.id +
                 " failed the final check (" + v.eval.failure->first_line() +
                 "); trying the next fastest verified candidate, " + runner_up.id);
    stage2.winner = runner_up;
    stage2.evaluation = measured;
    v.eval = evaluator.evaluate(stage2.winner, false, setup.o.strict, true);
  }
}

// Step: verify the winner (compile for every arch; on the GPU: correctness and timing).
Verified verify_step(const Run& run, StageOutcome& stage2, Evaluator& evaluator,
                     std::unique_ptr<verify::References>& refs) {
  Verified v;
  if (run.setup.artifacts.from == Step::emit) return v;
  StepTimer t("verify");
  // A stage's winner was measured in its stage; the verify step re-checks it for every declared
  // arch (and under compute-sanitizer when strict). Without a GPU the stage's compile check
  // stands. A winner that fails here gives way to the next fastest verified candidate.
  const bool recheck = !(run.setup.artifacts.from <= Step::stage2 && !evaluator.can_measure());
  v.eval = !recheck ? stage2.evaluation
                    : evaluator.evaluate(stage2.winner, false, run.setup.o.strict, true);
  if (recheck) fall_back_to_runners_up(v, stage2, evaluator, run.setup);
  if (v.eval.ok() && !v.eval.kernel_ms) v.eval.kernel_ms = stage2.evaluation.kernel_ms;
  // Every candidate is verified: the server's GPU memory goes back before the baselines.
  if (refs && !refs->stats().empty())
    evaluator.phases().add("references_startup", refs->stats().value("startup_ms", 0.0) / 1e3);
  refs.reset();
  if (!v.eval.ok())
    throw UserError(
        "verify: the chosen kernel failed: " + v.eval.failure->text() + tried_after(v.rejected),
        "run again with --keep-work to inspect the candidate");
  return v;
}

// The baselines, timed beside the stages: waited for once the kernel is timed.
std::optional<verify::Baseline> wait_for_baselines(std::future<verify::Baseline>& job,
                                                   PhaseTimes& phases, const std::string& name) {
  if (!job.valid()) return std::nullopt;
  StepTimer bt("baseline");
  const auto waited_from = std::chrono::steady_clock::now();
  verify::Baseline b = job.get();
  // `baselines`: the job's own time (overlapping the stages); `baseline_wait`: what the
  // generation waited for it after its kernel was timed.
  phases.add_since("baseline_wait", waited_from);
  if (!b.error.empty()) log::warning(name + ": " + b.error);
  phases.add("baselines", b.seconds);
  return b;
}

// The baselines, timed the same way on the same GPU in the same run (pipeline/timing_record.h).
json timing_step(const Run& run, const Evaluation& final_eval,
                 std::future<verify::Baseline>& baseline_job, PhaseTimes& phases) {
  verify::GpuVerifier* gpu = run.services.gpu;
  if (!(gpu && final_eval.kernel_ms && *final_eval.kernel_ms > 0))
    return timing_record(std::nullopt, std::nullopt);
  const KernelTiming kernel{*final_eval.kernel_ms, gpu->gpu_name(),
                            roofline_inputs(run.traced.s).bytes};
  const auto baseline = wait_for_baselines(baseline_job, phases, run.setup.name);
  return timing_record(kernel, baseline);
}

// The generation's record: the winner, its phases, the stages with the verify step, the tokens,
// the timing against the baselines and the per-arch status.
json generation_record(const Run& run, const Stages& stages, const Verified& verified,
                       Evaluator& evaluator, std::future<verify::Baseline>& baseline_job,
                       Progress& progress) {
  const Evaluation& final_eval = verified.eval;
  json status = arch_status(run.setup.arches, run.services.gpu, final_eval, run.plan.tol,
                            run.setup.artifacts.from == Step::emit, run.setup.o.no_gpu_reason);
  report_accuracy(run.setup.name, final_eval.profile.value("harness", json::object()));
  json timing = timing_step(run, final_eval, baseline_job, evaluator.phases());
  progress.finish(final_eval.kernel_ms, timing["eager_ms"].is_number()
                                            ? std::optional<double>(timing["eager_ms"])
                                            : std::nullopt);
  json phase_seconds = evaluator.phases().to_json();
  const json trace_seconds = run.traced.phases.to_json();
  for (const auto& [phase, seconds] : trace_seconds.items()) phase_seconds[phase] = seconds;
  const StageOutcome& stage2 = *stages.stage2;
  return {{"candidate", stage2.winner.id},
          {"phases", phase_seconds},
          {"summary", stage2.winner.summary},
          {"params", stage2.winner.params},
          {"stages", json::array({stages.stage1->record,
                                  stage2.record,
                                  {{"step", "verify"},
                                   {"profile", final_eval.profile},
                                   {"rejected", verified.rejected}}})},
          {"tokens", run.plan.backend->usage()},
          {"timing", timing},
          {"status", status}};
}

// The generation on a cache miss: the references and the baselines started, stage 1, stage 2,
// verify; the record dumped, the sources rendered and the kernel stored in the cache.
Outcome generate_on_miss(const Run& run, const CacheLookup& cached,
                         const fs::path& previous_manifest) {
  const GenerateOptions& o = run.setup.o;
  cached.log_miss_reason(previous_manifest);
  const auto [bytes, flops] = roofline_inputs(run.traced.s);  // pipeline/roofline.h
  // The reference outputs, computed and kept on the GPU while the first candidates compile.
  std::unique_ptr<verify::References> refs;
  if (run.services.gpu)
    refs = run.services.gpu->references({o.python, o.data_dir, o.op_file, run.traced.spec_json,
                                         run.work / "references", o.seeds, o.ref_device});
  std::future<verify::Baseline> baseline_job = start_baselines(run);
  Evaluator evaluator({o.data_dir, run.work / "candidates", run.traced.spec_json, run.setup.arches,
                       run.plan.backend->name(), o.op_file.filename().string(), bytes, flops,
                       run.plan.tol.first, run.plan.tol.second, accuracy(o), refs.get()},
                      run.plan.contract, run.setup.nvcc, run.services.gpu);
  Progress progress = log_progress(run.setup.name);
  Stages stages = run_stages(run, evaluator, progress);
  const Verified verified = verify_step(run, *stages.stage2, evaluator, refs);
  Outcome out;
  out.record = generation_record(run, stages, verified, evaluator, baseline_job, progress);
  run.setup.artifacts.dump_file("verify.json", out.record.dump(2) + "\n");
  out.sources = emit::render_sources(o.data_dir, run.plan.contract, stages.stage2->winner,
                                     run.plan.backend->name(), o.op_file.filename().string());
  out.transcript = read_file(run.setup.bc.transcript_out).value_or("");
  cached.store(out.sources, out.record, out.transcript);
  return out;
}

// Whether the per-arch status has arches and each is verified.
bool all_verified(const json& status) {
  bool verified = !status.empty();
  for (auto it = status.begin(); it != status.end(); ++it)
    verified = verified && it->value("state", "") == "verified";
  return verified;
}

// Whether any arch of the per-arch status is verified.
bool any_verified(const json& status) {
  bool verified = false;
  for (auto it = status.begin(); it != status.end(); ++it)
    verified = verified || it->value("state", "") == "verified";
  return verified;
}

// manifest.json: what was generated, from what, how it was checked and how fast it is.
json manifest_json(const Run& run, const Outcome& out, const json& status,
                   const EagerComparison& vs_eager, const emit::OutputPaths& paths,
                   const std::string& cache_key) {
  const GenerateOptions& o = run.setup.o;
  const json& record = out.record;
  json manifest = {
      {"schema", kManifestSchema},
      {"name", run.setup.name},
      {"op",
       {{"path", o.op_file.string()}, {"sha256", sha256_hex(read_file(o.op_file).value_or(""))}}},
      {"arches", run.setup.arches},
      {"backend", run.plan.backend->name()},
      {"model", o.model},
      {"options", o.options},
      {"generator", {{"name", "egg-gen"}, {"version", kEggVersion}}},
      {"nvcc_version", run.setup.nvcc_version},
      {"cache_key", cache_key},
      {"cache_fields", run.plan.key.describe()},
      {"precision", precision(o)},
      {"tolerance", {{"atol", run.plan.tol.first}, {"rtol", run.plan.tol.second}}},
      {"tolerance_basis", tolerance_basis(o, run.traced.s)},
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
  if (!out.transcript.empty()) manifest["files"]["transcript"] = "transcript.jsonl";
  return manifest;
}

// Step: emit (after the checks that verification and the eager floor require).
void emit_step(const Run& run, Outcome& out, const emit::OutputPaths& paths,
               GenerateResult& result) {
  StepTimer t("emit");
  const GenerateOptions& o = run.setup.o;
  const json& status = out.record["status"];
  result.status_text = join_status(status);
  const bool verified = all_verified(status);
  if (o.require_verified && !verified)
    throw UserError(
        SourceLocation{o.op_file.string(), 0, result.name},
        "kernel is not verified (" + result.status_text + ") and verification is required",
        "build on a machine with a GPU, use a cache or vendored kernels that were verified, or set "
        "EGG_REQUIRE_VERIFIED=OFF");
  // Never slower than eager, never silently (cache hits included: the times are the record's).
  const EagerComparison vs_eager = compare_with_eager(out.record.value("timing", json::object()));
  report_eager_floor(result.name, o.op_file.string(), vs_eager, o.require_faster, run.setup.arches);
  json manifest = manifest_json(run, out, status, vs_eager, paths, result.cache_key);
  std::vector<std::string> deps = run.traced.s.deps;
  if (std::find(deps.begin(), deps.end(), o.op_file.string()) == deps.end())
    deps.insert(deps.begin(), o.op_file.string());
  result.changed =
      emit::write_outputs(paths, out.sources, manifest, emit::depfile_text(paths.cu, deps));
  result.manifest = manifest;
  if (!out.transcript.empty() &&
      write_if_changed(o.out_dir / "transcript.jsonl", out.transcript) == WriteOutcome::written)
    result.changed.push_back(o.out_dir / "transcript.jsonl");
  if (!any_verified(status))
    log::warning(result.name + ": " + result.status_text +
                 " (the kernel compiles but nobody checked its results)");
  else if (!verified)
    log::warning(result.name + ": " + result.status_text +
                 " (only the local GPU's arch was checked)");
}

}  // namespace

std::string default_name(const fs::path& op_file) {
  return contract::c_identifier(op_file.stem().string());
}

GenerateResult generate(const GenerateOptions& in, Services& services) {
  Setup setup = prepare(in, services.runner);
  GenerateResult result;
  result.name = setup.name;
  TempDir work(fs::temp_directory_path(), "egg-work-" + result.name);
  if (setup.o.keep_work) {
    work.keep();
    log::info(result.name + ": keeping the work folder " + work.path().string());
  }
  const Traced traced = spec_step(setup, services.runner, work.path());
  const Plan plan = plan_generation(setup, traced.s, work.path());
  result.cache_key = plan.key.key();
  const Run run{setup, traced, plan, work.path(), services};

  // The cache sits in front of the stages (pipeline/cache_lookup.h).
  const auto paths = emit::output_paths(setup.o.out_dir, result.name);
  const CacheLookup cached({setup.o, setup.artifacts.active(), result.name, plan.key, setup.nvcc,
                            setup.arches, work.path()},
                           services);
  result.cache_status = cached.status();
  Outcome out = cached.files() ? cached_outcome(*cached.files())
                               : generate_on_miss(run, cached, paths.manifest);
  emit_step(run, out, paths, result);
  return result;
}

}  // namespace egg::pipeline
