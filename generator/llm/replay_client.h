// The replay backend: answers from a recorded transcript, with no network.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "llm/chat.h"
#include "llm/transcript.h"

namespace egg::llm {

// ChatClient that returns the recorded replies in order; a recorded failure is thrown again.
// Throws LlmError(replay_diverged) when a request differs from the recorded one (by
// request_hash) or the transcript runs out, saying where and how.
class ReplayClient : public ChatClient {
 public:
  // Replays `exchanges`, named `source` in error messages.
  explicit ReplayClient(std::vector<Exchange> exchanges, std::string source = "transcript");
  // Replays the transcript file at `path`.
  static ReplayClient from_file(const std::string& path);
  // Returns the next recorded reply for `request`.
  ChatReply complete(const ChatRequest& request) override;
  // Recorded exchanges not yet replayed (a complete replay leaves 0).
  std::size_t remaining() const { return exchanges_.size() - next_; }

 private:
  std::vector<Exchange> exchanges_;
  std::string source_;
  std::size_t next_ = 0;
};

}  // namespace egg::llm
