#include "llm/anthropic_client.h"

#include <nlohmann/json.hpp>

#include "llm/errors.h"
#include "llm/wire.h"

namespace egg::llm {

using nlohmann::json;

AnthropicClient::AnthropicClient(LlmConfig config, HttpTransport& transport)
    : config_(std::move(config)), transport_(transport) {}

HttpRequest AnthropicClient::build_request(const ChatRequest& request) const {
  json messages = json::array();
  for (const auto& m : request.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", wire::pick_model(request, config_)},
               {"max_tokens", request.max_tokens},
               {"messages", messages}};
  if (!request.system.empty()) body["system"] = request.system;
  if (request.temperature >= 0) body["temperature"] = request.temperature;

  HttpRequest http;
  // Accept a base URL given with or without the trailing /v1.
  const std::string& base = config_.base_url;
  const bool has_v1 = base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0;
  http.url = base + (has_v1 ? "/messages" : "/v1/messages");
  http.headers.emplace_back("Content-Type", "application/json");
  http.headers.emplace_back("Accept", "application/json");
  http.headers.emplace_back("anthropic-version", kAnthropicVersion);
  if (!config_.api_key.empty()) http.headers.emplace_back("x-api-key", config_.api_key);
  http.body = body.dump();
  http.connect_timeout = config_.connect_timeout;
  http.total_timeout = config_.total_timeout;
  return http;
}

ChatReply AnthropicClient::parse_reply(const HttpResponse& response) {
  const json body = wire::parse_body(response, "Anthropic");
  const auto content = body.find("content");
  if (content == body.end() || !content->is_array()) {
    throw LlmError(LlmErrorKind::malformed_response, "the Anthropic answer has no content array");
  }
  ChatReply reply;
  for (const auto& block : *content) {
    // Only text blocks carry the answer; thinking and tool blocks are skipped.
    if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
        block["text"].is_string()) {
      reply.text += block["text"].get<std::string>();
    }
  }
  if (body.contains("stop_reason") && body["stop_reason"].is_string()) {
    reply.finish_reason = body["stop_reason"].get<std::string>();
  }
  const std::string& r = reply.finish_reason;
  if (r == "end_turn" || r == "stop_sequence" || r.empty()) {
    reply.finish = FinishReason::stop;
  } else if (r == "max_tokens") {
    reply.finish = FinishReason::length;
  } else if (r == "refusal") {
    reply.finish = FinishReason::refusal;
  } else {
    reply.finish = FinishReason::other;
  }
  if (body.contains("usage")) {
    reply.tokens_in = wire::int_field(body["usage"], "input_tokens");
    reply.tokens_out = wire::int_field(body["usage"], "output_tokens");
  }
  if (body.contains("model") && body["model"].is_string())
    reply.model = body["model"].get<std::string>();
  return reply;
}

ChatReply AnthropicClient::complete(const ChatRequest& request) {
  HttpRequest http;
  try {
    http = build_request(request);
  } catch (const LlmError& error) {
    throw LlmError(error.kind(), config_.redact(error.message()));
  }
  return wire::exchange(transport_, http, config_, &AnthropicClient::parse_reply);
}

}  // namespace egg::llm
