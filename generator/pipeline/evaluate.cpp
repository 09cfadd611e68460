#include "pipeline/evaluate.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <regex>
#include <thread>

#include "emit/emit.h"
#include "source_scan.h"
#include "util/files.h"
#include "util/sha256.h"

namespace egg::pipeline {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
  return text;
}
}  // namespace

json ptxas_facts(const std::string& log) {
  static const std::regex registers(R"(Used (\d+) registers)");
  static const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex smem(R"((\d+) bytes smem)");
  int max_registers = 0, spill_bytes = 0, smem_bytes = 0;
  std::smatch m;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), registers);
       it != std::sregex_iterator(); ++it)
    max_registers = std::max(max_registers, std::stoi((*it)[1]));
  for (auto it = std::sregex_iterator(log.begin(), log.end(), spills); it != std::sregex_iterator();
       ++it)
    spill_bytes = std::max(spill_bytes, std::stoi((*it)[1]) + std::stoi((*it)[2]));
  for (auto it = std::sregex_iterator(log.begin(), log.end(), smem); it != std::sregex_iterator();
       ++it)
    smem_bytes = std::max(smem_bytes, std::stoi((*it)[1]));
  return {{"registers", max_registers}, {"spill_bytes", spill_bytes}, {"smem_bytes", smem_bytes}};
}

json profile_agent(const json& facts, std::optional<double> kernel_ms, double bytes, double flops,
                   bool measured, const json& ncu) {
  std::string bottleneck = "memory";
  std::string feedback;
  // Arithmetic intensity against the ridge point of a Hopper-class GPU (~15 FLOP/B fp32 CUDA
  // cores).
  const double intensity = bytes > 0 ? flops / bytes : 0;
  if (intensity > 15) bottleneck = "compute";
  if (facts.value("spill_bytes", 0) > 0) {
    bottleneck = "latency";
    feedback += "registers spill (" + std::to_string(facts.value("spill_bytes", 0)) +
                " bytes): reduce work per thread or unrolling. ";
  }
  // Occupancy the registers allow (Hopper/Ampere: 64K registers, 64 warps per SM, registers
  // allocated per warp in units of 256): the upper bound whatever the block size.
  const int regs = facts.value("registers", 0);
  double occupancy = 1.0;
  if (regs > 0) {
    const int per_warp = ((regs * 32 + 255) / 256) * 256;
    occupancy = std::min(64, 65536 / per_warp) / 64.0;
  }
  if (occupancy < 0.5)
    feedback += "registers (" + std::to_string(regs) + " per thread) cap occupancy at " +
                std::to_string(static_cast<int>(occupancy * 100)) + "%. ";
  json out = {{"facts", facts},
              {"bottleneck", bottleneck},
              {"measured", measured},
              {"occupancy_limit_by_registers", occupancy}};
  if (measured && kernel_ms && *kernel_ms > 0) {
    const double gbps = bytes / (*kernel_ms * 1e-3) / 1e9;
    out["achieved_gbps"] = gbps;
    out["achieved_tflops"] = flops / (*kernel_ms * 1e-3) / 1e12;
    if (*kernel_ms < 0.01) {
      bottleneck = "launch";
      out["bottleneck"] = bottleneck;
      feedback += "the kernel runs for under 10 us: launch overhead dominates. ";
    }
    feedback += "achieved " + std::to_string(static_cast<int>(gbps)) + " GB/s. ";
  } else {
    feedback += "static facts only: no GPU measured this candidate. ";
  }
  // Counters, where ncu read them, decide between memory- and compute-bound and give occupancy.
  auto metric = [&](const char* name) -> std::optional<double> {
    if (ncu.contains(name) && ncu[name].contains("value")) return ncu[name]["value"].get<double>();
    return std::nullopt;
  };
  if (auto dram = metric("dram__throughput.avg.pct_of_peak_sustained_elapsed")) {
    const double sm = metric("sm__throughput.avg.pct_of_peak_sustained_elapsed").value_or(0);
    out["ncu"] = ncu;
    if (bottleneck != "launch") {
      bottleneck = *dram >= sm ? "memory" : "compute";
      if (std::max(*dram, sm) < 40) bottleneck = "latency";  // neither unit is busy: stalls
      out["bottleneck"] = bottleneck;
    }
    feedback += "ncu: DRAM " + std::to_string(static_cast<int>(*dram)) + "% and SM " +
                std::to_string(static_cast<int>(sm)) + "% of peak";
    if (auto occ = metric("sm__warps_active.avg.pct_of_peak_sustained_active"))
      feedback += ", achieved occupancy " + std::to_string(static_cast<int>(*occ)) + "%";
    feedback += ". ";
  } else if (ncu.contains("unavailable")) {
    out["ncu"] = ncu;
  }
  out["feedback"] = feedback + "bottleneck: " + bottleneck + ".";
  return out;
}

backend::FailureClass failure_class(const verify::GpuOutcome& out) {
  using backend::FailureClass;
  using harness::VerifyStatus;
  if (out.compile_error) return FailureClass::compile_error;
  switch (out.status) {
    case VerifyStatus::mismatch:
      return FailureClass::mismatch;
    case VerifyStatus::nan_output:
      return FailureClass::nan_output;
    case VerifyStatus::constant_output:
      return FailureClass::constant_output;
    case VerifyStatus::cached_result:
      return FailureClass::cached_result;
    case VerifyStatus::input_modified:
      return FailureClass::input_modified;
    case VerifyStatus::out_of_bounds:
      return FailureClass::out_of_bounds;
    case VerifyStatus::nondeterministic:
      return FailureClass::nondeterministic;
    case VerifyStatus::side_stream:
      return FailureClass::side_stream;
    case VerifyStatus::launch_error:
      return FailureClass::launch_error;
    case VerifyStatus::sanitizer:
      return FailureClass::sanitizer;
    case VerifyStatus::forbidden_source:
      return FailureClass::forbidden_source;
    case VerifyStatus::load_error:
      return FailureClass::load_error;
    case VerifyStatus::crash:
      return FailureClass::crash;
    case VerifyStatus::timeout:
      return FailureClass::timeout;
    case VerifyStatus::spec_error:
      return FailureClass::spec_error;
    case VerifyStatus::no_gpu:
      return FailureClass::no_gpu;
    case VerifyStatus::gpu_busy:
      return FailureClass::gpu_busy;
    case VerifyStatus::too_large:
      return FailureClass::too_large;
    case VerifyStatus::verified:
    case VerifyStatus::harness_error:
      break;
  }
  return FailureClass::harness_error;
}

void PhaseTimes::add_harness(const json& phases_ms) {
  auto ms = [&](const char* key) { return phases_ms.value(key, 0.0) / 1000.0; };
  // verify and time net of the waits inside them: for GPU memory, for the quiet lock (shared while
  // verifying, exclusive while timing) and for the reference server (whose computing counts as
  // references, the rest as waiting).
  add("verify", ms("verify") - ms("gpu_memory_wait") - ms("refs_wait") - ms("verify_lock_wait"));
  add("time", ms("time") - ms("gpu_lock_wait"));
  add("references", ms("refs_compute"));
  add("wait_gpu", ms("gpu_lock_wait") + ms("verify_lock_wait") + ms("gpu_memory_wait") +
                      ms("refs_wait") - ms("refs_compute"));
}

json PhaseTimes::to_json() const {
  json j = json::object();
  for (const auto& [k, v] : seconds_) j[k] = std::max(0.0, v);
  return j;
}

fs::path Evaluator::write_sources(const backend::Candidate& candidate, const fs::path& dir) const {
  auto sources = emit::render_sources(config_.data_dir, contract_, candidate, config_.backend_name,
                                      config_.op_file_name);
  const fs::path cu = dir / (contract_.name + ".cu");
  write_atomic(cu, sources.cu);
  write_atomic(dir / "include" / "egg" / (contract_.name + ".h"), sources.header);
  return cu;
}

std::string Evaluator::prepared_key(const backend::Candidate& candidate) {
  return candidate.id + "\n" +
         sha256_hex(candidate.code.device_code + "\n" + candidate.code.launch_body);
}

void Evaluator::prepare(const std::vector<backend::Candidate>& candidates) {
  if (!gpu_ || candidates.size() < 2) return;
  std::vector<std::pair<fs::path, fs::path>> jobs;  // (.cu, folder)
  for (const auto& c : candidates) {
    const std::string key = prepared_key(c);
    if (prepared_.count(key)) continue;
    // A candidate the source scan rejects is never compiled.
    if (!harness::scan_source_text(c.code.device_code + "\n" + c.code.launch_body).empty())
      continue;
    const fs::path dir = config_.work / (std::to_string(count_++) + "-candidate");
    jobs.emplace_back(write_sources(c, dir), dir);
    prepared_[key] = dir;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t width = std::min<size_t>(jobs.size(), cores);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();)
      gpu_->prebuild(jobs[i].first, jobs[i].second / "include", jobs[i].second / "verify");
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (size_t t = 1; t < width; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  phases_.add_since("compile", started);
}

void Evaluator::account(std::chrono::steady_clock::time_point started,
                        const verify::GpuOutcome& out) {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const json phases_ms = out.details.value("phases_ms", json::object());
  phases_.add_harness(phases_ms);
  const double ready_wait = phases_ms.value("refs_ready_wait", 0.0) / 1000.0;
  phases_.add("references", ready_wait);
  // What the harness did not spend: building the library (when it was not prebuilt), starting.
  phases_.add("compile", std::max(0.0, wall - ready_wait - phases_ms.value("total", 0.0) / 1000.0));
}

Evaluation Evaluator::evaluate(const backend::Candidate& candidate, bool time, bool strict,
                               bool all_arches, std::optional<double> time_cutoff_ms) {
  Evaluation ev;
  verify::RunOptions run_options;
  run_options.time = time;
  run_options.strict = strict;
  run_options.atol = config_.atol;
  run_options.rtol = config_.rtol;
  run_options.accuracy = config_.accuracy;
  run_options.time_cutoff_ms = time_cutoff_ms;
  // A prepared candidate keeps its folder (where its library was prebuilt); others get a new one.
  fs::path dir;
  if (auto it = prepared_.find(prepared_key(candidate)); it != prepared_.end() && !all_arches) {
    dir = it->second;
    prepared_.erase(it);
  } else {
    dir = config_.work / (std::to_string(count_++) + "-candidate");
  }
  const fs::path cu = write_sources(candidate, dir);

  auto findings =
      harness::scan_source_text(candidate.code.device_code + "\n" + candidate.code.launch_body);
  if (!findings.empty()) {
    ev.failure = backend::Failure{
        backend::FailureClass::forbidden_api,
        "the kernel calls PyTorch instead of computing: " + harness::describe(findings) +
            "; write the computation in CUDA"};
    return ev;
  }
  json facts = json::object();
  if (gpu_ && !all_arches) {
    const auto started = std::chrono::steady_clock::now();
    auto out = gpu_->run(cu, dir / "include", config_.spec_json, *config_.refs, dir / "verify",
                         run_options);
    account(started, out);
    if (!out.ok()) {
      ev.failure =
          backend::Failure{failure_class(out), replace_all(out.report, dir.string() + "/", "")};
      return ev;
    }
    ev.kernel_ms = out.kernel_ms;
    ev.profile = profile_agent(facts, out.kernel_ms, config_.bytes, config_.flops, true);
    ev.profile["harness"] = out.details;
    return ev;
  }
  const auto compile_started = std::chrono::steady_clock::now();
  // The final winner's harness library builds beside the object for every arch (two nvcc runs
  // at once instead of one after the other); the run below finds it prebuilt.
  std::future<void> library;
  if (gpu_)
    library = std::async(std::launch::async,
                         [&] { gpu_->prebuild(cu, dir / "include", dir / "verify"); });
  auto compiled = nvcc_.compile_object(cu, dir / "include", config_.arches, dir / "kernel.o");
  if (library.valid()) library.get();
  phases_.add_since("compile", compile_started);
  if (!compiled.ok) {
    // Work paths are random: without them the report (and a replayed transcript) is reproducible.
    ev.failure = backend::Failure{
        backend::FailureClass::compile_error,
        replace_all(compiled.log + "\nrepro: " + compiled.repro, dir.string() + "/", "")};
    return ev;
  }
  facts = ptxas_facts(compiled.log);
  if (gpu_) {  // the final winner: every arch compiled above; verified again, and profiled
    const auto started = std::chrono::steady_clock::now();
    auto out = gpu_->run(cu, dir / "include", config_.spec_json, *config_.refs, dir / "verify",
                         run_options);
    account(started, out);
    if (!out.ok()) {
      ev.failure = backend::Failure{failure_class(out), out.report};
      return ev;
    }
    ev.kernel_ms = out.kernel_ms;
    ev.profile = profile_agent(facts, out.kernel_ms, config_.bytes, config_.flops, true,
                               gpu_->profile(dir / "verify", config_.spec_json, *config_.refs));
    ev.profile["harness"] = out.details;
    return ev;
  }
  ev.profile = profile_agent(facts, std::nullopt, config_.bytes, config_.flops, false);
  return ev;
}

}  // namespace egg::pipeline
