// The OpenAI Chat Completions client: POST <base>/chat/completions with a bearer key.
// Works with OpenAI and the OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama).
#pragma once

#include <nlohmann/json.hpp>

#include "llm/chat.h"
#include "llm/config.h"
#include "llm/http_client.h"

namespace egg::llm {

// ChatClient speaking Chat Completions.
class OpenAiClient : public ChatClient {
 public:
  // Uses `transport` (not owned; usually a RetryingTransport) with `config`.
  OpenAiClient(LlmConfig config, HttpTransport& transport);
  // Sends one Chat Completions request.
  ChatReply complete(const ChatRequest& request) override;

  // The HTTP request for `request` (exposed for tests).
  HttpRequest build_request(const ChatRequest& request) const;
  // Parses a 2xx Chat Completions body; throws LlmError(malformed_response).
  static ChatReply parse_reply(const HttpResponse& response);

 private:
  LlmConfig config_;
  HttpTransport& transport_;
};

}  // namespace egg::llm
