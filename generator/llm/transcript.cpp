#include "llm/transcript.h"

#include <cstdint>
#include <cstdio>

namespace egg::llm {
namespace {

using nlohmann::json;

void hash_bytes(std::uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
}

// Length-prefixed, so ("ab","c") and ("a","bc") differ.
void hash_field(std::uint64_t& h, std::string_view field) {
  hash_bytes(h, std::to_string(field.size()));
  hash_bytes(h, ":");
  hash_bytes(h, field);
}

FinishReason parse_finish(const std::string& name) {
  if (name == "length") return FinishReason::length;
  if (name == "refusal") return FinishReason::refusal;
  if (name == "other") return FinishReason::other;
  return FinishReason::stop;
}

}  // namespace

std::string request_hash(const ChatRequest& request) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  hash_field(h, request.system);
  hash_field(h, std::to_string(request.messages.size()));
  for (const auto& m : request.messages) {
    hash_field(h, m.role);
    hash_field(h, m.content);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex;
}

Exchange make_exchange(const ChatRequest& request, const std::string& backend,
                       const std::string& model, const ChatReply* reply, const LlmError* error) {
  Exchange e;
  e.stage = request.stage;
  e.agent = request.agent;
  e.attempt = request.attempt;
  e.backend = backend;
  e.model = request.model.empty() ? model : request.model;
  e.system = request.system;
  e.messages = request.messages;
  e.max_tokens = request.max_tokens;
  e.temperature = request.temperature;
  e.request_hash = request_hash(request);
  if (reply) e.reply = *reply;
  if (error) {
    e.error_kind = error->kind();
    e.error_message = error->message();
  }
  return e;
}

json exchange_to_json(const Exchange& e) {
  json messages = json::array();
  for (const auto& m : e.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json line = {
      {"v", 1},
      {"stage", e.stage},
      {"agent", e.agent},
      {"attempt", e.attempt},
      {"backend", e.backend},
      {"model", e.model},
      {"request",
       {{"system", e.system},
        {"messages", messages},
        {"max_tokens", e.max_tokens},
        {"temperature", e.temperature},
        {"hash", e.request_hash}}},
      {"reply",
       {{"text", e.reply.text},
        {"finish_reason", e.reply.finish_reason},
        {"finish", finish_name(e.reply.finish)},
        {"model", e.reply.model}}},
      {"tokens_in", e.reply.tokens_in},
      {"tokens_out", e.reply.tokens_out},
      {"latency_ms", e.reply.latency_ms},
      {"attempts", e.reply.attempts},
      {"error", nullptr},
  };
  if (e.error_kind) {
    line["error"] = {{"kind", std::string(kind_name(*e.error_kind))}, {"message", e.error_message}};
  }
  return line;
}

Exchange exchange_from_json(const json& line) {
  const auto need = [&](const json& object, const char* key) -> const json& {
    if (!object.is_object() || !object.contains(key)) {
      throw LlmError(LlmErrorKind::config, std::string("missing field '") + key + "'");
    }
    return object.at(key);
  };
  if (need(line, "v").get<int>() != 1) {
    throw LlmError(LlmErrorKind::config, "unsupported transcript version " + line["v"].dump());
  }
  Exchange e;
  e.stage = need(line, "stage").get<std::string>();
  e.agent = need(line, "agent").get<std::string>();
  e.attempt = need(line, "attempt").get<int>();
  e.backend = need(line, "backend").get<std::string>();
  e.model = need(line, "model").get<std::string>();
  const json& request = need(line, "request");
  e.system = need(request, "system").get<std::string>();
  for (const auto& m : need(request, "messages")) {
    e.messages.push_back(
        {need(m, "role").get<std::string>(), need(m, "content").get<std::string>()});
  }
  e.max_tokens = request.value("max_tokens", 0);
  e.temperature = request.value("temperature", 0.0);
  e.request_hash = need(request, "hash").get<std::string>();
  const json& reply = need(line, "reply");
  e.reply.text = need(reply, "text").get<std::string>();
  e.reply.finish_reason = reply.value("finish_reason", "");
  e.reply.finish = parse_finish(reply.value("finish", "stop"));
  e.reply.model = reply.value("model", "");
  e.reply.tokens_in = line.value("tokens_in", std::int64_t{0});
  e.reply.tokens_out = line.value("tokens_out", std::int64_t{0});
  e.reply.latency_ms = line.value("latency_ms", std::int64_t{0});
  e.reply.attempts = line.value("attempts", 1);
  if (line.contains("error") && line["error"].is_object()) {
    LlmErrorKind kind{};
    const std::string name = need(line["error"], "kind").get<std::string>();
    if (!parse_kind(name, kind)) throw LlmError(LlmErrorKind::config, "unknown error kind " + name);
    e.error_kind = kind;
    e.error_message = line["error"].value("message", "");
  }
  return e;
}

TranscriptWriter::TranscriptWriter(const std::string& path, bool append,
                                   std::function<std::string(std::string)> redact)
    : path_(path),
      out_(path, append ? std::ios::app | std::ios::binary : std::ios::trunc | std::ios::binary),
      redact_(std::move(redact)) {
  if (!out_)
    throw LlmError(LlmErrorKind::config, "cannot open transcript " + path_ + " for writing");
}

void TranscriptWriter::write(const Exchange& exchange) {
  // Invalid UTF-8 from a server is replaced rather than failing the whole generation.
  std::string line =
      exchange_to_json(exchange).dump(-1, ' ', false, json::error_handler_t::replace);
  if (redact_) line = redact_(std::move(line));
  out_ << line << '\n';
  out_.flush();
  if (!out_) throw LlmError(LlmErrorKind::config, "cannot write transcript " + path_);
}

std::vector<Exchange> read_transcript(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LlmError(LlmErrorKind::config, "cannot read transcript " + path);
  std::vector<Exchange> exchanges;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.empty()) continue;
    try {
      exchanges.push_back(exchange_from_json(json::parse(text)));
    } catch (const json::exception& error) {
      throw LlmError(LlmErrorKind::config, path + ":" + std::to_string(number) +
                                               ": bad transcript line: " + error.what());
    } catch (const LlmError& error) {
      throw LlmError(LlmErrorKind::config, path + ":" + std::to_string(number) +
                                               ": bad transcript line: " + error.message());
    }
  }
  return exchanges;
}

}  // namespace egg::llm
