// Builds a ready network ChatClient (libcurl + retries + wire format) from an LlmConfig.
#pragma once

#include <memory>

#include "llm/chat.h"
#include "llm/config.h"
#include "llm/retry.h"

namespace egg::llm {

// Makes the OpenAI or Anthropic client for `config`, owning its CurlTransport and
// RetryingTransport; `sleeper` and `clock` must outlive it.
std::unique_ptr<ChatClient> make_network_client(const LlmConfig& config,
                                                Sleeper& sleeper = system_sleeper(),
                                                Clock& clock = system_clock());

}  // namespace egg::llm
