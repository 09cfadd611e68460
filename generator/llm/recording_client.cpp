#include "llm/recording_client.h"

#include "llm/errors.h"

namespace egg::llm {

RecordingClient::RecordingClient(ChatClient& inner, TranscriptWriter& writer, std::string backend,
                                 std::string model)
    : inner_(inner), writer_(writer), backend_(std::move(backend)), model_(std::move(model)) {}

ChatReply RecordingClient::complete(const ChatRequest& request) {
  ChatReply reply;
  try {
    reply = inner_.complete(request);
  } catch (const LlmError& error) {
    writer_.write(make_exchange(request, backend_, model_, nullptr, &error));
    throw;
  }
  writer_.write(make_exchange(request, backend_, model_, &reply, nullptr));
  return reply;
}

}  // namespace egg::llm
