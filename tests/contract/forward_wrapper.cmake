# The generated header's forward(torch::Tensor...) wrapper compiles against LibTorch: generate the
# quickstart's gelu_bias kernel and a suite op with dropout, then compile a caller of their forward() with
# EGG_WITH_LIBTORCH=1 (syntax only: linking LibTorch's CUDA libraries is the downstream build's job).
# Variables: EGG_GEN, DATA_DIR, PYTHON, NVCC, CXX, CUDA_INCLUDE, WORK.
file(REMOVE_RECURSE "${WORK}")
# The quickstart's gelu_bias, and a suite op with dropout: forward() takes its [seed, offset] from
# PyTorch's CUDA generator.
foreach(op IN ITEMS "examples/quickstart/ops/gelu_bias.py" "examples/suite/ew_dropout_residual.py")
  execute_process(COMMAND "${EGG_GEN}" generate "${DATA_DIR}/${op}" --arch sm_90 --out "${WORK}/out"
                          --python "${PYTHON}" --nvcc "${NVCC}" --data-dir "${DATA_DIR}" --no-cache
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "egg-gen failed on ${op} (${rc}):\n${out}${err}")
  endif()
endforeach()
execute_process(COMMAND "${PYTHON}" -c "import os, torch; print(os.path.dirname(torch.__file__))"
                OUTPUT_VARIABLE torch_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PYTHON} cannot import torch")
endif()
file(WRITE "${WORK}/caller.cpp" [=[
#include <egg/gelu_bias.h>
// The wrapper checks device, dtype, shape and contiguity, allocates the output and launches.
torch::Tensor call(const torch::Tensor& x, const torch::Tensor& bias) { return egg::gelu_bias::forward(x, bias); }
static_assert(egg::gelu_bias::kXNumel == 4096 * 4096, "the header carries the traced shapes");
#include <egg/ew_dropout_residual.h>
// forward() takes x and the parameter, not egg_rng (the generator's); launch() takes all four.
torch::Tensor drop(const torch::Tensor& x, const torch::Tensor& b) { return egg::ew_dropout_residual::forward(x, b); }
static_assert(egg::ew_dropout_residual::kEggRngNumel == 2, "[seed, offset]");
cudaError_t (*launch)(const float*, const std::int64_t*, const float*, float*, cudaStream_t) =
    &egg::ew_dropout_residual::launch;
]=])
execute_process(COMMAND "${CXX}" -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DEGG_WITH_LIBTORCH=1
                        -I "${WORK}/out/include" -I "${CUDA_INCLUDE}" -isystem "${torch_dir}/include"
                        -isystem "${torch_dir}/include/torch/csrc/api/include" "${WORK}/caller.cpp"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the forward() wrapper does not compile against LibTorch (${rc}):\n${out}${err}")
endif()
# Without EGG_WITH_LIBTORCH the header needs no torch at all.
file(WRITE "${WORK}/plain.cpp" "#include <egg/gelu_bias.h>\nint main() { return egg::gelu_bias::kOut0Numel > 0 ? 0 : 1; }\n")
execute_process(COMMAND "${CXX}" -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I "${WORK}/out/include"
                        -I "${CUDA_INCLUDE}" "${WORK}/plain.cpp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the header without LibTorch does not compile:\n${err}")
endif()
message(STATUS "forward() wrapper and plain header compile")
