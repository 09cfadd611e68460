#include "llm/errors.h"

#include <array>
#include <utility>

namespace egg::llm {
namespace {

constexpr std::array<std::pair<LlmErrorKind, std::string_view>, 14> kNames{{
    {LlmErrorKind::timeout, "timeout"},
    {LlmErrorKind::rate_limited, "rate_limited"},
    {LlmErrorKind::server_error, "server_error"},
    {LlmErrorKind::auth, "auth"},
    {LlmErrorKind::bad_request, "bad_request"},
    {LlmErrorKind::not_found, "not_found"},
    {LlmErrorKind::malformed_response, "malformed_response"},
    {LlmErrorKind::truncated, "truncated"},
    {LlmErrorKind::refusal, "refusal"},
    {LlmErrorKind::no_code, "no_code"},
    {LlmErrorKind::too_large, "too_large"},
    {LlmErrorKind::connection, "connection"},
    {LlmErrorKind::config, "config"},
    {LlmErrorKind::replay_diverged, "replay_diverged"},
}};

}  // namespace

std::string_view kind_name(LlmErrorKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

bool parse_kind(std::string_view name, LlmErrorKind& kind) {
  for (const auto& [k, n] : kNames) {
    if (n == name) {
      kind = k;
      return true;
    }
  }
  return false;
}

bool is_transient(LlmErrorKind kind) {
  return kind == LlmErrorKind::timeout || kind == LlmErrorKind::connection ||
         kind == LlmErrorKind::rate_limited || kind == LlmErrorKind::server_error;
}

LlmError::LlmError(LlmErrorKind kind, const std::string& message)
    : std::runtime_error("llm " + std::string(kind_name(kind)) + ": " + message),
      kind_(kind),
      message_(message) {}

}  // namespace egg::llm
