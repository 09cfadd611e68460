// The LLM backends (openai, anthropic, replay): the code and debug agents as prompts rendered from
// prompts/, answers taken from the last fenced code block, every exchange recorded in a transcript.
#pragma once

#include <map>
#include <memory>

#include "backend/backend.h"
#include "llm/chat.h"
#include "llm/transcript.h"
#include "render/template.h"

namespace egg::backend::llm_backend {

// A backend whose agents ask a ChatClient.
class LlmBackend : public Backend {
 public:
  // `client` answers; `recorder` (may be null) records to the transcript.
  LlmBackend(BackendConfig config, std::unique_ptr<llm::ChatClient> client,
             std::unique_ptr<llm::TranscriptWriter> transcript);
  ~LlmBackend() override;

  std::string name() const override { return config_.name; }
  void check_supported(const spec::Spec& spec) const override;
  std::vector<Candidate> propose(const StageRequest& request) override;
  std::optional<Candidate> repair(const StageRequest& request, const Candidate& failed,
                                  const Failure& failure) override;
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  nlohmann::json usage() const override { return usage_; }

  // The system and user prompt the code agent would send (golden tests, --dump-dir).
  std::pair<std::string, std::string> code_prompt(const StageRequest& request) const;

 private:
  std::optional<Candidate> ask(const StageRequest& request, const std::string& agent,
                               const std::string& system, const std::string& user, int attempt);
  std::string contract_text(const contract::Contract& c) const;

  BackendConfig config_;
  std::unique_ptr<llm::ChatClient> client_;
  std::unique_ptr<llm::TranscriptWriter> transcript_;
  std::unique_ptr<llm::ChatClient> recorder_;
  std::map<std::string, render::Template> prompts_;
  render::Template launch_;
  nlohmann::json usage_ = nlohmann::json::object();
  std::map<std::string, int> attempts_;  // per stage
};

// A UserError when the backend could not start: replay without its transcript, an LLM backend
// without a model, an API key or a usable EGG_LLM_BASE_URL. Touches no network.
void check_llm_config(const BackendConfig& config);
// Makes the openai, anthropic or replay backend from the environment (llm/config.h), after
// check_llm_config.
std::unique_ptr<Backend> make_llm_backend(const BackendConfig& config);

// The prompt file describing `arch` (prompts/arch/<arch>.md, else generic.md).
std::string arch_facts(const std::filesystem::path& data_dir, const std::string& arch);

// op.py without blank and comment-only lines, so a comment edit does not change the prompt.
std::string strip_comment_lines(const std::string& source);

}  // namespace egg::backend::llm_backend
