// Diagnostic microbenchmark (not built by EGG): layouts and load policies for the reductions'
// memory-bound loops, measured the way egg-harness measures (L2 flushed by a memset before each
// trial, CUDA events, median of 50). docs/PERFORMANCE.md cites its figures.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/micro/reduction_loads.cu -o /tmp/reduction_loads &&
//   /tmp/reduction_loads
//
// colA: the split-only column layout (a thread per 4 columns, the reduced dim split along y,
//       partials merged by a warp per column); colB: shared columns (G threads per column merged in
//       shared memory); colC: colA with an explicit register batch; fullD/fullE: a full sum of
//       (a - b)^2 over 4M floats (a loss) with a grid-stride loop, then one block adds the
//       partials. M selects the loads: 0 __ldg, 1 __ldcs (evict-first), 2 an L2 evict_first policy.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "check.h"

enum { LD_NORMAL = 0, LD_CS = 1, LD_EF = 2 };
template <int M>
__device__ __forceinline__ float4 ld4(const float4* p) {
  if constexpr (M == LD_NORMAL)
    return __ldg(p);
  else if constexpr (M == LD_CS)
    return __ldcs(p);
  else {
    float4 v;
    unsigned long long pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(pol));
    return v;
  }
}
constexpr int B = 16, R = 2048, I = 1024;
// A: current structure: thread = 4 cols, y-split chunks, partials
template <int S, int U>
__global__ void __launch_bounds__(256) colA(const float* __restrict__ x, float* __restrict__ part) {
  int q = (blockIdx.x * 256 + threadIdx.x) * 4;
  if (q >= B * I) return;
  long base = (long)(q / I) * R * I + q % I;
  constexpr int chunk = R / S;
  int r0 = blockIdx.y * chunk;
  float4 s = make_float4(0, 0, 0, 0);
#pragma unroll U
  for (int r = r0; r < r0 + chunk; ++r) {
    float4 v = __ldg((const float4*)(x + base + (long)r * I));
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  }
  part[(q + 0) * S + blockIdx.y] = s.x;
  part[(q + 1) * S + blockIdx.y] = s.y;
  part[(q + 2) * S + blockIdx.y] = s.z;
  part[(q + 3) * S + blockIdx.y] = s.w;
}
template <int S>
__global__ void finA(const float* __restrict__ part, float* __restrict__ out) {
  int o = blockIdx.x * 4 + threadIdx.x / 32, l = threadIdx.x % 32;
  if (o >= B * I) return;
  float s = 0;
  for (int k = l; k < S; k += 32) s += part[o * S + k];
  for (int m = 16; m; m /= 2) s += __shfl_xor_sync(~0u, s, m);
  if (!l) out[o] = s;
}
// B: block = 32 col-vecs x G row groups, smem combine, y-split S with partials (S==1: direct)
template <int G, int S, int U, int M = 0>
__global__ void __launch_bounds__(256) colB(const float* __restrict__ x, float* __restrict__ part) {
  int cv = threadIdx.x % (256 / G), g = threadIdx.x / (256 / G);
  constexpr int CV = 256 / G;  // col-vecs per block
  int q = (blockIdx.x * CV + cv) * 4;
  long base = (long)(q / I) * R * I + q % I;
  constexpr int chunk = R / S;
  int r0 = blockIdx.y * chunk;
  float4 s = make_float4(0, 0, 0, 0);
#pragma unroll U
  for (int r = r0 + g; r < r0 + chunk; r += G) {
    float4 v = ld4<M>((const float4*)(x + base + (long)r * I));
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  }
  __shared__ float4 sm[256];
  sm[threadIdx.x] = s;
  __syncthreads();
  if (g == 0) {
    for (int k = 1; k < G; ++k) {
      float4 t = sm[k * CV + cv];
      s.x += t.x;
      s.y += t.y;
      s.z += t.z;
      s.w += t.w;
    }
    if (S == 1) {
      *(float4*)(part + q) = s;
    } else {
      part[(q + 0) * S + blockIdx.y] = s.x;
      part[(q + 1) * S + blockIdx.y] = s.y;
      part[(q + 2) * S + blockIdx.y] = s.z;
      part[(q + 3) * S + blockIdx.y] = s.w;
    }
  }
}
// C: explicit register batch of U loads
template <int S, int U>
__global__ void __launch_bounds__(256) colC(const float* __restrict__ x, float* __restrict__ part) {
  int q = (blockIdx.x * 256 + threadIdx.x) * 4;
  if (q >= B * I) return;
  long base = (long)(q / I) * R * I + q % I;
  constexpr int chunk = R / S;
  int r0 = blockIdx.y * chunk;
  float4 s = make_float4(0, 0, 0, 0);
  for (int r = r0; r < r0 + chunk; r += U) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldg((const float4*)(x + base + (long)(r + u) * I));
#pragma unroll
    for (int u = 0; u < U; ++u) {
      s.x += v[u].x;
      s.y += v[u].y;
      s.z += v[u].z;
      s.w += v[u].w;
    }
  }
  part[(q + 0) * S + blockIdx.y] = s.x;
  part[(q + 1) * S + blockIdx.y] = s.y;
  part[(q + 2) * S + blockIdx.y] = s.z;
  part[(q + 3) * S + blockIdx.y] = s.w;
}
// full sum of (a-b)^2 over N: D current (grid-stride 1 vec), E U-batched
constexpr long N = 128L * 32768;
template <int G, int M = 0>
__global__ void __launch_bounds__(256)
    fullD(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ part) {
  float s = 0;
  for (long i = blockIdx.x * 256 + threadIdx.x; i < N / 4; i += (long)G * 256) {
    float4 x = ld4<M>((const float4*)a + i), y = ld4<M>((const float4*)b + i);
    s += (x.x - y.x) * (x.x - y.x) + (x.y - y.y) * (x.y - y.y) + (x.z - y.z) * (x.z - y.z) +
         (x.w - y.w) * (x.w - y.w);
  }
  for (int m = 16; m; m /= 2) s += __shfl_xor_sync(~0u, s, m);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = s;
  __syncthreads();
  if (!threadIdx.x) {
    float t = 0;
    for (int k = 0; k < 8; ++k) t += w[k];
    part[blockIdx.x] = t;
  }
}
template <int G, int U>
__global__ void __launch_bounds__(256)
    fullE(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ part) {
  float s = 0;
  long i = blockIdx.x * 256 + threadIdx.x;
  const long st = (long)G * 256;
  for (; i + (U - 1) * st < N / 4; i += U * st) {
    float4 x[U], y[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      x[u] = __ldg((const float4*)a + i + u * st);
      y[u] = __ldg((const float4*)b + i + u * st);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      s += (x[u].x - y[u].x) * (x[u].x - y[u].x) + (x[u].y - y[u].y) * (x[u].y - y[u].y) +
           (x[u].z - y[u].z) * (x[u].z - y[u].z) + (x[u].w - y[u].w) * (x[u].w - y[u].w);
  }
  for (; i < N / 4; i += st) {
    float4 x = __ldg((const float4*)a + i), y = __ldg((const float4*)b + i);
    s += (x.x - y.x) * (x.x - y.x) + (x.y - y.y) * (x.y - y.y) + (x.z - y.z) * (x.z - y.z) +
         (x.w - y.w) * (x.w - y.w);
  }
  for (int m = 16; m; m /= 2) s += __shfl_xor_sync(~0u, s, m);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = s;
  __syncthreads();
  if (!threadIdx.x) {
    float t = 0;
    for (int k = 0; k < 8; ++k) t += w[k];
    part[blockIdx.x] = t;
  }
}
__global__ void finF(const float* part, int n, float* out) {
  float s = 0;
  for (int k = threadIdx.x; k < n; k += 1024) s += part[k];
  for (int m = 16; m; m /= 2) s += __shfl_xor_sync(~0u, s, m);
  __shared__ float w[32];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = s;
  __syncthreads();
  if (!threadIdx.x) {
    float t = 0;
    for (int k = 0; k < 32; ++k) t += w[k];
    *out = t;
  }
}

// A GPU busy-wait of `cycles` SM clocks (as torch.cuda._sleep): the baselines' 2 ms lead.
__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

float* flush;
cudaEvent_t e0, e1;
template <class F>
float timeit(const char* name, double bytes, F f) {
  std::vector<float> t;
  for (int i = 0; i < 3; ++i) {
    cudaMemsetAsync(flush, 0, 200 << 20);
    f();
  }
  for (int i = 0; i < 50; ++i) {
    cudaMemsetAsync(flush, 0, 200 << 20);
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  float m = t[25];
  cudaError_t e = cudaGetLastError();
  printf("%-28s %8.2f us  %6.0f GB/s %s\n", name, m * 1e3, bytes / m / 1e6,
         e ? cudaGetErrorString(e) : "");
  return m;
}
int main() {
  float *x, *part, *out, *a, *b;
  CK(cudaMalloc(&flush, 200 << 20));
  CK(cudaMalloc(&x, 4L * B * R * I));
  CK(cudaMalloc(&part, 4L * B * I * 128));
  CK(cudaMalloc(&out, 4L * B * I));
  CK(cudaMalloc(&a, 4 * N));
  CK(cudaMalloc(&b, 4 * N));
  cudaMemset(x, 0, 4L * B * R * I);
  cudaMemset(a, 0, 4 * N);
  cudaMemset(b, 0, 4 * N);
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  double cb = 4.0 * B * R * I;
  // copy reference
  float* y;
  CK(cudaMalloc(&y, 4L * B * R * I));
  // One-line macro tables of variants, left as written (clang-format 14 reflows them anew on every
  // run).
  // clang-format off
#define A(S,U) timeit("colA s" #S " u" #U, cb, [&]{colA<S,U><<<dim3(B*I/4/256,S),256>>>(x,part); finA<S><<<B*I/4,128>>>(part,out);});
  A(32,4) A(64,4) A(64,8)
#define Cc(S,U) timeit("colC s" #S " u" #U, cb, [&]{colC<S,U><<<dim3(B*I/4/256,S),256>>>(x,part); finA<S><<<B*I/4,128>>>(part,out);});
  Cc(16,8) Cc(32,8)
#define Bb(G,S,U,M) timeit("colB g" #G " s" #S " u" #U " m" #M, cb, [&]{colB<G,S,U,M><<<dim3(B*I/4/(256/G),S),256>>>(x,part); if(S>1) finA<S><<<B*I/4,128>>>(part,out);});
  Bb(8,8,4,0) Bb(8,8,4,1) Bb(8,8,4,2) Bb(8,16,4,1) Bb(8,16,4,2) Bb(8,4,4,2)
  double fb=8.0*N;
#define D(G,M) timeit("fullD g" #G " m" #M, fb, [&]{fullD<G,M><<<G,256>>>(a,b,part); finF<<<1,1024>>>(part,G,out);});
  D(1056,0) D(1056,1) D(1056,2) D(2112,1) D(2112,2) D(528,2)
#define E(G,U) timeit("fullE g" #G " u" #U, fb, [&]{fullE<G,U><<<G,256>>>(a,b,part); finF<<<1,1024>>>(part,G,out);});
  E(1056,4) E(528,8)
      // clang-format on
      timeit("fullD g1056 m0 alone", fb, [&] { fullD<1056, 0><<<1056, 256>>>(a, b, part); });
  timeit("fullD g1056 m2 alone", fb, [&] { fullD<1056, 2><<<1056, 256>>>(a, b, part); });
  // flush by reading (clean L2) instead of memset (dirty L2)
  auto rflush = [&] { fullD<1056, 0><<<1056, 256>>>(flush, flush + 25 * (1 << 20), part); };
  {
    std::vector<float> t;
    for (int i = 0; i < 30; ++i) {
      rflush();
      rflush();
      cudaEventRecord(e0);
      fullD<1056, 0><<<1056, 256>>>(a, b, part);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    printf("fullD m0 after clean flush %8.2f us\n", t[15] * 1e3);
  }
  {
    std::vector<float> t;
    for (int i = 0; i < 30; ++i) {
      rflush();
      rflush();
      cudaEventRecord(e0);
      colB<8, 8, 4, 0><<<dim3(B * I / 4 / 32, 8), 256>>>(x, part);
      finA<8><<<B * I / 4, 128>>>(part, out);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    printf("colB m0 after clean flush %8.2f us\n", t[15] * 1e3);
  }
  // The open question of docs/PERFORMANCE.md: does the L2 write the flush's dirty lines back while
  // the GPU waits 2 ms before the timed call (egg_bench's device-time lead), so that the baselines
  // start with a cleaner L2 than egg-harness, which launches right after its flush?
  {
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    const long long two_ms = 2LL * khz;
    for (int lead = 0; lead < 2; ++lead) {
      std::vector<float> t, u;
      for (int i = 0; i < 50; ++i) {
        cudaMemsetAsync(flush, 0, 200 << 20);
        if (lead) spin<<<1, 1>>>(two_ms);
        cudaEventRecord(e0);
        fullD<1056, 0><<<1056, 256>>>(a, b, part);
        finF<<<1, 1024>>>(part, 1056, out);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        t.push_back(ms);
        cudaMemsetAsync(flush, 0, 200 << 20);
        if (lead) spin<<<1, 1>>>(two_ms);
        cudaEventRecord(e0);
        colB<8, 8, 4, 0><<<dim3(B * I / 4 / 32, 8), 256>>>(x, part);
        finA<8><<<B * I / 4, 128>>>(part, out);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        u.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      std::sort(u.begin(), u.end());
      printf("after memset flush%s: fullD+finF %8.2f us, colB g8 s8 %8.2f us\n",
             lead ? " + 2 ms GPU spin" : "", t[25] * 1e3, u[25] * 1e3);
    }
  }
  timeit("memcpy 128MB d2d (r+w)", 2 * cb,
         [&] { cudaMemcpyAsync(y, x, 4L * B * R * I, cudaMemcpyDeviceToDevice); });
  timeit("memcpy 16MB d2d (r+w)", 2 * 4.0 * N,
         [&] { cudaMemcpyAsync(b, a, 4 * N, cudaMemcpyDeviceToDevice); });
  return 0;
}
