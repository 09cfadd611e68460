#include "llm/client_factory.h"

#include "llm/anthropic_client.h"
#include "llm/http_client.h"
#include "llm/openai_client.h"

namespace egg::llm {
namespace {

// Owns the transport stack and the wire client that uses it.
class NetworkClient : public ChatClient {
 public:
  NetworkClient(const LlmConfig& config, Sleeper& sleeper, Clock& clock)
      : curl_(CurlOptions{config.max_response_bytes, config.proxy, {}}),
        retrying_(curl_, config.retry, sleeper, clock) {
    if (config.wire == WireFormat::openai) {
      client_ = std::make_unique<OpenAiClient>(config, retrying_);
    } else {
      client_ = std::make_unique<AnthropicClient>(config, retrying_);
    }
  }
  ChatReply complete(const ChatRequest& request) override { return client_->complete(request); }

 private:
  CurlTransport curl_;
  RetryingTransport retrying_;
  std::unique_ptr<ChatClient> client_;
};

}  // namespace

std::unique_ptr<ChatClient> make_network_client(const LlmConfig& config, Sleeper& sleeper,
                                                Clock& clock) {
  return std::make_unique<NetworkClient>(config, sleeper, clock);
}

}  // namespace egg::llm
