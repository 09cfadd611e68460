#include "device_compare.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "base/compare_element.h"

namespace egg::harness {
namespace {

constexpr int kThreads = 256;

struct Stats {
  unsigned long long bad, nan, first_bad, max_abs_bits, max_rel_bits, finite, max_ref_bits;
  double sum_abs;
};

__device__ double as_double(float v) { return v; }
__device__ double as_double(double v) { return v; }
__device__ double as_double(__half v) { return __half2float(v); }
__device__ double as_double(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ double as_double(long long v) { return static_cast<double>(v); }
__device__ double as_double(int v) { return v; }
__device__ double as_double(signed char v) { return v; }
__device__ double as_double(unsigned char v) { return v; }

// Non-negative doubles order like their bit patterns.
__device__ unsigned long long bits(double v) { return __double_as_longlong(v); }

template <class O, class R>
__global__ void compare_kernel(const O* out, const R* ref, long long n, double atol, double rtol,
                               Stats* s) {
  unsigned long long bad = 0, nan = 0, first = ~0ull, finite = 0;
  double max_abs = 0, max_rel = 0, sum_abs = 0, max_ref = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const ElementVerdict v = judge_element(as_double(out[i]), as_double(ref[i]), atol, rtol);
    nan += v.nan_in_out;
    if (v.finite) {
      max_abs = fmax(max_abs, v.err);
      max_rel = fmax(max_rel, v.rel);
      ++finite;
      sum_abs += v.err;
      max_ref = fmax(max_ref, fabs(as_double(ref[i])));
    }
    if (v.bad) {
      if (bad == 0) first = static_cast<unsigned long long>(i);
      ++bad;
    }
  }
  for (int d = 16; d > 0; d /= 2) {
    bad += __shfl_down_sync(0xffffffffu, bad, d);
    nan += __shfl_down_sync(0xffffffffu, nan, d);
    first = min(first, __shfl_down_sync(0xffffffffu, first, d));
    max_abs = fmax(max_abs, __shfl_down_sync(0xffffffffu, max_abs, d));
    max_rel = fmax(max_rel, __shfl_down_sync(0xffffffffu, max_rel, d));
    finite += __shfl_down_sync(0xffffffffu, finite, d);
    sum_abs += __shfl_down_sync(0xffffffffu, sum_abs, d);
    max_ref = fmax(max_ref, __shfl_down_sync(0xffffffffu, max_ref, d));
  }
  if ((threadIdx.x & 31) != 0) return;
  if (bad) atomicAdd(&s->bad, bad);
  if (nan) atomicAdd(&s->nan, nan);
  if (first != ~0ull) atomicMin(&s->first_bad, first);
  atomicMax(&s->max_abs_bits, bits(max_abs));
  atomicMax(&s->max_rel_bits, bits(max_rel));
  if (finite) atomicAdd(&s->finite, finite);
  if (sum_abs > 0) atomicAdd(&s->sum_abs, sum_abs);
  atomicMax(&s->max_ref_bits, bits(max_ref));
}

__device__ unsigned long long mix64(unsigned long long x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct DigestState {
  unsigned long long hash, not_poison;
};

// Sum over words of mix(word, position): order-independent across threads, position-dependent.
__global__ void digest_kernel(const unsigned char* p, unsigned long long bytes,
                              unsigned char poison, DigestState* s) {
  const unsigned long long words = bytes / 8;
  const auto* w = reinterpret_cast<const unsigned long long*>(p);
  unsigned long long poison_word = 0;
  for (int b = 0; b < 8; ++b) poison_word = (poison_word << 8) | poison;
  unsigned long long h = 0, np = 0;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const unsigned long long v = w[i];
    h += mix64(v ^ mix64(i + 0x9e3779b97f4a7c15ull));
    np |= v != poison_word;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (unsigned long long i = words * 8; i < bytes; ++i) {
      h += mix64((static_cast<unsigned long long>(p[i]) << 56) ^ mix64(i ^ 0x5bd1e995ull));
      np |= p[i] != poison;
    }
  for (int d = 16; d > 0; d /= 2) {
    h += __shfl_down_sync(0xffffffffu, h, d);
    np |= __shfl_down_sync(0xffffffffu, np, d);
  }
  if ((threadIdx.x & 31) != 0) return;
  atomicAdd(&s->hash, h);
  if (np) atomicOr(&s->not_poison, 1ull);
}

__global__ void difference_kernel(const unsigned char* a, const unsigned char* b,
                                  unsigned long long bytes, unsigned long long* first) {
  const unsigned long long words = bytes / 8;
  const auto* wa = reinterpret_cast<const unsigned long long*>(a);
  const auto* wb = reinterpret_cast<const unsigned long long*>(b);
  unsigned long long f = ~0ull;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < words && f == ~0ull; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    if (wa[i] != wb[i]) f = i * 8;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (unsigned long long i = words * 8; i < bytes; ++i)
      if (a[i] != b[i]) {
        f = min(f, i);
        break;
      }
  for (int d = 16; d > 0; d /= 2) f = min(f, __shfl_down_sync(0xffffffffu, f, d));
  if ((threadIdx.x & 31) == 0 && f != ~0ull) atomicMin(first, f);
}

int grid_for(unsigned long long n) {
  int dev = 0, sms = 132;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const unsigned long long blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(
      std::max<unsigned long long>(1, std::min<unsigned long long>(blocks, 8ull * sms)));
}

// A small device scratch buffer for one reduction's result.
template <class S>
class Scratch {
 public:
  cudaError_t init(const S& value, cudaStream_t stream) {
    if (const cudaError_t e = cudaMalloc(&p_, sizeof(S)); e != cudaSuccess) return e;
    return cudaMemcpyAsync(p_, &value, sizeof(S), cudaMemcpyHostToDevice, stream);
  }
  cudaError_t read(S& value, cudaStream_t stream) {
    if (const cudaError_t e =
            cudaMemcpyAsync(&value, p_, sizeof(S), cudaMemcpyDeviceToHost, stream);
        e != cudaSuccess)
      return e;
    return cudaStreamSynchronize(stream);
  }
  S* get() { return p_; }
  ~Scratch() {
    if (p_) cudaFree(p_);
  }

 private:
  S* p_ = nullptr;
};

template <class T>
double host_double(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return static_cast<double>(v);
}

template <class T>
cudaError_t read_element(const void* p, unsigned long long i, cudaStream_t stream, double& value) {
  T raw;
  if (const cudaError_t e = cudaMemcpyAsync(&raw, static_cast<const T*>(p) + i, sizeof(T),
                                            cudaMemcpyDeviceToHost, stream);
      e != cudaSuccess)
    return e;
  if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
  value = host_double(raw);
  return cudaSuccess;
}

template <class O, class R>
cudaError_t compare_typed(const void* out, const void* ref, std::int64_t n, Tolerance tol,
                          cudaStream_t stream, Comparison& c) {
  Scratch<Stats> s;
  if (const cudaError_t e = s.init(Stats{0, 0, ~0ull, 0, 0, 0, 0, 0.0}, stream); e != cudaSuccess)
    return e;
  if (n > 0)
    compare_kernel<O, R><<<grid_for(static_cast<unsigned long long>(n)), kThreads, 0, stream>>>(
        static_cast<const O*>(out), static_cast<const R*>(ref), n, tol.atol, tol.rtol, s.get());
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  Stats h{};
  if (const cudaError_t e = s.read(h, stream); e != cudaSuccess) return e;
  c = Comparison{};
  c.count = n;
  c.bad_count = static_cast<std::int64_t>(h.bad);
  c.nan_count = static_cast<std::int64_t>(h.nan);
  std::memcpy(&c.max_abs_error, &h.max_abs_bits, sizeof(double));
  std::memcpy(&c.max_rel_error, &h.max_rel_bits, sizeof(double));
  std::memcpy(&c.max_abs_ref, &h.max_ref_bits, sizeof(double));
  c.finite_count = static_cast<std::int64_t>(h.finite);
  c.sum_abs_error = h.sum_abs;
  if (h.bad == 0) return cudaSuccess;
  c.first_bad_index = static_cast<std::int64_t>(h.first_bad);
  // The first bad pair, read back and converted as the kernel converted it.
  if (const cudaError_t e = read_element<O>(out, h.first_bad, stream, c.bad_value);
      e != cudaSuccess)
    return e;
  return read_element<R>(ref, h.first_bad, stream, c.ref_value);
}

}  // namespace

cudaError_t compare_on_device(const void* out, const std::string& dtype, const void* ref,
                              const std::string& ref_dtype, std::int64_t n, Tolerance tol,
                              cudaStream_t stream, Comparison& result) {
  if (ref_dtype == "float64" && dtype != ref_dtype) {  // against the float64 reference
    if (dtype == "float32") return compare_typed<float, double>(out, ref, n, tol, stream, result);
    if (dtype == "float16") return compare_typed<__half, double>(out, ref, n, tol, stream, result);
    if (dtype == "bfloat16")
      return compare_typed<__nv_bfloat16, double>(out, ref, n, tol, stream, result);
    return cudaErrorInvalidValue;
  }
  if (dtype != ref_dtype) return cudaErrorInvalidValue;
  if (dtype == "float32") return compare_typed<float, float>(out, ref, n, tol, stream, result);
  if (dtype == "float16") return compare_typed<__half, __half>(out, ref, n, tol, stream, result);
  if (dtype == "bfloat16")
    return compare_typed<__nv_bfloat16, __nv_bfloat16>(out, ref, n, tol, stream, result);
  if (dtype == "float64") return compare_typed<double, double>(out, ref, n, tol, stream, result);
  if (dtype == "int64")
    return compare_typed<long long, long long>(out, ref, n, tol, stream, result);
  if (dtype == "int32") return compare_typed<int, int>(out, ref, n, tol, stream, result);
  if (dtype == "int8")
    return compare_typed<signed char, signed char>(out, ref, n, tol, stream, result);
  if (dtype == "uint8" || dtype == "bool")
    return compare_typed<unsigned char, unsigned char>(out, ref, n, tol, stream, result);
  return cudaErrorInvalidValue;
}

cudaError_t digest_on_device(const void* data, std::size_t bytes, unsigned char poison,
                             cudaStream_t stream, Digest& result) {
  Scratch<DigestState> s;
  if (const cudaError_t e = s.init(DigestState{bytes * 0x9e3779b97f4a7c15ull, 0}, stream);
      e != cudaSuccess)
    return e;
  if (bytes > 0)
    digest_kernel<<<grid_for(bytes / 8 + 1), kThreads, 0, stream>>>(
        static_cast<const unsigned char*>(data), bytes, poison, s.get());
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  DigestState h{};
  if (const cudaError_t e = s.read(h, stream); e != cudaSuccess) return e;
  result.hash = h.hash;
  result.all_poison = h.not_poison == 0;
  return cudaSuccess;
}

cudaError_t first_difference_on_device(const void* a, const void* b, std::size_t bytes,
                                       cudaStream_t stream, std::int64_t& offset) {
  Scratch<unsigned long long> s;
  if (const cudaError_t e = s.init(~0ull, stream); e != cudaSuccess) return e;
  if (bytes > 0)
    difference_kernel<<<grid_for(bytes / 8 + 1), kThreads, 0, stream>>>(
        static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b), bytes, s.get());
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  unsigned long long first = 0;
  if (const cudaError_t e = s.read(first, stream); e != cudaSuccess) return e;
  offset = -1;
  if (first == ~0ull) return cudaSuccess;
  // Refine a differing word to its first differing byte.
  unsigned char wa[8] = {}, wb[8] = {};
  const std::size_t n = std::min<std::size_t>(8, bytes - first);
  if (const cudaError_t e =
          cudaMemcpy(wa, static_cast<const unsigned char*>(a) + first, n, cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return e;
  if (const cudaError_t e =
          cudaMemcpy(wb, static_cast<const unsigned char*>(b) + first, n, cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return e;
  std::size_t i = 0;
  while (i < n && wa[i] == wb[i]) ++i;
  offset = static_cast<std::int64_t>(first + i);
  return cudaSuccess;
}

}  // namespace egg::harness
