#include "base/child_env.h"

extern char** environ;

namespace egg {
namespace {

constexpr std::string_view kNames[] = {
    "PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH",
    // What egg-harness, the reference server and egg_bench read (docs/CMAKE.md).
    "EGG_GPU_LOCK", "EGG_GPU_MEM_LOCK", "EGG_REF_CACHE_MB", "EGG_HARNESS_HOLD",
    "EGG_COMPUTE_SANITIZER", "EGG_HARNESS_UNDER_SANITIZER"};
constexpr std::string_view kPrefixes[] = {"LC_", "CUDA_", "NVIDIA_"};

bool matches(std::string_view name, std::string_view pattern) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.substr(0, pattern.size() - 1) == pattern.substr(0, pattern.size() - 1);
  return name == pattern;
}

}  // namespace

std::vector<std::string> pass_env_patterns(std::string_view value) {
  std::vector<std::string> out;
  std::string current;
  for (char c : std::string(value) + ",") {
    if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n') {
      if (!current.empty() && current != "*") out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  return out;
}

bool passes_to_child(std::string_view name, const std::vector<std::string>& pass_env) {
  for (auto n : kNames)
    if (name == n) return true;
  for (auto p : kPrefixes)
    if (name.substr(0, p.size()) == p) return true;
  for (const auto& p : pass_env)
    if (matches(name, p)) return true;
  return false;
}

Environment child_environment(const Environment& parent) {
  const auto it = parent.find("EGG_PASS_ENV");
  const auto pass = pass_env_patterns(it == parent.end() ? "" : it->second);
  Environment out;
  for (const auto& [k, v] : parent)
    if (passes_to_child(k, pass)) out.emplace(k, v);
  return out;
}

Environment child_environment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return child_environment(env);
}

}  // namespace egg
