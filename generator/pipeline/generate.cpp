#include "pipeline/generate.h"

#include <algorithm>
#include <chrono>

#include "backend/backend.h"
#include "cache/key.h"
#include "cache/store.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "frontend/frontend.h"
#include "toolchain/nvcc.h"
#include "util/files.h"
#include "util/log.h"
#include "util/sha256.h"
#include "verify/verifier.h"
#include "version.h"

namespace egg::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Times one step and logs it at debug level (EGG_LOG=debug), as Halide's Lower.cpp does.
class StepTimer {
 public:
  explicit StepTimer(std::string step) : step_(std::move(step)), start_(std::chrono::steady_clock::now()) {}
  ~StepTimer() {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
    log::debug("step " + step_ + " took " + std::to_string(ms.count()) + " ms");
  }

 private:
  std::string step_;
  std::chrono::steady_clock::time_point start_;
};

std::string read_prompt(const fs::path& data_dir, const std::string& file) {
  auto text = read_file(data_dir / "prompts" / file);
  if (!text) throw InternalError("prompt " + (data_dir / "prompts" / file).string() + " is missing; check --data-dir");
  return *text;
}

void validate(const GenerateOptions& o) {
  if (o.arches.empty())
    throw UserError("no target architecture given", "pass --arch sm_90 (egg_kernel: ARCH sm_90)");
  for (const auto& a : o.arches)
    if (toolchain::arch_number(a).empty())
      throw UserError("'" + a + "' is not a CUDA architecture", "write it as sm_XX, e.g. sm_80 or sm_90");
  std::error_code ec;
  if (!fs::is_regular_file(o.op_file, ec))
    throw UserError(SourceLocation{o.op_file.string(), 0, ""}, "op file not found",
                    "check the path given to egg_kernel()/egg-gen generate");
  for (const auto& [k, v] : o.options)
    if (k.empty()) throw UserError("option '=" + v + "' has no name", "write options as key=value");
}

// The key over everything the generated files depend on (BRIEF: "Cache").
cache::KeyBuilder build_key(const GenerateOptions& o, const std::string& name, const spec::Spec& s,
                            const backend::Backend& backend, const std::vector<std::string>& arches,
                            const std::string& prompts, const std::string& nvcc_version) {
  cache::KeyBuilder key;
  key.add("cache_schema", std::to_string(cache::kCacheSchema));
  key.add("generator", std::string("egg-gen ") + kEggVersion);
  key.add("name", name);
  key.add("spec", spec::normalized(s).dump());
  std::string arch_list;
  for (const auto& a : arches) arch_list += a + ";";
  key.add("arches", arch_list);
  key.add("backend", backend.name());
  key.add("model", o.model);
  std::string opts;
  for (const auto& [k, v] : o.options) opts += k + "=" + v + ";";
  key.add("options", opts);
  std::string templates;
  for (const auto& t : emit::contract_templates(o.data_dir)) templates += t.name + ":" + sha256_hex(t.text) + ";";
  for (const auto& [tname, text] : backend.key_inputs()) templates += tname + ":" + sha256_hex(text) + ";";
  key.add("templates", templates);
  key.add("prompts", prompts);
  key.add("nvcc", nvcc_version);
  return key;
}

struct StageOutcome {
  backend::Candidate winner;
  json record;
};

// One stage: the code agent proposes, the winner is the best measured candidate; with nothing to
// measure on (no GPU) it is the expert prior's first choice, and the record says so.
StageOutcome run_stage(backend::Backend& backend, backend::StageRequest request, bool can_measure) {
  auto candidates = backend.propose(request);
  if (candidates.empty())
    throw InternalError("backend " + backend.name() + " proposed no candidate for " + request.stage);
  json ids = json::array();
  for (const auto& c : candidates) ids.push_back(c.id);
  StageOutcome out{candidates.front(), json::object()};
  out.record = {{"step", request.stage},
                {"objective", request.objective.substr(0, request.objective.find('\n'))},
                {"agents", {{"code", backend.name()}, {"profile", can_measure ? "measured" : "static"}}},
                {"bottleneck", request.bottleneck},
                {"candidates", ids},
                {"chosen", out.winner.id},
                {"summary", out.winner.summary},
                {"params", out.winner.params},
                {"decision", can_measure ? "fastest verified candidate"
                                         : "no GPU to measure on: took the expert prior's first choice"}};
  return out;
}

std::string join_status(const std::vector<verify::ArchStatus>& statuses) {
  std::string s;
  for (const auto& st : statuses) s += (s.empty() ? "" : ", ") + st.arch + ": " + st.text();
  return s;
}

}  // namespace

std::string default_name(const fs::path& op_file) { return contract::c_identifier(op_file.stem().string()); }

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

  TempDir work(fs::temp_directory_path(), "egg-work-" + result.name);
  if (o.keep_work) work.keep();

  // Step: spec.
  spec::Spec s;
  {
    StepTimer t("spec");
    frontend::FrontendConfig fc{o.python, o.data_dir, o.seeds, std::chrono::minutes(10)};
    s = frontend::trace(services.runner, fc, o.op_file, work.path() / "frontend");
  }
  auto backend = backend::make_backend(o.backend, o.model, o.data_dir);
  backend->check_supported(s);
  contract::Contract contract = contract::derive(s, result.name);

  toolchain::Nvcc nvcc(services.runner, o.nvcc);
  const std::string nvcc_version = nvcc.version();
  const std::string stage1_objective = read_prompt(o.data_dir, "stage1_structure.md");
  const std::string stage2_objective = read_prompt(o.data_dir, "stage2_tuning.md");
  cache::KeyBuilder key = build_key(o, result.name, s, *backend, arches,
                                    sha256_hex(stage1_objective) + ";" + sha256_hex(stage2_objective), nvcc_version);
  result.cache_key = key.key();

  const auto paths = emit::output_paths(o.out_dir, result.name);
  std::optional<cache::LocalStore> store;
  if (o.cache_enabled) store.emplace(o.cache_dir.empty() ? cache::default_root() : o.cache_dir);

  emit::Sources sources;
  json record;
  cache::Lookup hit;
  if (store) hit = store->lookup(result.cache_key);
  result.cache_status = !store ? "off" : hit.status == cache::LookupStatus::hit ? "hit"
                                        : hit.status == cache::LookupStatus::corrupt ? "corrupt" : "miss";
  if (hit.status == cache::LookupStatus::hit && hit.files.count("kernel.cu") && hit.files.count("header.h") &&
      hit.files.count("record.json")) {
    sources = {hit.files["kernel.cu"], hit.files["header.h"]};
    record = json::parse(hit.files["record.json"], nullptr, false);
    log::debug("cache hit " + result.cache_key);
  } else {
    if (result.cache_status == "hit") result.cache_status = "corrupt";
    // Say why it missed, against the fields recorded in the previous manifest of this output.
    if (auto old = read_file(paths.manifest)) {
      json m = json::parse(*old, nullptr, false);
      if (!m.is_discarded() && m.contains("cache_fields")) {
        auto changed = cache::changed_fields(m["cache_fields"], key.describe());
        std::string list;
        for (const auto& f : changed) list += (list.empty() ? "" : ", ") + f;
        if (!list.empty()) log::info(result.name + ": cache miss, changed: " + list);
      }
    }
    const verify::GpuInfo gpu = verify::probe_gpu(services.runner);
    const bool can_measure = false;  // measuring needs the GPU harness (egg-harness), wired in later
    backend::StageRequest request{&s, &contract, "stage1", stage1_objective, arches, std::nullopt, "unknown", {}};
    StageOutcome stage1;
    {
      StepTimer t("stage1");
      stage1 = run_stage(*backend, request, can_measure);
    }
    request.stage = "stage2";
    request.objective = stage2_objective;
    request.incumbent = stage1.winner;
    request.bottleneck = "memory";  // static class for element-wise chains: bytes dominate FLOPs
    StageOutcome stage2;
    {
      StepTimer t("stage2");
      stage2 = run_stage(*backend, request, can_measure);
    }
    backend::Candidate winner = stage2.winner;
    json verify_record = json::array();
    // Step: verify (compile check; GPU verification where a GPU and the harness exist).
    if (o.compile_check) {
      StepTimer t("verify");
      for (int attempt = 0;; ++attempt) {
        emit::Sources candidate = emit::render_sources(o.data_dir, contract, winner, backend->name(),
                                                       o.op_file.filename().string());
        fs::path dir = work.path() / ("candidate" + std::to_string(attempt));
        write_atomic(dir / (result.name + ".cu"), candidate.cu);
        write_atomic(dir / "include" / "egg" / (result.name + ".h"), candidate.header);
        auto compiled = nvcc.compile_object(dir / (result.name + ".cu"), dir / "include", arches, dir / "kernel.o");
        verify_record.push_back({{"candidate", winner.id}, {"compile", compiled.ok ? "ok" : "compile_error"}});
        if (compiled.ok) break;
        backend::StageRequest debug_request = request;
        auto repaired = attempt < 2 ? backend->repair(debug_request, winner, compiled.log) : std::nullopt;
        if (!repaired) {
          work.keep();
          throw InternalError("the generated kernel does not compile (candidate kept in " + dir.string() +
                              ")\n" + compiled.log + "\nrepro: " + compiled.repro +
                              "\nplease report this as a bug in EGG, with the op.py");
        }
        log::warning(result.name + ": candidate " + winner.id + " did not compile; the debug agent repaired it");
        winner = *repaired;
      }
    }
    std::vector<verify::ArchStatus> statuses =
        verify::all_unverified(arches, gpu.present ? "GPU verification not available in this build" : "no GPU");
    sources = emit::render_sources(o.data_dir, contract, winner, backend->name(), o.op_file.filename().string());
    json status = json::object();
    for (const auto& st : statuses)
      status[st.arch] = {{"state", st.state}, {"reason", st.reason}, {"text", st.text()}, {"details", st.details}};
    record = {{"candidate", winner.id},
              {"summary", winner.summary},
              {"params", winner.params},
              {"stages", json::array({stage1.record, stage2.record,
                                      {{"step", "verify"}, {"attempts", verify_record}}})},
              {"status", status}};
    if (store) store->store(result.cache_key, key.describe(),
                            {{"kernel.cu", sources.cu}, {"header.h", sources.header}, {"record.json", record.dump(2)}});
  }

  // Step: emit.
  std::vector<verify::ArchStatus> statuses;
  for (auto it = record["status"].begin(); it != record["status"].end(); ++it)
    statuses.push_back({it.key(), it->value("state", ""), it->value("reason", ""), it->value("details", json::object())});
  result.status_text = join_status(statuses);
  bool all_verified = !statuses.empty();
  for (const auto& st : statuses) all_verified = all_verified && st.verified();
  if (o.require_verified && !all_verified)
    throw UserError(SourceLocation{o.op_file.string(), 0, result.name},
                    "kernel is not verified (" + result.status_text + ") and verification is required",
                    "build on a machine with a GPU, use a cache or vendored kernels that were verified, or set "
                    "EGG_REQUIRE_VERIFIED=OFF");
  auto op_text = read_file(o.op_file).value_or("");
  json manifest = {{"schema", kManifestSchema},
                   {"name", result.name},
                   {"op", {{"path", o.op_file.string()}, {"sha256", sha256_hex(op_text)}}},
                   {"arches", arches},
                   {"backend", backend->name()},
                   {"model", o.model},
                   {"options", o.options},
                   {"generator", {{"name", "egg-gen"}, {"version", kEggVersion}}},
                   {"nvcc_version", nvcc_version},
                   {"cache_key", result.cache_key},
                   {"cache_fields", key.describe()},
                   {"precision", o.options.count("precision") ? o.options.at("precision") : "default"},
                   {"candidate", record.value("candidate", "")},
                   {"summary", record.value("summary", "")},
                   {"params", record.value("params", json::object())},
                   {"status", record["status"]},
                   {"timing", {{"kernel_ms", nullptr}, {"eager_ms", nullptr}, {"compile_ms", nullptr},
                               {"speedup_vs_eager", nullptr}, {"speedup_vs_compile", nullptr}}},
                   {"stages", record.value("stages", json::array())},
                   {"files", {{"cu", paths.cu.filename().string()},
                              {"header", fs::relative(paths.header, o.out_dir).string()}}}};
  std::vector<std::string> deps = s.deps;
  if (std::find(deps.begin(), deps.end(), o.op_file.string()) == deps.end()) deps.insert(deps.begin(), o.op_file.string());
  result.changed = emit::write_outputs(paths, sources, manifest, emit::depfile_text(paths.cu, deps));
  if (!all_verified) log::warning(result.name + ": " + result.status_text + " (the kernel compiles but nobody checked its results)");
  return result;
}

}  // namespace egg::pipeline
