// Configuration of the network backends, read from the environment.
//
//   EGG_LLM_BASE_URL   base URL (default: https://api.openai.com/v1, https://api.anthropic.com)
//   EGG_LLM_API_KEY    the key; else OPENAI_API_KEY (openai) or ANTHROPIC_API_KEY (anthropic)
//   EGG_LLM_PROXY      an HTTP(S) proxy; http_proxy/https_proxy are deliberately ignored
//   EGG_LLM_TIMEOUT    total seconds per HTTP exchange (default 300)
//   EGG_LLM_MAX_ATTEMPTS  HTTP tries per request (default 5)
// A key is required unless the base URL's host is loopback (a local vLLM/llama.cpp/Ollama).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "llm/retry.h"

namespace egg::llm {

// The network wire formats.
enum class WireFormat { openai, anthropic };

// Reads one environment variable; nullopt when unset (tests pass a map instead of getenv).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment.
EnvLookup process_env();

// Everything a network client needs.
struct LlmConfig {
  WireFormat wire = WireFormat::openai;  // which API
  std::string model;                     // default model for requests
  std::string base_url;                  // without a trailing slash
  std::string api_key;                   // empty only for loopback hosts
  std::string key_source;                // the variable the key came from
  std::optional<std::string> proxy;      // EGG_LLM_PROXY
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};  // TCP+TLS setup
  std::chrono::milliseconds total_timeout{std::chrono::seconds(300)};   // per HTTP try
  std::size_t max_response_bytes = 8u << 20;                            // response size cap
  RetryPolicy retry;                                                    // HTTP retry rules

  // Returns `text` with every occurrence of the key replaced by "[redacted]".
  std::string redact(std::string text) const;
};

// Parses "openai" / "anthropic"; throws LlmError(config) naming the valid values otherwise.
WireFormat parse_wire_format(const std::string& name);

// The name of `wire` ("openai", "anthropic").
const char* wire_name(WireFormat wire);

// Builds the config for `wire` and `model` from `env`; throws LlmError(auth) when no key is set
// (naming the variables to set) and LlmError(config) for a bad base URL or number.
LlmConfig load_config(WireFormat wire, const std::string& model,
                      const EnvLookup& env = process_env());

// True when `url`'s host is 127.0.0.0/8, ::1 or localhost.
bool is_loopback_url(const std::string& url);

// Replaces every occurrence of `secret` in `text` with "[redacted]"; no-op for an empty secret.
std::string redact_secret(std::string text, const std::string& secret);

}  // namespace egg::llm
