#include "env_scrub.h"

#include <algorithm>
#include <cctype>

extern char** environ;

namespace egg::harness {

bool is_secret_env_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"})
    if (upper.find(word) != std::string::npos) return true;
  for (const char* prefix : {"OPENAI_", "ANTHROPIC_", "EGG_LLM_"})
    if (upper.rfind(prefix, 0) == 0) return true;
  return false;
}

std::map<std::string, std::string> scrub(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : env)
    if (!is_secret_env_name(k)) out.emplace(k, v);
  return out;
}

std::map<std::string, std::string> scrubbed_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return scrub(env);
}

}  // namespace egg::harness
