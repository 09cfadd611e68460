#include "kernel_trace.h"

#include <cstdlib>
#include <mutex>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

namespace egg::harness {
namespace {

// CUPTI delivers records through C callbacks on its own thread; they land here.
std::mutex g_mutex;
std::vector<KernelRecord> g_records;

constexpr std::size_t kBufferSize = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferSize));
  *size = *buffer ? kBufferSize : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    g_records.push_back({k->start, k->end, k->streamId, k->name ? k->name : "?"});
  }
  std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "unknown CUPTI error";
}

}  // namespace

bool KernelTrace::start() {
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r == CUPTI_SUCCESS) r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    error_ = "CUPTI activity API unavailable: " + cupti_error(r);
    return false;
  }
  active_ = true;
  return true;
}

void KernelTrace::stop() {
  if (!active_) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  active_ = false;
}

std::uint64_t KernelTrace::now() const {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

std::uint32_t KernelTrace::stream_id(cudaStream_t stream) const {
  // Through the runtime's entry-point table, so egg-harness does not link libcuda and still starts
  // (and reports no_gpu) on a machine without a driver.
  using GetCtx = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 2000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      !fn)
    return 0;
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCtx>(fn)(&ctx) != CUDA_SUCCESS) return 0;
  std::uint32_t id = 0;
  if (cuptiGetStreamIdEx(ctx, reinterpret_cast<CUstream>(stream), 0, &id) != CUPTI_SUCCESS)
    return 0;
  return id;
}

std::vector<KernelRecord> KernelTrace::take() {
  if (active_) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<KernelRecord> out;
  out.swap(g_records);
  return out;
}

}  // namespace egg::harness
