// Diagnostic microbenchmark (not built by EGG): the conv family's transposing epilogue pass, which
// reads cuDNN's channels-last result and writes NC(D)HW through the epilogue, in schedules beside
// the one the product runs, measured the way egg-harness measures (L2 flushed by a memset before
// each trial, CUDA events, median of 30). docs/PERFORMANCE.md cites its figures.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/micro/transpose_pass.cu -o /tmp/transpose_pass &&
//   /tmp/transpose_pass
//
// The problem is level2/5's: [32, 513 * 513, 64] fp32 channels-last to [32, 64, 513 * 513] through
// tanh(x + cb[c] - b[c]), first on zeros, then on random data (about N(0, 1.5²)), since tanhf takes
// one branch for small |x| and another for large, and zeros keep every lane on one. F picks the
// epilogue: 0 the copy alone, 1 tanhf, 2 tanh_exp (one exponential, branch-free), 3 tanh.approx (a
// floor only: not accurate enough for the product). Every variant reads the channels 16 bytes a
// load (4 of a position's channels a lane).
//   c16<P>: the product's `:c16` schedule, torch.compile's tile: 16 channels x P positions a block,
//     positions the grid's fastest index.
//   block<P, LD>: the product's `:p256:v` schedule: a block of 256 threads per tile of 32 channels
//   x
//     P positions, loads, one barrier, then a warp writes 32 positions of a channel per store;
//     LD = 1 loads evict-first and stores streaming (__ldcs/__stcs); LD = 2 stores a full tile
//     without a bounds test a store.
// The seventeenth session's persistent, warp-owned and 64-channel variants lost there and were
// removed (docs/PERFORMANCE.md has their figures; git history their code).
// Then the other direction, the input's transpose to channels-last before cuDNN ([32, 64, 256²]
// NCHW to [32, 256², 64], a plain copy):
//   swap32: the product's `swap_last`: 32 x 32 tiles, 32 x 8 threads, 4 elements a thread;
//   swapv<R, P>: R channels x P positions a block, read 16 bytes a load along the positions and
//     written 16 bytes a store along the channels (R / 4 lanes a position), all loads in flight
//     before the barrier.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>

#include "check.h"
#include "timing.h"

namespace {

constexpr int kN = 32, kC = 64, kS = 513 * 513;

// A lane's four channels of one position into the (channel, position) tile.
template <int PITCH>
__device__ __forceinline__ void put4(float (*tile)[PITCH], int q, int sl, float4 v) {
  tile[4 * q][sl] = v.x;
  tile[4 * q + 1][sl] = v.y;
  tile[4 * q + 2][sl] = v.z;
  tile[4 * q + 3][sl] = v.w;
}

// tanh through one exponential: (1 - e) / (1 + e) with e = exp(-2|x|), the sign restored, and the
// odd series x (1 - x²/3 + 2x⁴/15 - 17x⁶/315) below |x| = 1/8 where 1 - e cancels; both sides are
// computed (no divergence on mixed signs and sizes), then one is selected.
__device__ __forceinline__ float tanh_exp(float x) {
  const float ax = fabsf(x), e = __expf(-2.0f * ax);
  const float far = copysignf(__fdividef(1.0f - e, 1.0f + e), x);
  const float x2 = x * x;
  const float near =
      x * fmaf(x2, fmaf(x2, fmaf(x2, -17.0f / 315.0f, 2.0f / 15.0f), -1.0f / 3.0f), 1.0f);
  return ax < 0.125f ? near : far;
}

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// F: 0 the copy alone, 1 tanhf (the product's), 2 tanh_exp, 3 tanh.approx (a floor, not exact).
__device__ __forceinline__ float epi(float y, const float* cb, const float* b, int c, int f) {
  const float x = y + cb[c] - b[c];
  return f == 0 ? y : f == 1 ? tanhf(x) : f == 2 ? tanh_exp(x) : tanh_approx(x);
}

// Random data, as the product's pass meets it (cuDNN's result of normal inputs): a hash of the
// index to three uniforms summed, scaled to about N(0, 1.5²).
__global__ void fill(float* p, size_t n, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ unsigned(i >> 32) * 40503u;
    float s = 0.f;
    for (int k = 0; k < 3; ++k) {
      h ^= h >> 15;
      h *= 2246822519u;
      h ^= h >> 13;
      s += float(h & 0xffffffu) * (1.0f / 16777216.0f) - 0.5f;
    }
    p[i] = s * 2.0f * scale;
  }
}

// A block's sweeps of 16-byte channel loads: lane q of row r reads channels c0 + 4 q.. of
// position s0 + r + ROWS k (zeros past the plane); STREAM loads evict-first.
template <int SWEEPS, int ROWS, bool STREAM>
__device__ __forceinline__ void load_sweeps(const float* __restrict__ yt, int n, int s0, int c0,
                                            int q, int r, float4 (&v)[SWEEPS]) {
#pragma unroll
  for (int k = 0; k < SWEEPS; ++k) {
    const int sp = s0 + r + ROWS * k;
    const float4* p = reinterpret_cast<const float4*>(yt + ((long long)n * kS + sp) * kC + c0) + q;
    v[k] = sp < kS ? (STREAM ? __ldcs(p) : __ldg(p)) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

// The product's `:c16` schedule (torch.compile's tile): 16 channels x P positions a block, 4 lanes
// a position (16-byte loads), positions the grid's fastest index, rows padded by 2.
template <int P, int F>
__global__ void __launch_bounds__(256)
    c16(const float* __restrict__ yt, const float* __restrict__ cb, const float* __restrict__ b,
        float* __restrict__ out) {
  __shared__ float tile[16][P + 2];
  constexpr int kRows = 64, kSweeps = P / kRows;
  const int tid = int(threadIdx.x), q = tid % 4, r = tid / 4;
  const int n = blockIdx.z, c0 = blockIdx.y * 16, s0 = blockIdx.x * P;
  float4 v[kSweeps];
  load_sweeps<kSweeps, kRows, false>(yt, n, s0, c0, q, r, v);
#pragma unroll
  for (int k = 0; k < kSweeps; ++k) put4(tile, q, r + kRows * k, v[k]);
  __syncthreads();
  const int lane = tid % 32, w = tid / 32;
#pragma unroll
  for (int k = 0; k < 16 * P / 256; ++k) {
    const int i = (8 * k + w) % 16, j = lane + 32 * ((8 * k + w) / 16);
    const int c = c0 + i, sp = s0 + j;
    if (sp < kS) out[((long long)n * kC + c) * kS + sp] = epi(tile[i][j], cb, b, c, F);
  }
}

template <int P, int LD, int F>
__global__ void __launch_bounds__(256)
    block(const float* __restrict__ yt, const float* __restrict__ cb, const float* __restrict__ b,
          float* __restrict__ out) {
  __shared__ float tile[32][P + 1];
  constexpr int kRows = 32, kSweeps = P / kRows;  // 8 lanes a position, 32 positions a sweep
  const int tid = int(threadIdx.x), q = tid % 8, r = tid / 8;
  const int n = blockIdx.z, c0 = blockIdx.x * 32, s0 = blockIdx.y * P;
  float4 v[kSweeps];
  load_sweeps<kSweeps, kRows, LD == 1>(yt, n, s0, c0, q, r, v);
#pragma unroll
  for (int k = 0; k < kSweeps; ++k) {
    const int sl = r + kRows * k;
    put4(tile, q, sl, v[k]);
  }
  __syncthreads();
  const int lane = tid % 32, w = tid / 32;
  auto store = [&](int k) {
    const int sl = (k % (P / 32)) * 32 + lane, cc = w + 8 * (k / (P / 32));
    const int c = c0 + cc, sp = s0 + sl;
    float* o = out + ((long long)n * kC + c) * kS + sp;
    const float y = epi(tile[cc][sl], cb, b, c, F);
    if (LD == 1)
      __stcs(o, y);
    else
      *o = y;
  };
  if (LD == 2 && s0 + P <= kS) {
    // A full tile: no test a store, so the channel's loads are shared by its stores.
#pragma unroll
    for (int k = 0; k < 32 * P / 256; ++k) store(k);
  } else {
#pragma unroll
    for (int k = 0; k < 32 * P / 256; ++k)
      if (s0 + (k % (P / 32)) * 32 + lane < kS) store(k);
  }
}

__global__ void tanh_check(const float* xs, float* ys, int m) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < m) {
    ys[i] = tanhf(xs[i]);
    ys[m + i] = tanh_exp(xs[i]);
  }
}

constexpr int kSwapS = 256 * 256;  // the input's positions

__global__ void __launch_bounds__(256)
    swap32(const float* __restrict__ src, float* __restrict__ dst) {
  __shared__ float tile[32][33];
  const long long base = (long long)blockIdx.z * kC * kSwapS;
  const int c0 = int(blockIdx.x) * 32, r0 = int(blockIdx.y) * 32;  // positions, channels
  float v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    v[k] = src[base + (long long)(r0 + threadIdx.y + 8 * k) * kSwapS + c0 + threadIdx.x];
#pragma unroll
  for (int k = 0; k < 4; ++k) tile[threadIdx.y + 8 * k][threadIdx.x] = v[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 4; ++k)
    dst[base + (long long)(c0 + threadIdx.y + 8 * k) * kC + r0 + threadIdx.x] =
        tile[threadIdx.x][threadIdx.y + 8 * k];
}

template <int R, int P>
__global__ void __launch_bounds__(256)
    swapv(const float* __restrict__ src, float* __restrict__ dst) {
  // Rows padded by one: lane (q, pos) of the stores reads banks 4 q + j + pos (R = 32: distinct).
  __shared__ float tile[R][P + 1];
  constexpr int kLoads = R * P / 4 / 256;
  static_assert(kLoads >= 1 && R * P % 1024 == 0, "whole sweeps");
  const long long base = (long long)blockIdx.z * kC * kSwapS;
  const int s0 = int(blockIdx.x) * P, r0 = int(blockIdx.y) * R, tid = int(threadIdx.x);
  float4 v[kLoads];
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const int i = tid + 256 * k, row = i / (P / 4), col = i % (P / 4);
    v[k] = __ldg(reinterpret_cast<const float4*>(src + base + (long long)(r0 + row) * kSwapS + s0) +
                 col);
  }
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const int i = tid + 256 * k, row = i / (P / 4), col = i % (P / 4);
    tile[row][4 * col] = v[k].x;
    tile[row][4 * col + 1] = v[k].y;
    tile[row][4 * col + 2] = v[k].z;
    tile[row][4 * col + 3] = v[k].w;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const int i = tid + 256 * k, pos = i / (R / 4), q = i % (R / 4);
    const float4 o = make_float4(tile[4 * q][pos], tile[4 * q + 1][pos], tile[4 * q + 2][pos],
                                 tile[4 * q + 3][pos]);
    *reinterpret_cast<float4*>(dst + base + (long long)(s0 + pos) * kC + r0 + 4 * q) = o;
  }
}

}  // namespace

int main() {
  const size_t en = size_t(kN) * kC * kS;
  const size_t flush_bytes = 256u << 20;
  float *yt, *eo, *cb, *b, *flush;
  CK(cudaMalloc(&yt, en * 4));
  CK(cudaMalloc(&eo, en * 4));
  CK(cudaMalloc(&cb, kC * 4));
  CK(cudaMalloc(&b, kC * 4));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(yt, 0, en * 4));
  CK(cudaMemset(cb, 0, kC * 4));
  CK(cudaMemset(b, 0, kC * 4));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto report = [&](const char* name, float ms) {
    printf("%-36s %.4f ms  %.0f GB/s (read + write)\n", name, ms, en * 8 / ms / 1e6);
  };
  auto run_block = [&](const char* name, auto kernel, int p) {
    const dim3 grid(kC / 32, (kS + p - 1) / p, kN);
    report(name, time_cold_ms([&] { kernel<<<grid, 256>>>(yt, cb, b, eo); }, flush, flush_bytes));
  };
  auto run_c16 = [&](const char* name, auto kernel, int p) {
    const dim3 grid((kS + p - 1) / p, kC / 16, kN);
    report(name, time_cold_ms([&] { kernel<<<grid, 256>>>(yt, cb, b, eo); }, flush, flush_bytes));
  };
  // Zeros first (the seventeenth session's figures were taken on zeros), then random data: every
  // lane of a warp takes tanhf's same branch on zeros, not on data.
  for (int data = 0; data < 2; ++data) {
    if (data == 1) {
      fill<<<sms * 8, 256>>>(yt, en, 1.5f);
      fill<<<1, 64>>>(cb, kC, 0.1f);
      fill<<<1, 64>>>(b, kC, 0.1f);
      CK(cudaGetLastError());
    }
    printf("-- %s\n", data ? "random data (about N(0, 1.5^2))" : "zeros");
    report("copy", time_cold_ms([&] { cudaMemcpyAsync(eo, yt, en * 4, cudaMemcpyDeviceToDevice); },
                                flush, flush_bytes));
    run_block("block P256 copy only", block<256, 0, 0>, 256);
    run_block("block P256 tanhf (product :p256:v)", block<256, 0, 1>, 256);
    run_block("block P256 tanh_exp", block<256, 0, 2>, 256);
    run_block("block P256 tanh.approx", block<256, 0, 3>, 256);
    run_block("block P128 tanhf", block<128, 0, 1>, 128);
    run_block("block P256 tanhf, full tiles untested", block<256, 2, 1>, 256);
    run_c16("c16 P256 copy only", c16<256, 0>, 256);
    run_c16("c16 P256 tanhf (product :c16)", c16<256, 1>, 256);
    run_c16("c16 P256 tanh_exp", c16<256, 2>, 256);
    run_c16("c16 P256 tanh.approx", c16<256, 3>, 256);
  }
  // tanh_exp's largest errors against tanhf on a sweep of [-10, 10] (host: double as the truth).
  {
    constexpr int kM = 1 << 20;
    float *xs, *ys;
    CK(cudaMallocManaged(&xs, kM * 4));
    CK(cudaMallocManaged(&ys, kM * 8));
    for (int i = 0; i < kM; ++i) xs[i] = -10.0f + 20.0f * float(i) / float(kM);
    tanh_check<<<kM / 256, 256>>>(xs, ys, kM);
    CK(cudaDeviceSynchronize());
    double e_exp = 0, e_f = 0;
    for (int i = 0; i < kM; ++i) {
      const double t = tanh(double(xs[i])), d = fabs(t) > 1e-30 ? fabs(t) : 1.0;
      e_f = fmax(e_f, fabs(double(ys[i]) - t) / d);
      e_exp = fmax(e_exp, fabs(double(ys[kM + i]) - t) / d);
    }
    printf("max relative error on [-10, 10]: tanhf %.3g, tanh_exp %.3g\n", e_f, e_exp);
  }
  const size_t sn = size_t(kN) * kC * kSwapS;
  auto report_swap = [&](const char* name, float ms) {
    printf("%-36s %.4f ms  %.0f GB/s (read + write)\n", name, ms, sn * 8 / ms / 1e6);
  };
  report_swap("swap copy",
              time_cold_ms([&] { cudaMemcpyAsync(eo, yt, sn * 4, cudaMemcpyDeviceToDevice); },
                           flush, flush_bytes));
  report_swap("swap32 (product swap_last)",
              time_cold_ms([&] { swap32<<<dim3(kSwapS / 32, kC / 32, kN), dim3(32, 8)>>>(yt, eo); },
                           flush, flush_bytes));
  auto run_swapv = [&](const char* name, auto kernel, int r, int p) {
    report_swap(name, time_cold_ms([&] { kernel<<<dim3(kSwapS / p, kC / r, kN), 256>>>(yt, eo); },
                                   flush, flush_bytes));
  };
  run_swapv("swapv R32 P32", swapv<32, 32>, 32, 32);
  run_swapv("swapv R32 P64", swapv<32, 64>, 32, 64);
  run_swapv("swapv R64 P32", swapv<64, 32>, 64, 32);
  run_swapv("swapv R64 P64", swapv<64, 64>, 64, 64);
  run_swapv("swapv R64 P128", swapv<64, 128>, 64, 128);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  return 0;
}
