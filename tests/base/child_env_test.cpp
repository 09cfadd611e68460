// The allowlist every child of EGG starts from (base/child_env.h).
#include "base/child_env.h"

#include <gtest/gtest.h>

namespace egg {
namespace {

TEST(ChildEnv, OnlyTheAllowlistPasses) {
  const Environment parent = {{"PATH", "/usr/bin"},
                              {"HOME", "/home/u"},
                              {"LANG", "C.UTF-8"},
                              {"LC_ALL", "C"},
                              {"TMPDIR", "/tmp/x"},
                              {"CUDA_VISIBLE_DEVICES", "1"},
                              {"NVIDIA_VISIBLE_DEVICES", "all"},
                              {"LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"},
                              {"EGG_GPU_LOCK", "/tmp/l"},
                              {"EGG_GPU_MEM_LOCK", "/tmp/m"},
                              {"EGG_REF_CACHE_MB", "64"},
                              {"EGG_HARNESS_HOLD", "off"},
                              {"EGG_COMPUTE_SANITIZER", "/cs"},
                              {"EGG_HARNESS_UNDER_SANITIZER", "1"},
                              // What a denylist of *KEY*/*TOKEN*/*PASSWORD* names lets through, or
                              // catches only in one case:
                              {"DATABASE_URL", "postgres://u:pw@db"},
                              {"github_token", "ghp_x"},
                              {"AWS_SESSION", "s"},
                              {"OPENAI_API_KEY", "sk-1"},
                              {"DB_PASSWORD", "p"},
                              {"EGG_LLM_API_KEY", "sk-2"},
                              {"EGG_REMOTE_CACHE_TOKEN", "t"},
                              {"PYTHONPATH", "/user/site"},
                              {"LD_PRELOAD", "/evil.so"},
                              {"path", "/lowercase"},
                              {"EGG_CACHE_DIR", "/c"}};
  const Environment child = child_environment(parent);
  for (const char* name : {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "CUDA_VISIBLE_DEVICES",
                           "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "EGG_GPU_LOCK",
                           "EGG_GPU_MEM_LOCK", "EGG_REF_CACHE_MB", "EGG_HARNESS_HOLD",
                           "EGG_COMPUTE_SANITIZER", "EGG_HARNESS_UNDER_SANITIZER"})
    EXPECT_EQ(child.count(name), 1u) << name << " must reach children";
  for (const char* name : {"DATABASE_URL", "github_token", "AWS_SESSION", "OPENAI_API_KEY",
                           "DB_PASSWORD", "EGG_LLM_API_KEY", "EGG_REMOTE_CACHE_TOKEN", "PYTHONPATH",
                           "LD_PRELOAD", "path", "EGG_CACHE_DIR"})
    EXPECT_EQ(child.count(name), 0u) << name << " leaked";
  EXPECT_EQ(child.at("PATH"), "/usr/bin");
}

TEST(ChildEnv, EggPassEnvAddsNamesAndPrefixes) {
  const Environment parent = {{"EGG_PASS_ENV", "OMP_NUM_THREADS, TORCHINDUCTOR_*:MY_FLAG *"},
                              {"OMP_NUM_THREADS", "4"},
                              {"TORCHINDUCTOR_CACHE_DIR", "/c"},
                              {"MY_FLAG", "1"},
                              {"MY_FLAG2", "no"},
                              {"SECRET", "no"}};
  const Environment child = child_environment(parent);
  EXPECT_EQ(child.count("OMP_NUM_THREADS"), 1u);
  EXPECT_EQ(child.count("TORCHINDUCTOR_CACHE_DIR"), 1u);
  EXPECT_EQ(child.count("MY_FLAG"), 1u);
  EXPECT_EQ(child.count("MY_FLAG2"), 0u) << "a name is exact; only NAME_* is a prefix";
  EXPECT_EQ(child.count("SECRET"), 0u) << "a lone * passes nothing";
  EXPECT_EQ(child.count("EGG_PASS_ENV"), 0u);
}

TEST(ChildEnv, PassEnvPatterns) {
  EXPECT_EQ(pass_env_patterns(""), std::vector<std::string>{});
  EXPECT_EQ(pass_env_patterns(" A,,B:C\tD "), (std::vector<std::string>{"A", "B", "C", "D"}));
}

}  // namespace
}  // namespace egg
