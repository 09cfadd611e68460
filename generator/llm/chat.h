// The chat interface every LLM backend implements: one request in, one reply out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace egg::llm {

// One turn of the conversation.
struct ChatMessage {
  std::string role;     // "user" or "assistant"
  std::string content;  // plain text
};

// Why the model stopped, normalized across wire formats.
enum class FinishReason {
  stop,     // finished normally (OpenAI "stop", Anthropic "end_turn"/"stop_sequence")
  length,   // hit max_tokens: the answer is truncated
  refusal,  // declined (Anthropic "refusal", OpenAI "content_filter" or message.refusal)
  other,    // anything else (tool calls, unknown values)
};

// What to ask; stage/agent/attempt label the exchange in the transcript and are never sent.
struct ChatRequest {
  std::string model;                  // e.g. "gpt-5.1"; empty = the configured model
  std::string system;                 // system prompt
  std::vector<ChatMessage> messages;  // the conversation, oldest first
  int max_tokens = 8192;              // answer length limit
  double temperature = 0.2;           // sampling temperature; < 0 = leave to the server
  std::string stage;                  // transcript label, e.g. "stage1"
  std::string agent;                  // transcript label, e.g. "code", "debug", "profile"
  int attempt = 0;                    // transcript label: attempt number inside the stage
};

// What came back.
struct ChatReply {
  std::string text;                          // the answer text (all text parts joined)
  std::int64_t tokens_in = 0;                // prompt tokens as billed by the server
  std::int64_t tokens_out = 0;               // completion tokens as billed by the server
  std::int64_t latency_ms = 0;               // wall time of the exchange, retries included
  std::string finish_reason;                 // the server's raw value ("stop", "end_turn", ...)
  FinishReason finish = FinishReason::stop;  // normalized finish_reason
  int attempts = 1;                          // HTTP tries it took
  std::string model;                         // the model that answered, as the server says
};

// A backend that answers chat requests; throws LlmError on failure, never crashes the caller.
class ChatClient {
 public:
  virtual ~ChatClient() = default;
  // Sends `request` and returns the model's answer.
  virtual ChatReply complete(const ChatRequest& request) = 0;
};

// The stable name of `reason` ("stop", "length", "refusal", "other").
inline const char* finish_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::stop:
      return "stop";
    case FinishReason::length:
      return "length";
    case FinishReason::refusal:
      return "refusal";
    case FinishReason::other:
      break;
  }
  return "other";
}

}  // namespace egg::llm
