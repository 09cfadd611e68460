#include "llm/openai_client.h"

#include "llm/errors.h"
#include "llm/wire.h"

namespace egg::llm {
namespace {

using nlohmann::json;

bool official_openai(const std::string& base_url) {
  return base_url.find("://api.openai.com") != std::string::npos;
}

// OpenAI's reasoning models (o-series, gpt-5*) accept only the default temperature.
bool fixed_temperature_model(const std::string& model) {
  return model.rfind("gpt-5", 0) == 0 || model.rfind("o1", 0) == 0 || model.rfind("o3", 0) == 0 ||
         model.rfind("o4", 0) == 0;
}

// message.content is a string, null, or (some servers) an array of {type, text} parts.
std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
  }
  return text;
}

}  // namespace

OpenAiClient::OpenAiClient(LlmConfig config, HttpTransport& transport)
    : config_(std::move(config)), transport_(transport) {}

HttpRequest OpenAiClient::build_request(const ChatRequest& request) const {
  const std::string model = wire::pick_model(request, config_);
  json messages = json::array();
  if (!request.system.empty())
    messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const auto& m : request.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", model}, {"messages", messages}};
  // api.openai.com replaced max_tokens by max_completion_tokens; compatible servers know the old
  // name.
  const bool official = official_openai(config_.base_url);
  body[official ? "max_completion_tokens" : "max_tokens"] = request.max_tokens;
  if (request.temperature >= 0 && !(official && fixed_temperature_model(model))) {
    body["temperature"] = request.temperature;
  }

  HttpRequest http;
  http.url = config_.base_url + "/chat/completions";
  http.headers.emplace_back("Content-Type", "application/json");
  http.headers.emplace_back("Accept", "application/json");
  if (!config_.api_key.empty())
    http.headers.emplace_back("Authorization", "Bearer " + config_.api_key);
  http.body = body.dump();
  http.connect_timeout = config_.connect_timeout;
  http.total_timeout = config_.total_timeout;
  return http;
}

ChatReply OpenAiClient::parse_reply(const HttpResponse& response) {
  const json body = wire::parse_body(response, "OpenAI");
  const auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object() || !(*choices)[0].contains("message")) {
    throw LlmError(LlmErrorKind::malformed_response, "the OpenAI answer has no choices[0].message");
  }
  const json& choice = (*choices)[0];
  const json& message = choice["message"];
  ChatReply reply;
  if (message.contains("content")) reply.text = content_text(message["content"]);
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    reply.finish_reason = choice["finish_reason"].get<std::string>();
  }
  if (reply.finish_reason == "stop" || reply.finish_reason.empty()) {
    reply.finish = FinishReason::stop;
  } else if (reply.finish_reason == "length") {
    reply.finish = FinishReason::length;
  } else if (reply.finish_reason == "content_filter") {
    reply.finish = FinishReason::refusal;
  } else {
    reply.finish = FinishReason::other;
  }
  if (message.contains("refusal") && message["refusal"].is_string() &&
      !message["refusal"].get<std::string>().empty()) {
    reply.finish = FinishReason::refusal;
    if (reply.text.empty()) reply.text = message["refusal"].get<std::string>();
  }
  if (body.contains("usage")) {
    reply.tokens_in = wire::int_field(body["usage"], "prompt_tokens");
    reply.tokens_out = wire::int_field(body["usage"], "completion_tokens");
  }
  if (body.contains("model") && body["model"].is_string())
    reply.model = body["model"].get<std::string>();
  return reply;
}

ChatReply OpenAiClient::complete(const ChatRequest& request) {
  HttpRequest http;
  try {
    http = build_request(request);
  } catch (const LlmError& error) {
    throw LlmError(error.kind(), config_.redact(error.message()));
  }
  return wire::exchange(transport_, http, config_, &OpenAiClient::parse_reply);
}

}  // namespace egg::llm
