// A ChatClient decorator that writes every exchange, failed ones included, to a transcript.
#pragma once

#include <string>

#include "llm/chat.h"
#include "llm/transcript.h"

namespace egg::llm {

// Forwards to another client and records each exchange; errors are recorded, then rethrown.
class RecordingClient : public ChatClient {
 public:
  // Wraps `inner` (not owned), writing to `writer` (not owned) as `backend` with default `model`.
  RecordingClient(ChatClient& inner, TranscriptWriter& writer, std::string backend,
                  std::string model);
  // Forwards `request`, records the outcome, and returns the reply.
  ChatReply complete(const ChatRequest& request) override;

 private:
  ChatClient& inner_;
  TranscriptWriter& writer_;
  std::string backend_;
  std::string model_;
};

}  // namespace egg::llm
