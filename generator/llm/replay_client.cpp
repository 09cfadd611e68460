#include "llm/replay_client.h"

#include <algorithm>

#include "llm/errors.h"

namespace egg::llm {
namespace {

std::string label(const std::string& stage, const std::string& agent, int attempt) {
  return stage + "/" + agent + " attempt " + std::to_string(attempt);
}

std::string excerpt(const std::string& text, size_t at) {
  const size_t from = at > 30 ? at - 30 : 0;
  std::string s = text.substr(from, 80);
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return "'" + s + "'";
}

// Where `now` first differs from `then`, in words.
std::string first_difference(const std::string& what, const std::string& then,
                             const std::string& now) {
  const auto mismatch = std::mismatch(then.begin(), then.end(), now.begin(), now.end());
  const size_t at = static_cast<size_t>(mismatch.first - then.begin());
  return what + " differs at character " + std::to_string(at) + ": recorded " + excerpt(then, at) +
         ", now " + excerpt(now, at);
}

std::string describe_divergence(const Exchange& recorded, const ChatRequest& request) {
  if (recorded.system != request.system) {
    return first_difference("the system prompt", recorded.system, request.system);
  }
  if (recorded.messages.size() != request.messages.size()) {
    return "recorded " + std::to_string(recorded.messages.size()) + " messages, now " +
           std::to_string(request.messages.size());
  }
  for (size_t i = 0; i < recorded.messages.size(); ++i) {
    const auto& then = recorded.messages[i];
    const auto& now = request.messages[i];
    if (then.role != now.role) {
      return "message " + std::to_string(i) + " role: recorded " + then.role + ", now " + now.role;
    }
    if (then.content != now.content) {
      return first_difference("message " + std::to_string(i) + " (" + now.role + ")", then.content,
                              now.content);
    }
  }
  return "the recorded hash does not match its own messages (edited transcript?)";
}

}  // namespace

ReplayClient::ReplayClient(std::vector<Exchange> exchanges, std::string source)
    : exchanges_(std::move(exchanges)), source_(std::move(source)) {}

ReplayClient ReplayClient::from_file(const std::string& path) {
  return ReplayClient(read_transcript(path), path);
}

ChatReply ReplayClient::complete(const ChatRequest& request) {
  const std::string now = label(request.stage, request.agent, request.attempt);
  if (next_ >= exchanges_.size()) {
    throw LlmError(LlmErrorKind::replay_diverged,
                   source_ + " has only " + std::to_string(exchanges_.size()) +
                       " exchanges; the run asked for one more (" + now +
                       "); regenerate with a network backend to record a new transcript");
  }
  const Exchange& recorded = exchanges_[next_];
  if (recorded.request_hash != request_hash(request)) {
    throw LlmError(LlmErrorKind::replay_diverged,
                   source_ + " exchange " + std::to_string(next_ + 1) + " (recorded " +
                       label(recorded.stage, recorded.agent, recorded.attempt) + ", now " + now +
                       "): the request differs: " + describe_divergence(recorded, request) +
                       "; prompts, templates or the spec changed since it was recorded");
  }
  ++next_;
  if (recorded.error_kind) throw LlmError(*recorded.error_kind, recorded.error_message);
  return recorded.reply;
}

}  // namespace egg::llm
