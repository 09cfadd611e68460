// Helpers shared by the OpenAI and Anthropic clients: JSON bodies, send-and-time, redaction.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/chat.h"
#include "llm/config.h"
#include "llm/http_client.h"

namespace egg::llm::wire {

// The model to ask: the request's, else the configured one; throws LlmError(config) if neither.
std::string pick_model(const ChatRequest& request, const LlmConfig& config);

// Parses a 2xx body as a JSON object; throws LlmError(malformed_response) otherwise.
nlohmann::json parse_body(const HttpResponse& response, const char* api);

// Reads an integer field at `key` of `object`, 0 when absent or not a number.
std::int64_t int_field(const nlohmann::json& object, const char* key);

// Sends `request` through `transport`, parses the body with `parse`, fills latency and attempts;
// every LlmError that escapes is redacted with the config's key.
ChatReply exchange(HttpTransport& transport, const HttpRequest& request, const LlmConfig& config,
                   const std::function<ChatReply(const HttpResponse&)>& parse);

}  // namespace egg::llm::wire
