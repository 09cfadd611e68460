// The Anthropic Messages client: POST <base>/v1/messages with x-api-key and anthropic-version.
#pragma once

#include "llm/chat.h"
#include "llm/config.h"
#include "llm/http_client.h"

namespace egg::llm {

// The anthropic-version header value sent.
inline constexpr const char* kAnthropicVersion = "2023-06-01";

// ChatClient speaking the Messages API.
class AnthropicClient : public ChatClient {
 public:
  // Uses `transport` (not owned; usually a RetryingTransport) with `config`.
  AnthropicClient(LlmConfig config, HttpTransport& transport);
  // Sends one Messages request.
  ChatReply complete(const ChatRequest& request) override;

  // The HTTP request for `request` (exposed for tests).
  HttpRequest build_request(const ChatRequest& request) const;
  // Parses a 2xx Messages body; throws LlmError(malformed_response).
  static ChatReply parse_reply(const HttpResponse& response);

 private:
  LlmConfig config_;
  HttpTransport& transport_;
};

}  // namespace egg::llm
