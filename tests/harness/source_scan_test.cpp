#include "source_scan.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "runner.h"

using namespace egg;
using namespace egg::harness;
namespace fs = std::filesystem;

TEST(SourceScan, CleanCudaPasses) {
  const char* src = R"(#include <cuda_runtime.h>
// unlike torch::relu, this is plain CUDA; at::Tensor is not used
/* c10::Half */
__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
const char* s = "torch::x";
auto f = std::vector<int>{}.at(0);
cute::at::thing;
)";
  EXPECT_TRUE(scan_source_text(src).empty()) << describe(scan_source_text(src));
}

TEST(SourceScan, TorchIncludesAndNamespacesAreFound) {
  const char* src =
      "#include <ATen/ATen.h>\n"
      "#include \"torch/extension.h\"\n"
      "# include <c10/util/Half.h>\n"
      "void f() { auto t = at::relu(x); }\n"
      "void g() { torch :: empty({1}); }\n"
      "#include <Python.h>\n"
      "// #include <torch/torch.h> is fine in a comment\n";
  const auto f = scan_source_text(src);
  ASSERT_EQ(f.size(), 6u) << describe(f);
  EXPECT_EQ(f[0].line, 1);
  EXPECT_EQ(f[3].line, 4);
  EXPECT_EQ(f[5].line, 6);
  EXPECT_NE(describe(f).find("line 4: void f()"), std::string::npos);
}

// Builds a tiny shared library with the host compiler and checks the ELF scan.
class LibraryScan : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("egg_scan_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path build(const std::string& name, const std::string& code) {
    const fs::path src = dir / (name + ".cpp"), so = dir / ("lib" + name + ".so");
    std::ofstream(src) << code;
    const auto out =
        run_process({EGG_HARNESS_CXX, "-shared", "-fPIC", src.string(), "-o", so.string()},
                    {{"PATH", std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"}},
                    dir / "out.log", dir / "err.log", std::chrono::seconds(60));
    EXPECT_EQ(out.kind, ProcessOutcome::Kind::exited);
    EXPECT_EQ(out.exit_code, 0);
    return so;
  }
};

TEST_F(LibraryScan, PlainLibraryPasses) {
  const auto so =
      build("plain", "extern \"C\" int egg_candidate_launch(void* const*, void*) { return 0; }\n");
  EXPECT_TRUE(scan_library(so).empty()) << describe(scan_library(so));
}

TEST_F(LibraryScan, UndefinedAtenSymbolIsFound) {
  // Compiled without LibTorch: at::relu stays undefined and would bind to the harness's copy.
  const auto so = build("cheat",
                        "namespace at { void relu_(void*); }\n"
                        "extern \"C\" int egg_candidate_launch(void* const* a, void*) { "
                        "at::relu_(a[0]); return 0; }\n");
  const auto f = scan_library(so);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].text.find("_ZN2at5relu_"), std::string::npos);
}

TEST_F(LibraryScan, NotAnElfThrows) {
  std::ofstream(dir / "junk.so") << "not an elf";
  EXPECT_THROW(scan_library(dir / "junk.so"), std::runtime_error);
}
