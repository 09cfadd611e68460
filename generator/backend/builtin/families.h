// The list of the builtin backend's families, most specific first (the element-wise family last,
// since every other family fuses element-wise prologues and epilogues around its anchor).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/builtin/family.h"

namespace egg::backend::builtin {

// Every family, in the order the planner tries them; `precision` is the user's PRECISION opt-in
// ("default", "tf32", "bf16", "fp32x3"), which only the GEMM family's fp32 path uses; `cudnn`:
// cuDNN is at hand, and which engines (the conv family then offers its cuDNN structure too);
// `wgmma`: every target arch is sm_90a, so kernels may use Hopper's wgmma.
std::vector<std::unique_ptr<Family>> make_families(const std::filesystem::path& data_dir,
                                                   const std::string& precision = "default",
                                                   Cudnn cudnn = Cudnn::absent, bool wgmma = false);

// The families that take two neighbouring segments of a plan as one kernel (the planner's fused
// alternatives, planner.h fused_plans): the conv family fusing a channel reduction.
std::vector<std::unique_ptr<Family>> make_fusing_families(const std::filesystem::path& data_dir,
                                                          Cudnn cudnn = Cudnn::absent);

}  // namespace egg::backend::builtin
