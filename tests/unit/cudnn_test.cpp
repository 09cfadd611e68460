#include "toolchain/cudnn.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "util/error.h"
#include "util/files.h"

namespace egg::toolchain {
namespace {
namespace fs = std::filesystem;

// A fake CUDA toolkit: bin/nvcc, and cuDNN's header and library when `with_cudnn`.
fs::path fake_toolkit(const fs::path& root, bool with_cudnn, const char* lib_dir = "lib64",
                      const char* lib_name = "libcudnn.so") {
  fs::create_directories(root / "bin");
  std::ofstream(root / "bin" / "nvcc") << "#!/bin/sh\n";
  if (with_cudnn) {
    fs::create_directories(root / "include");
    fs::create_directories(root / lib_dir);
    std::ofstream(root / "include" / "cudnn.h") << "// cudnn\n";
    std::ofstream(root / lib_dir / lib_name) << "";
  }
  return root / "bin" / "nvcc";
}

// Unsets EGG_CUDNN_ROOT for the test and restores it after.
struct NoCudnnEnv {
  std::string saved;
  bool had = false;
  NoCudnnEnv() {
    if (const char* v = std::getenv("EGG_CUDNN_ROOT")) had = true, saved = v;
    unsetenv("EGG_CUDNN_ROOT");
  }
  ~NoCudnnEnv() {
    if (had) setenv("EGG_CUDNN_ROOT", saved.c_str(), 1);
  }
};

TEST(Cudnn, FoundBesideNvccOrUnderARoot) {
  NoCudnnEnv env;
  TempDir dir(fs::temp_directory_path(), "egg-cudnn-test");
  const fs::path nvcc = fake_toolkit(dir.path() / "cuda", true);
  auto found = find_cudnn("", nvcc);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->include_dir, fs::weakly_canonical(dir.path() / "cuda") / "include");
  EXPECT_EQ(found->library.filename(), "libcudnn.so");
  // PyTorch's wheel layout: lib/libcudnn.so.9, no unversioned name.
  fake_toolkit(dir.path() / "wheel", true, "lib", "libcudnn.so.9");
  auto wheel = cudnn_at(dir.path() / "wheel");
  ASSERT_TRUE(wheel.has_value());
  EXPECT_EQ(wheel->library.filename(), "libcudnn.so.9");
  auto explicit_root = find_cudnn((dir.path() / "wheel").string(), nvcc);
  ASSERT_TRUE(explicit_root.has_value());
  EXPECT_EQ(explicit_root->library, wheel->library);
  // Flags: the include folder to compile; the library (only where used) and its run path to link.
  EXPECT_EQ(cudnn_compile_flags(wheel),
            (std::vector<std::string>{"-I", wheel->include_dir.string()}));
  const auto link = cudnn_link_flags(wheel);
  ASSERT_EQ(link.size(), 8u);
  EXPECT_EQ(link[1], "--as-needed");
  EXPECT_EQ(link[3], wheel->library.string());
  EXPECT_EQ(link[7], "-rpath=" + wheel->library.parent_path().string());
}

TEST(Cudnn, NoneAbsentAndWrongRoots) {
  NoCudnnEnv env;
  TempDir dir(fs::temp_directory_path(), "egg-cudnn-test");
  const fs::path with = fake_toolkit(dir.path() / "cuda", true);
  const fs::path without = fake_toolkit(dir.path() / "bare", false);
  EXPECT_FALSE(find_cudnn("none", with).has_value());
  EXPECT_FALSE(find_cudnn("", without).has_value());
  EXPECT_TRUE(cudnn_compile_flags(std::nullopt).empty());
  EXPECT_TRUE(cudnn_link_flags(std::nullopt).empty());
  try {
    find_cudnn((dir.path() / "bare").string(), with);
    ADD_FAILURE() << "a root without cuDNN must be an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no cuDNN under"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("--cudnn none"), std::string::npos) << e.hint();
  }
  // $EGG_CUDNN_ROOT wins over the toolkit, and "none" there turns cuDNN off.
  fake_toolkit(dir.path() / "other", true, "lib", "libcudnn.so.9");
  setenv("EGG_CUDNN_ROOT", (dir.path() / "other").string().c_str(), 1);
  auto env_found = find_cudnn("", with);
  ASSERT_TRUE(env_found.has_value());
  EXPECT_EQ(env_found->library.filename(), "libcudnn.so.9");
  setenv("EGG_CUDNN_ROOT", "none", 1);
  EXPECT_FALSE(find_cudnn("", with).has_value());
}

}  // namespace
}  // namespace egg::toolchain
