#include "llm/wire.h"

#include <chrono>

#include "llm/errors.h"
#include "llm/retry.h"

namespace egg::llm::wire {

std::string pick_model(const ChatRequest& request, const LlmConfig& config) {
  std::string model = request.model.empty() ? config.model : request.model;
  if (model.empty()) {
    throw LlmError(LlmErrorKind::config,
                   std::string("no model for the ") + wire_name(config.wire) +
                       " backend; pass MODEL to egg_kernel() or --model to egg-gen");
  }
  return model;
}

nlohmann::json parse_body(const HttpResponse& response, const char* api) {
  auto json = nlohmann::json::parse(response.body, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    std::string start = response.body.substr(0, 120);
    for (char& c : start) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    throw LlmError(LlmErrorKind::malformed_response,
                   std::string("the ") + api + " answer is not a JSON object (starts with '" +
                       start + "'); check EGG_LLM_BASE_URL points at the API, not a web page");
  }
  return json;
}

std::int64_t int_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return 0;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  return it->get<std::int64_t>();
}

ChatReply exchange(HttpTransport& transport, const HttpRequest& request, const LlmConfig& config,
                   const std::function<ChatReply(const HttpResponse&)>& parse) {
  const auto start = std::chrono::steady_clock::now();
  try {
    const HttpResponse response = transport.send(request);
    ChatReply reply = parse(response);
    reply.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
    if (const auto* retrying = dynamic_cast<const RetryingTransport*>(&transport)) {
      reply.attempts = retrying->last_attempts();
    }
    return reply;
  } catch (const LlmError& error) {
    throw LlmError(error.kind(), config.redact(error.message()));
  } catch (const nlohmann::json::exception& error) {
    // A field of an unexpected type; a protocol error of the server, not ours.
    throw LlmError(LlmErrorKind::malformed_response,
                   config.redact(std::string("unexpected answer shape: ") + error.what()));
  }
}

}  // namespace egg::llm::wire
