// quickstart: calls two EGG-generated kernels through their raw-pointer API and checks them
// against a CPU reference. The kernels come from ops/gelu_bias.py and ops/swish_clamp.py; the
// headers <egg/NAME.h> are generated into the build tree by egg_kernel().
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <egg/gelu_bias.h>
#include <egg/swish_clamp.h>

namespace {

// The constants of the ops (get_init_inputs() and the shapes in the op files).
constexpr int kRows = 4096, kCols = 4096;  // gelu_bias: x [4096, 4096], bias [4096]
constexpr float kScale = 0.5f;
constexpr int kBatch = 2048, kDim = 1024;  // swish_clamp: x [2048, 1024]
constexpr float kLo = -0.25f, kHi = 2.0f;
constexpr double kAtol = 1e-4, kRtol = 1e-4;  // KernelBench's fp32 tolerance

// Deterministic inputs in [-3, 3) from a 64-bit LCG.
void fill(std::vector<float>& v, std::uint64_t seed) {
  std::uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 6.0 - 3.0);
  }
}

double gelu_tanh(double v) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
}

double swish_clamp(double v) {
  return std::clamp(v / (1.0 + std::exp(-v)), double(kLo), double(kHi));
}

// Max abs error; counts elements outside atol + rtol * |ref|.
double compare(const std::vector<float>& out, const std::vector<double>& ref, std::size_t* bad) {
  double max_err = 0.0;
  *bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(double(out[i]) - ref[i]);
    if (!(err <= kAtol + kRtol * std::fabs(ref[i]))) ++*bad;
    if (!(err <= max_err)) max_err = err;  // NaN propagates as failure
  }
  return max_err;
}

#define CHECK(call)                                                                         \
  do {                                                                                      \
    cudaError_t err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "quickstart: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("quickstart: no CUDA device: generated and compiled, run skipped\n");
    return 0;
  }

  // ---- gelu_bias: out = gelu_tanh(x * scale + bias) ----
  std::vector<float> x(std::size_t(kRows) * kCols), bias(kCols), out(x.size());
  fill(x, 1);
  fill(bias, 2);
  float *d_x = nullptr, *d_bias = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_bias, bias.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_bias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  // Inputs in forward() order, then parameters (none), then outputs, then the stream.
  CHECK(egg::gelu_bias::launch(d_x, d_bias, d_out, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));

  std::vector<double> ref(out.size());
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      const std::size_t i = std::size_t(r) * kCols + c;
      ref[i] = gelu_tanh(double(x[i]) * kScale + double(bias[c]));
    }
  std::size_t bad1 = 0;
  const double err1 = compare(out, ref, &bad1);
  std::printf("gelu_bias   [%d x %d]: max abs error %.3g (%zu elements out of tolerance)\n", kRows,
              kCols, err1, bad1);

  // ---- swish_clamp: out = clamp(silu(x), lo, hi) ----
  std::vector<float> y(std::size_t(kBatch) * kDim), out2(y.size());
  fill(y, 3);
  float *d_y = nullptr, *d_out2 = nullptr;
  CHECK(cudaMalloc(&d_y, y.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_out2, out2.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_y, y.data(), y.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(egg::swish_clamp::launch(d_y, d_out2, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpy(out2.data(), d_out2, out2.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> ref2(out2.size());
  for (std::size_t i = 0; i < y.size(); ++i) ref2[i] = swish_clamp(double(y[i]));
  std::size_t bad2 = 0;
  const double err2 = compare(out2, ref2, &bad2);
  std::printf("swish_clamp [%d x %d]: max abs error %.3g (%zu elements out of tolerance)\n", kBatch,
              kDim, err2, bad2);

  cudaFree(d_x);
  cudaFree(d_bias);
  cudaFree(d_out);
  cudaFree(d_y);
  cudaFree(d_out2);
  cudaStreamDestroy(stream);

  if (bad1 != 0 || bad2 != 0) {
    std::printf("quickstart: FAILED (tolerance atol %.0e, rtol %.0e)\n", kAtol, kRtol);
    return 1;
  }
  std::printf("quickstart: OK\n");
  return 0;
}
