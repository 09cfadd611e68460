// Rejects candidates that call PyTorch instead of computing: a scan of the CUDA source for
// torch/ATen/c10/caffe2 includes and namespaces, and a scan of the compiled library's ELF dynamic
// section for libraries and undefined symbols of those namespaces. Plain C++, no LibTorch.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace egg::harness {

// One forbidden use: where, and the offending text.
struct Finding {
  int line = 0;  // 1-based; 0 for findings in a binary
  std::string text;
};

// Scans CUDA/C++ source text. Comments and string literals are ignored, so a comment saying
// "unlike torch::relu" is fine; `#include <ATen/...>`, `torch::`, `at::`, `c10::`, `caffe2::`,
// `Python.h` and `pybind11` are findings.
std::vector<Finding> scan_source_text(std::string_view source);

// Scans a shared library: DT_NEEDED entries naming libtorch/libc10/libpython and undefined
// dynamic symbols in the at::, c10::, torch:: or caffe2:: namespaces. Throws std::runtime_error if
// the file is not a readable ELF64 shared object.
std::vector<Finding> scan_library(const std::filesystem::path& so);

// "line 12: #include <ATen/ATen.h>; line 30: at::relu" (at most 5 findings, then a count).
std::string describe(const std::vector<Finding>& findings);

}  // namespace egg::harness
