// Diagnostic microbenchmark (not built by EGG): fp32 GEMMs with few rows (out[M][N] = A[M][K] ·
// W[N][K]^T + bias, nn.Linear at batch 1-16: recurrent steps, decoding) through cuBLAS's SGEMM
// (PyTorch's route for F.linear), cuBLASLt's first heuristic algo and the best of its 16, and a
// skinny kernel: S warps split each column's K, CW columns a warp (the A values it loads serve
// CW columns), float4 loads, warp shuffles then S partial sums merged in shared memory in a fixed
// order (the same bits every run), bias added by the thread that stores.
//   cold: L2 flushed by a memset before each trial, CUDA events, median of 30 (as egg-harness);
//   warm: 200 back-to-back launches, their mean (a recurrent loop's steps find W in L2).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/micro/skinny_gemm.cu -lcublasLt -lcublas -o /tmp/sk &&
//   /tmp/sk
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "check.h"
#include "timing.h"

template <int M, int S, int CW>
__global__ void __launch_bounds__(256)
    skinny(const float* __restrict__ a, const float* __restrict__ w, const float* __restrict__ bias,
           float* __restrict__ out, int n, int k) {
  constexpr int kGroups = 8 / S;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = warp / S, s = warp % S;
  const int n0 = (blockIdx.x * kGroups + g) * CW;
  float acc[CW][M];
#pragma unroll
  for (int c = 0; c < CW; ++c)
#pragma unroll
    for (int m = 0; m < M; ++m) acc[c][m] = 0.f;
  for (int kk = (s * 32 + lane) * 4; kk < k; kk += S * 32 * 4) {
    float4 av[M];
#pragma unroll
    for (int m = 0; m < M; ++m)
      av[m] = __ldg(reinterpret_cast<const float4*>(a + (size_t)m * k + kk));
#pragma unroll
    for (int c = 0; c < CW; ++c) {
      if (n0 + c >= n) break;
      const float4 wv = __ldg(reinterpret_cast<const float4*>(w + (size_t)(n0 + c) * k + kk));
#pragma unroll
      for (int m = 0; m < M; ++m)
        acc[c][m] += av[m].x * wv.x + av[m].y * wv.y + av[m].z * wv.z + av[m].w * wv.w;
    }
  }
#pragma unroll
  for (int c = 0; c < CW; ++c)
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int o = 16; o; o /= 2) acc[c][m] += __shfl_xor_sync(0xffffffffu, acc[c][m], o);
  __shared__ float part[8][CW * M];
  if (lane == 0)
#pragma unroll
    for (int c = 0; c < CW; ++c)
#pragma unroll
      for (int m = 0; m < M; ++m) part[warp][c * M + m] = acc[c][m];
  __syncthreads();
  for (int t = threadIdx.x; t < kGroups * CW * M; t += 256) {
    const int gg = t / (CW * M), c = t % (CW * M) / M, m = t % M;
    const int col = (blockIdx.x * kGroups + gg) * CW + c;
    if (col >= n) continue;
    float v = 0.f;
    for (int ss = 0; ss < S; ++ss) v += part[gg * S + ss][c * M + m];
    out[(size_t)m * n + col] = v + bias[col];
  }
}

struct Shape {
  int m, n, k;
};

int main() {
  const size_t flush_bytes = 256u << 20;
  float* flush;
  CK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // One untimed trial (the timed 30 as egg-harness times them).
  auto cold = [&](const std::function<void()>& f) {
    return time_cold_ms(f, flush, flush_bytes, 1);
  };
  auto warm = [&](const std::function<void()>& f) {
    f();
    cudaEventRecord(e0);
    for (int i = 0; i < 200; ++i) f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms / 200;
  };
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  if (cublasCreate(&blas) || cublasLtCreate(&lt)) return 1;
  void* ws;
  const size_t ws_bytes = 32u << 20;
  CK(cudaMalloc(&ws, ws_bytes));
  cublasSetWorkspace(blas, ws, ws_bytes);

  const Shape shapes[] = {{8, 256, 1280},   {8, 128, 256},    {1, 4096, 4096},
                          {4, 11008, 4096}, {16, 4096, 4096}, {8, 1000, 2048}};
  printf("%-16s %-22s %10s %10s %12s\n", "M x N x K", "route", "cold us", "warm us", "cold GB/s");
  for (const Shape sh : shapes) {
    float *a, *w, *bias, *out, *ref;
    CK(cudaMalloc(&a, (size_t)sh.m * sh.k * 4));
    CK(cudaMalloc(&w, (size_t)sh.n * sh.k * 4));
    CK(cudaMalloc(&bias, (size_t)sh.n * 4));
    CK(cudaMalloc(&out, (size_t)sh.m * sh.n * 4));
    CK(cudaMalloc(&ref, (size_t)sh.m * sh.n * 4));
    std::vector<float> h((size_t)sh.n * sh.k);
    for (size_t i = 0; i < h.size(); ++i) h[i] = float((i * 2654435761u) % 1000) / 1000.f - 0.5f;
    CK(cudaMemcpy(w, h.data(), (size_t)sh.n * sh.k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(a, h.data(), (size_t)sh.m * sh.k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bias, h.data(), (size_t)sh.n * 4, cudaMemcpyHostToDevice));
    const double bytes = 4.0 * ((double)sh.n * sh.k + (double)sh.m * sh.k + (double)sh.m * sh.n);
    char name[32];
    snprintf(name, sizeof name, "%d x %d x %d", sh.m, sh.n, sh.k);
    auto report = [&](const char* route, const std::function<void()>& f) {
      const float c = cold(f), wm = warm(f);
      std::vector<float> got((size_t)sh.m * sh.n), want(got.size());
      cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost);
      cudaMemcpy(want.data(), ref, want.size() * 4, cudaMemcpyDeviceToHost);
      double err = 0;
      for (size_t i = 0; i < got.size(); ++i)
        err = std::max(err, (double)std::fabs(got[i] - want[i]));
      printf("%-16s %-22s %10.2f %10.2f %12.0f  max|diff| %.2e\n", name, route, c * 1e3, wm * 1e3,
             bytes / c / 1e6, err);
    };
    // cuBLAS SGEMM, column-major: out^T[N][M] = W^T... as PyTorch: C(n x m) = W(k x n)^T · A(k x m)
    const float one = 1.f, zero = 0.f;
    auto sgemm = [&] {
      cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, sh.n, sh.m, sh.k, &one, w, sh.k, a, sh.k, &zero,
                  out, sh.n);
    };
    sgemm();
    CK(cudaMemcpy(ref, out, (size_t)sh.m * sh.n * 4, cudaMemcpyDeviceToDevice));
    report("cublasSgemm (no bias)", sgemm);
    // The bias in the reference, for the kernels that add it.
    {
      std::vector<float> r((size_t)sh.m * sh.n);
      CK(cudaMemcpy(r.data(), ref, r.size() * 4, cudaMemcpyDeviceToHost));
      for (int m = 0; m < sh.m; ++m)
        for (int n = 0; n < sh.n; ++n) r[(size_t)m * sh.n + n] += h[n];
      CK(cudaMemcpy(ref, r.data(), r.size() * 4, cudaMemcpyHostToDevice));
    }
    // cuBLASLt with the bias epilogue: heuristic's ranked algos.
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, sh.k, sh.n, sh.k);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, sh.k, sh.m, sh.k);
    cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, sh.n, sh.m, sh.n);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                         sizeof ws_bytes);
    cublasLtMatmulHeuristicResult_t res[16];
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 16, res, &found);
    float best = 1e30f;
    int best_i = -1;
    for (int i = 0; i < found; ++i) {
      auto f = [&] {
        cublasLtMatmul(lt, op, &one, w, la, a, lb, &zero, out, ld, out, ld, &res[i].algo, ws,
                       ws_bytes, nullptr);
      };
      const float c = cold(f);
      if (i == 0) report("cublasLt algo 0", f);
      if (c < best) best = c, best_i = i;
    }
    if (best_i >= 0) {
      char route[32];
      snprintf(route, sizeof route, "cublasLt best (#%d/%d)", best_i, found);
      report(route, [&] {
        cublasLtMatmul(lt, op, &one, w, la, a, lb, &zero, out, ld, out, ld, &res[best_i].algo, ws,
                       ws_bytes, nullptr);
      });
    }
    auto own = [&](const char* route, auto kernel, int s, int cw) {
      const int cols = 8 / s * cw;
      report(route,
             [&] { kernel<<<(sh.n + cols - 1) / cols, 256>>>(a, w, bias, out, sh.n, sh.k); });
    };
#define OWN(MM, S, CW)                                      \
  if (sh.m == MM) {                                         \
    own("skinny S" #S " CW" #CW, skinny<MM, S, CW>, S, CW); \
  }
#define OWN_ALL(MM) \
  OWN(MM, 8, 1) OWN(MM, 4, 1) OWN(MM, 4, 2) OWN(MM, 2, 2) OWN(MM, 1, 2) OWN(MM, 1, 4) OWN(MM, 2, 4)
    OWN_ALL(1) OWN_ALL(4) OWN_ALL(8) OWN_ALL(16) CK(cudaGetLastError());
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(op);
    cudaFree(a), cudaFree(w), cudaFree(bias), cudaFree(out), cudaFree(ref);
  }
  return 0;
}
