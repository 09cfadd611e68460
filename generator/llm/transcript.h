// Transcripts: every LLM exchange of a generation, one JSON object per line (JSONL).
//
// Line grammar (version 1; unknown fields are ignored when read):
//   {"v":1, "stage":S, "agent":S, "attempt":N, "backend":S, "model":S,
//    "request":{"system":S, "messages":[{"role":S,"content":S}...], "max_tokens":N,
//               "temperature":F, "hash":"fnv1a64:<16 hex>"},
//    "reply":{"text":S, "finish_reason":S, "finish":"stop|length|refusal|other", "model":S},
//    "tokens_in":N, "tokens_out":N, "latency_ms":N, "attempts":N,
//    "error":null | {"kind":"<LlmErrorKind name>", "message":S}}
// A line never holds a key or an HTTP header: the writer knows none, and redacts the key anyway.
#pragma once

#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/chat.h"
#include "llm/errors.h"

namespace egg::llm {

// One recorded exchange.
struct Exchange {
  std::string stage;                       // e.g. "stage1"
  std::string agent;                       // e.g. "code"
  int attempt = 0;                         // attempt number inside the stage
  std::string backend;                     // "openai", "anthropic", ...
  std::string model;                       // the model asked
  std::string system;                      // request system prompt
  std::vector<ChatMessage> messages;       // request conversation
  int max_tokens = 0;                      // request answer limit
  double temperature = 0;                  // request temperature
  std::string request_hash;                // request_hash() of the request
  ChatReply reply;                         // the answer (empty when error is set)
  std::optional<LlmErrorKind> error_kind;  // set when the exchange failed
  std::string error_message;               // its message (redacted)
};

// A stable hash of the request's system prompt and messages: "fnv1a64:<16 hex digits>".
std::string request_hash(const ChatRequest& request);

// The exchange record of `request` answered by `reply` (or failed with `error`).
Exchange make_exchange(const ChatRequest& request, const std::string& backend,
                       const std::string& model, const ChatReply* reply, const LlmError* error);

// The JSON object of one line.
nlohmann::json exchange_to_json(const Exchange& exchange);

// Parses one line's object; throws LlmError(config) naming the missing field.
Exchange exchange_from_json(const nlohmann::json& object);

// Appends exchanges to a JSONL file, one flushed line each.
class TranscriptWriter {
 public:
  // Opens `path` (truncated unless `append`); `redact` is applied to every line written.
  explicit TranscriptWriter(const std::string& path, bool append = false,
                            std::function<std::string(std::string)> redact = {});
  // Writes one line; throws LlmError(config) when the file can't be written.
  void write(const Exchange& exchange);

 private:
  std::string path_;
  std::ofstream out_;
  std::function<std::string(std::string)> redact_;
};

// Reads a whole transcript; throws LlmError(config) naming the file and line of a bad line.
std::vector<Exchange> read_transcript(const std::string& path);

}  // namespace egg::llm
