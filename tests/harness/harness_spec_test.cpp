#include "harness_spec.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

using namespace egg::harness;
namespace fs = std::filesystem;

namespace {
fs::path write_spec(const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("egg_spec_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "spec.json") << text;
  return dir / "spec.json";
}
}  // namespace

TEST(HarnessSpec, ReadsArgumentsInAbiOrder) {
  const auto p = write_spec(R"({"schema": 2,
    "inputs": [{"name": "x", "shape": [2, 3], "dtype": "float32"}],
    "params": [{"name": "w", "shape": [3], "dtype": "float16", "kind": "parameter"}],
    "outputs": [{"name": "out0", "shape": [2, 3], "dtype": "bfloat16"}],
    "reference": {"seeds": 3}})");
  const HarnessSpec s = load_harness_spec(p);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].bytes(), 24);
  EXPECT_EQ(s.params[0].bytes(), 6);
  EXPECT_EQ(s.outputs[0].numel(), 6);
  EXPECT_EQ(s.outputs[0].dtype, "bfloat16");
}

TEST(HarnessSpec, ErrorsNameTheFileAndField) {
  const auto p =
      write_spec(R"({"schema": 2, "inputs": [{"name": "x", "shape": [2], "dtype": "complex64"}],
    "outputs": [{"name": "o", "shape": [2], "dtype": "float32"}], "reference": {"seeds": 1}})");
  try {
    load_harness_spec(p);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("spec.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("complex64"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_harness_spec(write_spec("{not json")), std::runtime_error);
  EXPECT_THROW(load_harness_spec(write_spec(R"({"schema": 3})")), std::runtime_error);
}
