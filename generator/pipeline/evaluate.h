// Evaluating a candidate: the checks every candidate passes (no torch/ATen in the source, nvcc
// compiles it for every arch) and, where a GPU is present, verification and timing; then the
// profile agent's reading of the facts.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "toolchain/nvcc.h"
#include "verify/gpu_verifier.h"

namespace egg::pipeline {

// The outcome of one evaluation.
struct Evaluation {
  std::optional<backend::Failure> failure;  // none: it passed every check
  std::optional<double> kernel_ms;
  nlohmann::json profile = nlohmann::json::object();  // profile agent: facts, bottleneck, feedback
  bool ok() const { return !failure.has_value(); }
};

// The failure class of a GPU run that did not verify.
backend::FailureClass failure_class(const verify::GpuOutcome& out);

// Static facts ptxas printed (-Xptxas -v): max registers, spill bytes, shared memory bytes.
nlohmann::json ptxas_facts(const std::string& log);

// Profile agent: names the bottleneck (memory, compute, latency, launch) and writes feedback from
// the facts; without a GPU it says it saw static facts only.
// `ncu` holds Nsight Compute metrics (verify/ncu.h) when they were read; they take precedence.
nlohmann::json profile_agent(const nlohmann::json& facts, std::optional<double> kernel_ms,
                             double bytes, double flops, bool measured,
                             const nlohmann::json& ncu = nlohmann::json::object());

// Wall time per phase of a generation, seconds (the manifest's `phases`): trace, references,
// compile, verify, time, baselines, and the time spent waiting for the GPU (its timing lock, its
// memory, the reference server) apart from them.
class PhaseTimes {
 public:
  void add(const std::string& phase, double seconds) { seconds_[phase] += seconds; }
  void add_since(const std::string& phase, std::chrono::steady_clock::time_point start) {
    add(phase, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // A harness result's phases_ms: verify, time, and the waits.
  void add_harness(const nlohmann::json& phases_ms);
  nlohmann::json to_json() const;

 private:
  std::map<std::string, double> seconds_;
};

// Renders, scans, compiles and (with a GPU) verifies candidates in a work folder.
class Evaluator {
 public:
  struct Config {
    std::filesystem::path data_dir;
    std::filesystem::path work;
    std::filesystem::path spec_json;
    std::vector<std::string> arches;
    std::string backend_name;
    std::string op_file_name;
    double bytes = 0, flops = 0;  // the problem's minimum traffic and arithmetic (roofline)
    double atol = 1e-4, rtol = 1e-4;
    AccuracyMode accuracy = AccuracyMode::automatic;  // OPTIONS accuracy=
    verify::References* refs = nullptr;  // the op's references on the GPU (with a GPU only)
  };
  Evaluator(Config config, const contract::Contract& contract, toolchain::Nvcc& nvcc,
            verify::GpuVerifier* gpu)
      : config_(std::move(config)), contract_(contract), nvcc_(nvcc), gpu_(gpu) {}

  // Evaluates one candidate (its files land in work/<n>-candidate/). With a GPU the GPU build is
  // the compile check and the other arches are compiled only when `all_arches` (the final winner).
  // `time_cutoff_ms`: timing stops early when the candidate is slower than that (RunOptions).
  Evaluation evaluate(const backend::Candidate& candidate, bool time, bool strict = false,
                      bool all_arches = false, std::optional<double> time_cutoff_ms = std::nullopt);
  // With a GPU: renders `candidates` and builds them side by side (one nvcc per core), so the
  // evaluate() calls that follow only verify and time. Without a GPU it does nothing (a stage
  // then stops at the first candidate that compiles, so building the others would be waste).
  void prepare(const std::vector<backend::Candidate>& candidates);
  // True when a GPU measures candidates.
  bool can_measure() const { return gpu_ != nullptr; }
  // Where the time went so far.
  PhaseTimes& phases() { return phases_; }

 private:
  // Renders a candidate into `dir`; returns its .cu path.
  std::filesystem::path write_sources(const backend::Candidate& candidate,
                                      const std::filesystem::path& dir) const;
  // Adds a GPU run's times to phases_.
  void account(std::chrono::steady_clock::time_point started, const verify::GpuOutcome& out);
  // A key for the rendered candidate: its id and a hash of its code.
  static std::string prepared_key(const backend::Candidate& candidate);

  Config config_;
  const contract::Contract& contract_;
  toolchain::Nvcc& nvcc_;
  verify::GpuVerifier* gpu_;
  int count_ = 0;
  std::map<std::string, std::filesystem::path> prepared_;  // prepared_key → its folder
  PhaseTimes phases_;
};

}  // namespace egg::pipeline
