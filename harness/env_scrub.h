// The environment a candidate runs in: the parent's, minus anything that could be a credential.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace egg::harness {

// True for variables a candidate must not see: names containing KEY, TOKEN, SECRET, PASSWORD or
// CREDENTIAL (any case), or starting with OPENAI_, ANTHROPIC_ or EGG_LLM_.
bool is_secret_env_name(std::string_view name);

// `environ` without the secret variables.
std::map<std::string, std::string> scrubbed_environment();

// `env` without the secret variables.
std::map<std::string, std::string> scrub(const std::map<std::string, std::string>& env);

}  // namespace egg::harness
