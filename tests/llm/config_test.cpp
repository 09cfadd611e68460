#include "llm/config.h"

#include <gtest/gtest.h>

#include <map>

#include "llm/errors.h"

namespace egg::llm {
namespace {

EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Config, VendorDefaultsAndKeyPrecedence) {
  const auto o = load_config(WireFormat::openai, "gpt-x", env({{"OPENAI_API_KEY", "sk-o"}}));
  EXPECT_EQ(o.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(o.api_key, "sk-o");
  EXPECT_EQ(o.key_source, "OPENAI_API_KEY");
  const auto a = load_config(WireFormat::anthropic, "claude",
                             env({{"ANTHROPIC_API_KEY", "sk-a"},
                                  {"EGG_LLM_API_KEY", "sk-egg"},
                                  {"EGG_LLM_BASE_URL", "https://proxy.example/anthropic/"}}));
  EXPECT_EQ(a.base_url, "https://proxy.example/anthropic");
  EXPECT_EQ(a.api_key, "sk-egg");
  EXPECT_EQ(a.key_source, "EGG_LLM_API_KEY");
  // The other vendor's variable is not used.
  EXPECT_THROW(load_config(WireFormat::anthropic, "c", env({{"OPENAI_API_KEY", "sk-o"}})),
               LlmError);
}

TEST(Config, MissingKeyNamesTheVariables) {
  try {
    load_config(WireFormat::anthropic, "claude", env({}));
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::auth);
    EXPECT_NE(e.message().find("EGG_LLM_API_KEY"), std::string::npos);
    EXPECT_NE(e.message().find("ANTHROPIC_API_KEY"), std::string::npos);
  }
}

TEST(Config, LoopbackServersNeedNoKey) {
  const auto c = load_config(WireFormat::openai, "qwen",
                             env({{"EGG_LLM_BASE_URL", "http://127.0.0.1:8000/v1"}}));
  EXPECT_TRUE(c.api_key.empty());
  EXPECT_TRUE(is_loopback_url("http://localhost:11434/v1"));
  EXPECT_TRUE(is_loopback_url("http://[::1]:8080"));
  EXPECT_FALSE(is_loopback_url("http://127.0.0.1.evil.example/v1"));
  EXPECT_FALSE(is_loopback_url("https://api.openai.com/v1"));
}

TEST(Config, RejectsBadValues) {
  EXPECT_THROW(load_config(WireFormat::openai, "m", env({{"EGG_LLM_BASE_URL", "api.openai.com"}})),
               LlmError);
  EXPECT_THROW(load_config(WireFormat::openai, "m",
                           env({{"EGG_LLM_API_KEY", "k"}, {"EGG_LLM_TIMEOUT", "ten"}})),
               LlmError);
  EXPECT_THROW(parse_wire_format("gemini"), LlmError);
}

TEST(Config, RedactsEveryOccurrence) {
  LlmConfig c;
  c.api_key = "sk-123";
  EXPECT_EQ(c.redact("a sk-123 b sk-123sk-123"), "a [redacted] b [redacted][redacted]");
  c.api_key.clear();
  EXPECT_EQ(c.redact("unchanged"), "unchanged");
}

}  // namespace
}  // namespace egg::llm
