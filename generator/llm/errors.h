// Typed failures of the LLM client layer. The category doubles as a statistic (one counter per
// kind).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace egg::llm {

// What went wrong talking to a model; stable names, used as statistic keys and in transcripts.
enum class LlmErrorKind {
  timeout,             // connect or total time limit hit
  rate_limited,        // HTTP 429 after the retries (or a Retry-After beyond the limit)
  server_error,        // HTTP 5xx after the retries
  auth,                // HTTP 401/403, or no key configured
  bad_request,         // HTTP 400/422 and other final 4xx
  not_found,           // HTTP 404: wrong base URL or model
  malformed_response,  // a 2xx whose body is not the expected JSON
  truncated,           // the answer was cut (max tokens, or an unterminated code fence)
  refusal,             // the model declined
  no_code,             // the answer has no usable code block
  too_large,           // the response exceeded the size cap
  connection,          // could not connect, or the connection broke
  config,              // bad or missing configuration (base URL, backend)
  replay_diverged,     // a replayed run asked something the transcript did not record
};

// The stable lower-case name of `kind` ("rate_limited", ...).
std::string_view kind_name(LlmErrorKind kind);

// Parses a name written by kind_name; returns false when unknown.
bool parse_kind(std::string_view name, LlmErrorKind& kind);

// True for kinds worth another attempt at the HTTP level (timeout, connection, 429, 5xx).
bool is_transient(LlmErrorKind kind);

// A failure of the LLM layer; what() reads "llm <kind>: <message>" and never contains a key.
class LlmError : public std::runtime_error {
 public:
  // Makes an error of `kind` with a message that says what to check.
  LlmError(LlmErrorKind kind, const std::string& message);
  // The category.
  LlmErrorKind kind() const { return kind_; }
  // The message without the "llm <kind>: " prefix.
  const std::string& message() const { return message_; }

 private:
  LlmErrorKind kind_;
  std::string message_;
};

}  // namespace egg::llm
