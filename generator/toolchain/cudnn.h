// cuDNN: where its header and library are, and the nvcc flags that use them. The builtin conv
// family offers its cuDNN structure only when this finds one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace egg::toolchain {

struct CudnnLocation {
  std::filesystem::path include_dir;  // holds cudnn.h
  std::filesystem::path library;      // libcudnn.so or libcudnn.so.<major>
};

// cuDNN under `root`: root/include/cudnn.h and root/lib64 or root/lib with libcudnn.so(.N);
// nullopt when either is missing.
std::optional<CudnnLocation> cudnn_at(const std::filesystem::path& root);

// The cuDNN to use. `setting`: "none" (never), a folder (it must hold cuDNN: a UserError says what
// is missing otherwise), or empty: $EGG_CUDNN_ROOT if set, else the CUDA toolkit that `nvcc`
// belongs to (<toolkit>/bin/nvcc; a bare name is looked up on PATH), else nullopt.
std::optional<CudnnLocation> find_cudnn(const std::string& setting,
                                        const std::filesystem::path& nvcc);

// nvcc flags for a translation unit that includes cudnn.h, and for linking one that calls it
// (the library by path, only where used, with its folder as the run-time search path). Empty
// without cuDNN.
std::vector<std::string> cudnn_compile_flags(const std::optional<CudnnLocation>& cudnn);
std::vector<std::string> cudnn_link_flags(const std::optional<CudnnLocation>& cudnn);

}  // namespace egg::toolchain
