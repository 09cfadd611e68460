// The environment every child of EGG starts from: an allowlist of the parent's, never a denylist.
//
// op.py (the frontend), the baselines, nvcc, ncu, egg-harness and the candidates it loads all get
// these variables of the parent and nothing else (docs/ARCHITECTURE.md says why each one):
//
//   PATH HOME TMPDIR LANG LANGUAGE LC_*        finding tools, caches (~/.triton), temp files,
//   locale CUDA_* NVIDIA_*                            CUDA_VISIBLE_DEVICES, CUDA_HOME, the
//   container's driver LD_LIBRARY_PATH LIBRARY_PATH CPATH         the loader's and compilers'
//   search paths (libcuda and
//                                              cuDNN outside the default paths, module systems)
//   EGG_GPU_LOCK EGG_GPU_MEM_LOCK              settings egg-harness, the reference server and
//   EGG_REF_CACHE_MB EGG_HARNESS_HOLD          egg_bench read
//   EGG_COMPUTE_SANITIZER EGG_HARNESS_UNDER_SANITIZER
//   the names in EGG_PASS_ENV                  comma-, colon- or space-separated; NAME_* is a
//   prefix
//
// Names are case-sensitive (`path` is not PATH). The caller adds what the child needs on top, e.g.
// the PYTHONPATH of the frontend (ProcessSpec::env_set).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace egg {

using Environment = std::map<std::string, std::string>;

// The patterns of EGG_PASS_ENV's value (empty entries dropped).
std::vector<std::string> pass_env_patterns(std::string_view egg_pass_env);

// True when a variable named `name` reaches children, given EGG_PASS_ENV's patterns.
bool passes_to_child(std::string_view name, const std::vector<std::string>& pass_env);

// `parent` reduced to the allowlist (EGG_PASS_ENV read from `parent` itself).
Environment child_environment(const Environment& parent);

// This process's environment reduced to the allowlist.
Environment child_environment();

}  // namespace egg
