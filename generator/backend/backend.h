// The backend interface: how the pipeline's agents think. A backend writes only kernels and the
// body of launch(); it never touches the cache, CMake or files outside what it is given.
#pragma once

#include "backend/failure.h"

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contract/contract.h"
#include "spec/spec.h"

namespace egg::backend {

// What a backend writes for one candidate.
struct KernelCode {
  std::string device_code;  // kernels and helpers, placed before launch()
  std::string launch_body;  // the body of launch()
};

// One candidate kernel with what it is and the knobs it was made with.
struct Candidate {
  std::string id;                                    // e.g. "elementwise.fused:v4:b256:u2"
  std::string summary;                               // one line for the manifest and logs
  nlohmann::json params = nlohmann::json::object();  // tunable parameter values
  KernelCode code;
};

// A library route (cuBLAS, cuBLASLt, cuDNN: what PyTorch eager itself runs), by the libraries its
// parameters link.
inline bool library_route(const Candidate& c) {
  return c.params.is_object() && c.params.contains("link") && !c.params["link"].empty();
}

// A one-line record of an earlier attempt, as agents see it inside a stage.
struct AttemptSummary {
  std::string candidate_id;
  std::string change;  // what changed against the incumbent
  std::string result;  // e.g. "verified 0.81 ms", "compile_error"
};

// What a stage asks the code agent for.
struct StageRequest {
  const spec::Spec* spec = nullptr;
  const contract::Contract* contract = nullptr;
  std::string stage;                   // "stage1" or "stage2"
  std::string objective;               // the stage's written objective (prompts/)
  std::vector<std::string> arches;     // e.g. {"sm_90"}
  std::optional<Candidate> incumbent;  // stage 2: the stage-1 winner
  std::string bottleneck;       // profile agent's class: memory|compute|latency|launch|unknown
  std::string profile_summary;  // profile agent's feedback text
  std::vector<AttemptSummary> recent;  // bounded summary of recent attempts
};

// A backend: builtin expert, LLM, or replay.
class Backend {
 public:
  virtual ~Backend() = default;
  // The name in manifests and keys, e.g. "builtin".
  virtual std::string name() const = 0;
  // Throws UserError naming the op (file, line) if this backend cannot implement the spec.
  virtual void check_supported(const spec::Spec& spec) const = 0;
  // Code agent: candidates for the stage objective, best prior first.
  virtual std::vector<Candidate> propose(const StageRequest& request) = 0;
  // Debug agent: a repaired candidate for a failure, or nullopt when it cannot repair it.
  virtual std::optional<Candidate> repair(const StageRequest& request, const Candidate& failed,
                                          const Failure& failure) = 0;
  // Names and contents of the template and prompt files the backend reads (part of the cache key).
  virtual std::vector<std::pair<std::string, std::string>> key_inputs() const = 0;
  // Requests and tokens per stage and agent: {"stage1": {"code": {requests, tokens_in,
  // tokens_out}}}.
  virtual nlohmann::json usage() const { return nlohmann::json::object(); }
};

// Whether cuDNN is at hand for the builtin conv family, and which of its engines it may run:
// any (PyTorch's default, torch.backends.cudnn.deterministic off: an engine that accumulates with
// atomics may differ in the last bits from run to run) or only deterministic ones (OPTIONS
// deterministic=on, as torch.backends.cudnn.deterministic).
enum class Cudnn { absent, any_engine, deterministic_engines };

// How to make a backend.
struct BackendConfig {
  std::string name = "builtin";             // builtin | openai | anthropic | replay
  std::string model;                        // LLM backends: the model to ask
  std::filesystem::path data_dir;           // templates/ and prompts/
  std::filesystem::path transcript_out;     // LLM backends: where exchanges are recorded (JSONL)
  std::filesystem::path replay_transcript;  // replay: the transcript to answer from
  std::string op_source;                    // the op.py text (LLM prompts show the reference)
  std::string precision = "default";        // PRECISION opt-in: default, tf32, bf16, fp32x3
  Cudnn cudnn = Cudnn::absent;              // whether the builtin conv family may use cuDNN
  bool wgmma = false;  // every target arch is sm_90a: kernels may use Hopper's wgmma
  double atol = 1e-4, rtol = 1e-4;
};

// A UserError when the backend could not start (unknown name, a missing model, key or transcript);
// cheap, so the pipeline checks it before tracing.
void check_config(const BackendConfig& config);
// Creates the backend; a UserError lists the known names otherwise.
std::unique_ptr<Backend> make_backend(const BackendConfig& config);

}  // namespace egg::backend
