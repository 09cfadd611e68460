#include "llm/config.h"

#include <cstdlib>

#include "llm/errors.h"

namespace egg::llm {
namespace {

std::optional<std::string> nonempty(const EnvLookup& env, const std::string& name) {
  auto value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

long positive_number(const EnvLookup& env, const std::string& name, long fallback) {
  const auto value = nonempty(env, name);
  if (!value) return fallback;
  char* end = nullptr;
  const long n = std::strtol(value->c_str(), &end, 10);
  if (*end != '\0' || n <= 0) {
    throw LlmError(LlmErrorKind::config, name + "='" + *value + "' is not a positive whole number");
  }
  return n;
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

std::string redact_secret(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  static const std::string kMask = "[redacted]";
  for (size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
    text.replace(pos, secret.size(), kMask);
    pos += kMask.size();
  }
  return text;
}

std::string LlmConfig::redact(std::string text) const {
  return redact_secret(std::move(text), api_key);
}

WireFormat parse_wire_format(const std::string& name) {
  if (name == "openai") return WireFormat::openai;
  if (name == "anthropic") return WireFormat::anthropic;
  throw LlmError(LlmErrorKind::config,
                 "unknown LLM backend '" + name + "'; use openai or anthropic");
}

const char* wire_name(WireFormat wire) {
  return wire == WireFormat::openai ? "openai" : "anthropic";
}

bool is_loopback_url(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  std::string rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  std::string host;
  if (!rest.empty() && rest.front() == '[') {
    host = rest.substr(1, rest.find(']') - 1);
  } else {
    host = rest.substr(0, rest.find(':'));
  }
  const bool ipv4 = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
  return host == "localhost" || host == "::1" || (ipv4 && host.rfind("127.", 0) == 0);
}

LlmConfig load_config(WireFormat wire, const std::string& model, const EnvLookup& env) {
  LlmConfig config;
  config.wire = wire;
  config.model = model;
  const bool openai = wire == WireFormat::openai;
  config.base_url =
      nonempty(env, "EGG_LLM_BASE_URL")
          .value_or(openai ? "https://api.openai.com/v1" : "https://api.anthropic.com");
  while (!config.base_url.empty() && config.base_url.back() == '/') config.base_url.pop_back();
  if (config.base_url.rfind("http://", 0) != 0 && config.base_url.rfind("https://", 0) != 0) {
    throw LlmError(LlmErrorKind::config, "EGG_LLM_BASE_URL='" + config.base_url +
                                             "' must start with http:// or https://");
  }

  const std::string vendor_var = openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  if (auto key = nonempty(env, "EGG_LLM_API_KEY")) {
    config.api_key = *key;
    config.key_source = "EGG_LLM_API_KEY";
  } else if (auto vendor = nonempty(env, vendor_var)) {
    config.api_key = *vendor;
    config.key_source = vendor_var;
  } else if (!is_loopback_url(config.base_url)) {
    throw LlmError(LlmErrorKind::auth, std::string("no API key for the ") + wire_name(wire) +
                                           " backend; set EGG_LLM_API_KEY (or " + vendor_var +
                                           "), or use BACKEND builtin, which needs no key");
  }

  config.proxy = nonempty(env, "EGG_LLM_PROXY");
  config.total_timeout = std::chrono::seconds(positive_number(env, "EGG_LLM_TIMEOUT", 300));
  config.retry.max_attempts = static_cast<int>(positive_number(env, "EGG_LLM_MAX_ATTEMPTS", 5));
  return config;
}

}  // namespace egg::llm
