#include "backend/llm/llm_backend.h"

#include <sstream>

#include "llm/client_factory.h"
#include "llm/code_block.h"
#include "llm/config.h"
#include "llm/errors.h"
#include "llm/recording_client.h"
#include "llm/replay_client.h"
#include "util/files.h"
#include "util/log.h"

namespace egg::backend::llm_backend {
namespace {

using nlohmann::json;

constexpr const char* kPromptFiles[] = {"agent_code.md",    "agent_debug.md", "contract.md",
                                        "answer_format.md", "request.md",     "debug_request.md"};
constexpr int kAnswerTries = 2;  // a code-less, truncated or refused answer is asked again once

render::Template load_prompt(const std::filesystem::path& data_dir, const std::string& name) {
  auto text = read_file(data_dir / "prompts" / name);
  if (!text)
    throw InternalError("prompt " + (data_dir / "prompts" / name).string() +
                        " is missing; check --data-dir");
  return {name, *text};
}

// A final error of the LLM layer as a user error that says what to check.
[[noreturn]] void rethrow_final(const llm::LlmError& e, const std::string& backend) {
  if (e.kind() == llm::LlmErrorKind::replay_diverged)
    throw UserError(
        "backend " + backend + ": " + e.what(),
        "the transcript was recorded for other prompts, templates or op; regenerate it with the "
        "backend that recorded it");
  throw UserError(
      "backend " + backend + ": " + e.what(),
      "check EGG_LLM_BASE_URL, the API key variable and MODEL; docs/llm.md has the details");
}

std::string bounded(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars / 2) + "\n[... " + std::to_string(text.size() - max_chars) +
         " characters cut ...]\n" + text.substr(text.size() - max_chars / 2);
}

}  // namespace

std::string strip_comment_lines(const std::string& source) {
  std::istringstream in(source);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    size_t last = line.find_last_not_of(" \t\r");
    out += line.substr(0, last + 1) + "\n";
  }
  return out;
}

std::string arch_facts(const std::filesystem::path& data_dir, const std::string& arch) {
  if (auto text = read_file(data_dir / "prompts" / "arch" / (arch + ".md"))) return *text;
  auto generic = read_file(data_dir / "prompts" / "arch" / "generic.md");
  if (!generic) throw InternalError("prompts/arch/generic.md is missing; check --data-dir");
  return render::render(*generic, json{{"arch", arch}}, "arch/generic.md");
}

LlmBackend::LlmBackend(BackendConfig config, std::unique_ptr<llm::ChatClient> client,
                       std::unique_ptr<llm::TranscriptWriter> transcript)
    : config_(std::move(config)),
      client_(std::move(client)),
      transcript_(std::move(transcript)),
      launch_(render::load_template(config_.data_dir, "llm/launch.tmpl")) {
  for (const char* name : kPromptFiles) prompts_.emplace(name, load_prompt(config_.data_dir, name));
  if (transcript_)
    recorder_ =
        std::make_unique<llm::RecordingClient>(*client_, *transcript_, config_.name, config_.model);
}

LlmBackend::~LlmBackend() = default;

void LlmBackend::check_supported(const spec::Spec& spec) const {
  // A model may attempt any op; what it cannot do shows as failed candidates. Only the contract's
  // needs are checked here.
  if (spec.outputs.empty())
    throw UserError(SourceLocation{spec.op_file, 0, "output"}, "the op returns no tensor");
}

std::vector<std::pair<std::string, std::string>> LlmBackend::key_inputs() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, t] : prompts_) out.emplace_back("prompts/" + name, t.text);
  out.emplace_back(launch_.name, launch_.text);
  return out;
}

std::string LlmBackend::contract_text(const contract::Contract& c) const {
  const auto& t = prompts_.at("contract.md");
  return render::render(t.text, contract::template_context(c), t.name);
}

std::pair<std::string, std::string> LlmBackend::code_prompt(const StageRequest& r) const {
  const std::string system = prompts_.at("agent_code.md").text;
  json ctx = contract::template_context(*r.contract);
  const std::string arch = r.arches.empty() ? "sm_90" : r.arches.back();
  ctx["objective"] = render::render(r.objective, json{{"arch", arch}}, r.stage + " objective");
  ctx["arch_facts"] = arch_facts(config_.data_dir, arch);
  ctx["op_file_name"] = std::filesystem::path(r.spec->op_file).filename().string();
  ctx["op_source"] = strip_comment_lines(config_.op_source);
  ctx["atol"] = config_.atol;
  ctx["rtol"] = config_.rtol;
  ctx["contract"] = contract_text(*r.contract);
  ctx["answer_format"] = prompts_.at("answer_format.md").text;
  if (r.incumbent) ctx["incumbent"] = {{"code", r.incumbent->code.device_code}};
  if (!r.bottleneck.empty() && r.bottleneck != "unknown")
    ctx["feedback"] =
        "bottleneck: " + r.bottleneck + (r.profile_summary.empty() ? "" : "\n" + r.profile_summary);
  if (!r.recent.empty()) {
    json items = json::array();
    for (const auto& a : r.recent)
      items.push_back(
          {{"candidate_id", a.candidate_id}, {"change", a.change}, {"result", a.result}});
    ctx["recent"] = {{"items", items}};
  }
  const auto& t = prompts_.at("request.md");
  return {system, render::render(t.text, ctx, t.name)};
}

std::optional<Candidate> LlmBackend::ask(const StageRequest& r, const std::string& agent,
                                         const std::string& system, const std::string& user,
                                         int attempt) {
  llm::ChatRequest req;
  req.model = config_.model;
  req.system = system;
  req.messages = {{"user", user}};
  req.stage = r.stage;
  req.agent = agent;
  req.attempt = attempt;
  json& u = usage_[r.stage][agent];
  if (u.is_null())
    u = {{"requests", 0}, {"tokens_in", 0}, {"tokens_out", 0}, {"failures", json::object()}};
  llm::ChatClient& client = recorder_ ? *recorder_ : *client_;
  try {
    llm::ChatReply reply = client.complete(req);
    u["requests"] = u["requests"].get<int>() + 1;
    u["tokens_in"] = u["tokens_in"].get<std::int64_t>() + reply.tokens_in;
    u["tokens_out"] = u["tokens_out"].get<std::int64_t>() + reply.tokens_out;
    std::string code = llm::extract_code(reply);
    Candidate c;
    c.id = "llm:" + r.stage + ":" + agent + std::to_string(attempt);
    c.summary = agent + " agent answer " + std::to_string(attempt) + " in " + r.stage;
    c.params = {{"model", reply.model.empty() ? config_.model : reply.model}};
    c.code.device_code = code;
    c.code.launch_body =
        render::render(launch_.text, contract::template_context(*r.contract), launch_.name);
    return c;
  } catch (const llm::LlmError& e) {
    std::string kind(llm::kind_name(e.kind()));
    u["failures"][kind] = u["failures"].value(kind, 0) + 1;
    switch (e.kind()) {
      case llm::LlmErrorKind::truncated:
      case llm::LlmErrorKind::refusal:
      case llm::LlmErrorKind::no_code:
      case llm::LlmErrorKind::malformed_response:
        log::warning(config_.name + " " + r.stage + " " + agent + " agent: " + e.what() +
                     " (a failed attempt)");
        return std::nullopt;
      default:
        rethrow_final(e, config_.name);
    }
  }
}

std::vector<Candidate> LlmBackend::propose(const StageRequest& request) {
  auto [system, user] = code_prompt(request);
  for (int tries = 0; tries < kAnswerTries; ++tries) {
    int attempt = ++attempts_[request.stage];
    if (auto c = ask(request, "code", system, user, attempt)) return {*c};
  }
  return {};
}

std::optional<Candidate> LlmBackend::repair(const StageRequest& request, const Candidate& failed,
                                            const Failure& failure) {
  json ctx = contract::template_context(*request.contract);
  ctx["code"] = failed.code.device_code;
  ctx["failure_class"] = std::string(failure_name(failure.cls));
  ctx["report"] = bounded(failure.text(), 6000);
  ctx["contract"] = contract_text(*request.contract);
  ctx["answer_format"] = prompts_.at("answer_format.md").text;
  const auto& t = prompts_.at("debug_request.md");
  const std::string user = render::render(t.text, ctx, t.name);
  int attempt = ++attempts_[request.stage];
  return ask(request, "debug", prompts_.at("agent_debug.md").text, user, attempt);
}

void check_llm_config(const BackendConfig& config) {
  try {
    if (config.name == "replay") {
      if (config.replay_transcript.empty())
        throw UserError("the replay backend needs a transcript",
                        "pass --option transcript=<path to transcript.jsonl> (egg_kernel OPTIONS "
                        "transcript=...)");
      std::error_code ec;
      if (!std::filesystem::is_regular_file(config.replay_transcript, ec))
        throw UserError("transcript " + config.replay_transcript.string() + " not found",
                        "point transcript= at the transcript.jsonl written next to a manifest");
      return;
    }
    if (config.model.empty())
      throw UserError("backend " + config.name + " needs a model",
                      "pass MODEL <name> (egg-gen --model <name>)");
    (void)llm::load_config(llm::parse_wire_format(config.name), config.model);
  } catch (const llm::LlmError& e) {
    rethrow_final(e, config.name);
  }
}

std::unique_ptr<Backend> make_llm_backend(const BackendConfig& config) {
  std::unique_ptr<llm::ChatClient> client;
  std::unique_ptr<llm::TranscriptWriter> transcript;
  try {
    if (config.name == "replay") {
      client = std::make_unique<llm::ReplayClient>(
          llm::ReplayClient::from_file(config.replay_transcript.string()));
    } else {
      auto llm_config = llm::load_config(llm::parse_wire_format(config.name), config.model);
      client = llm::make_network_client(llm_config);
      if (!config.transcript_out.empty())
        transcript = std::make_unique<llm::TranscriptWriter>(
            config.transcript_out.string(), false,
            [llm_config](std::string s) { return llm_config.redact(std::move(s)); });
    }
  } catch (const llm::LlmError& e) {
    rethrow_final(e, config.name);
  }
  return std::make_unique<LlmBackend>(config, std::move(client), std::move(transcript));
}

}  // namespace egg::backend::llm_backend
