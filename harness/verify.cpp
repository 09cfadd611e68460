#include "verify.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <thread>

#include <cuda_runtime_api.h>

#include "base/accuracy.h"
#include "base/gpu_lock.h"
#include "base/stats.h"
#include "base/tolerance.h"
#include "device_compare.h"
#include "gpu_memory.h"
#include "harness_spec.h"
#include "kernel_trace.h"
#include "ref_client.h"
#include "source_scan.h"

namespace egg::harness {
namespace fs = std::filesystem;
namespace {

// Holds a stream on the GPU (a host function that waits) until release(), so that the work
// enqueued meanwhile (start event, the candidate's launch, stop event) runs back to back: the
// events then time the GPU's work alone, however long the host took to enqueue it (a loaded CPU,
// a multi-kernel launch). A launch that waits for its own stream would wait for the hold: the
// hold gives way after 50 ms, so it costs time but never deadlocks.
class StreamHold {
 public:
  cudaError_t hold(cudaStream_t stream) {
    released_.store(false, std::memory_order_relaxed);
    timed_out_.store(false, std::memory_order_relaxed);
    return cudaLaunchHostFunc(stream, &StreamHold::wait, this);
  }
  void release() { released_.store(true, std::memory_order_release); }
  bool timed_out() const { return timed_out_.load(std::memory_order_acquire); }

 private:
  static void CUDART_CB wait(void* self) {  // runs on a CUDA thread: no CUDA calls here
    auto* h = static_cast<StreamHold*>(self);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (!h->released_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > limit) {
        h->timed_out_.store(true, std::memory_order_release);
        return;
      }
      std::this_thread::yield();
    }
  }
  std::atomic<bool> released_{false}, timed_out_{false};
};

using LaunchFn = cudaError_t (*)(void* const*, cudaStream_t);
using Clock = std::chrono::steady_clock;

// Thrown inside this file only; verify_candidate turns it into the result.
struct Reject {
  VerifyStatus status;
  std::string message;
};

constexpr unsigned char kGuardByte = 0xA5;
constexpr unsigned char kPoisonByte = 0xFF;  // all-ones is NaN in fp16/bf16/fp32/fp64, -1 in ints
constexpr std::size_t kGuardBytes = 64 << 10;
// Trials before a --cutoff-ms verdict: a first trial can be slow once (clocks, TLB), three cannot.
constexpr std::size_t kCutoffTrials = 3;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

// A device buffer with optional guard bytes before and after the tensor.
struct DeviceBuffer {
  std::byte* base = nullptr;
  std::size_t bytes = 0, guard = 0;
  std::string name;
  void* ptr() const { return base + guard; }
};

// One set of argument buffers in ABI order (inputs, params, outputs).
struct Group {
  std::vector<DeviceBuffer> in, par, out;
  std::vector<void*> args;
};

// What one call left behind, kept instead of the outputs themselves (which stay on the GPU).
struct CallSummary {
  std::string label;
  std::vector<Digest> outputs;     // the candidate's outputs
  std::vector<Digest> references;  // the reference outputs of the same set
  std::vector<Comparison> comparisons;
  // Per output: the accuracy rule's verdict against the float64 reference, where it was asked.
  std::vector<std::optional<AccuracyVerdict>> accuracy;
  bool all_poison() const {
    return std::all_of(outputs.begin(), outputs.end(),
                       [](const Digest& d) { return d.all_poison; });
  }
};

bool same_digests(const std::vector<Digest>& a, const std::vector<Digest>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].hash != b[i].hash) return false;
  return true;
}

class Verifier {
 public:
  explicit Verifier(const HarnessOptions& o) : opts_(o) {}
  ~Verifier();
  VerifyResult run();

 private:
  void check(cudaError_t e, const std::string& what) const;
  void load_candidate();
  void init_gpu();
  std::size_t memory_needed() const;
  DeviceBuffer alloc(const TensorDecl& d);
  Group make_group();
  void upload(Group& g, const ServedSet& set);
  CallSummary call(Group& g, int k, const std::string& label);
  // Throws too_large where the reference server could not compute a set of `need` bytes because
  // of memory the candidate keeps (gpu_memory.h, server_room_blocked).
  void room_for_server(std::size_t need);
  Tolerance tolerance_for(const TensorDecl& d) const;
  GpuTimingLock::Mode call_lock_mode() const {
    return opts_.exclusive_calls ? GpuTimingLock::Mode::exclusive : GpuTimingLock::Mode::shared;
  }
  bool rule_judges(const TensorDecl& d, const Comparison& c) const;
  void judge_against_exact(const Group& g, const ServedSet& set,
                           const std::vector<std::size_t>& outputs, CallSummary& summary);
  void record_accuracy(const AccuracyVerdict& v, const std::string& output);
  void check_guards(const DeviceBuffer& b, const std::string& label) const;
  void save_mismatch(const DeviceBuffer& out, const ServedTensor& ref, int k);
  void classify(const std::vector<CallSummary>& calls, const CallSummary& repeat);
  void time_candidate(Group& g);

  HarnessOptions opts_;
  HarnessSpec spec_;
  std::unique_ptr<RefClient> refs_;
  void* handle_ = nullptr;
  LaunchFn launch_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  bool launched_ = false;           // after the first launch, CUDA errors are the candidate's
  std::size_t candidate_kept_ = 0;  // the free GPU memory's drop across the first call
  KernelTrace trace_;
  std::uint32_t stream_id_ = 0;
  double kernels_per_call_ = 0;
  double refs_ms_ = 0;              // the server's compute time for the sets this run fetched
  double verify_lock_wait_ms_ = 0;  // waiting for the quiet lock (shared) before each call
  double accuracy_ratio_ = 0;       // record_accuracy's kept comparison: kernel / PyTorch error
  std::vector<void*> allocations_;
  VerifyResult result_;
};

Verifier::~Verifier() {
  trace_.stop();
  // A candidate that broke the context makes these fail; nothing to do about it at exit.
  for (void* p : allocations_) cudaFree(p);
  if (done_) cudaEventDestroy(done_);
  if (stream_) cudaStreamDestroy(stream_);
}

void Verifier::check(cudaError_t e, const std::string& what) const {
  if (e == cudaSuccess) return;
  if (launched_)
    throw Reject{VerifyStatus::launch_error,
                 "CUDA error after running the candidate (" + what + "): " + cuda_text(e)};
  throw Reject{VerifyStatus::harness_error,
               "CUDA error in the harness (" + what + "): " + cuda_text(e)};
}

void Verifier::load_candidate() {
  handle_ = dlopen(fs::absolute(opts_.lib).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw Reject{VerifyStatus::load_error, std::string("dlopen failed: ") + dlerror()};
  launch_ = reinterpret_cast<LaunchFn>(dlsym(handle_, "egg_candidate_launch"));
  if (!launch_)
    throw Reject{VerifyStatus::load_error,
                 opts_.lib.string() +
                     " does not export extern \"C\" egg_candidate_launch (compile with "
                     "-DEGG_CANDIDATE_ENTRY)"};
}

void Verifier::init_gpu() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    throw Reject{VerifyStatus::no_gpu,
                 "no CUDA device: " + (e != cudaSuccess ? cuda_text(e) : "0 devices")};
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  };
  result_.gpu = {prop.name, std::to_string(prop.major) + "." + std::to_string(prop.minor),
                 version(drv), version(rt)};
  // Non-blocking, so that work a candidate puts on the legacy default stream is not silently
  // ordered with ours: that is a side-stream launch for callers with their own streams.
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&done_), "cudaEventCreate");
  if (opts_.cupti) {
    if (trace_.start())
      stream_id_ = trace_.stream_id(stream_);
    else
      std::fprintf(stderr, "egg-harness: warning: %s; no kernel trace, no side-stream check\n",
                   trace_.error().c_str());
  }
}

DeviceBuffer Verifier::alloc(const TensorDecl& d) {
  DeviceBuffer b;
  b.name = d.name;
  b.bytes = static_cast<std::size_t>(d.bytes());
  b.guard = opts_.guard ? kGuardBytes : 0;
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(b.bytes + 2 * b.guard, 1)), "cudaMalloc " + d.name);
  allocations_.push_back(p);
  b.base = static_cast<std::byte*>(p);
  if (b.guard) {
    check(cudaMemset(b.base, kGuardByte, b.guard), "guard");
    check(cudaMemset(b.base + b.guard + b.bytes, kGuardByte, b.guard), "guard");
  }
  return b;
}

// Free device memory, for GpuMemoryAdmission (0 when it cannot be read).
std::size_t free_gpu_memory() {
  std::size_t free = 0, total = 0;
  return cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
}

std::size_t Verifier::memory_needed() const {
  std::size_t group = 0;
  for (const auto* v : {&spec_.inputs, &spec_.params, &spec_.outputs})
    for (const auto& d : *v)
      group += static_cast<std::size_t>(d.bytes()) + (opts_.guard ? 2 * kGuardBytes : 0);
  std::size_t timing = 0;
  if (opts_.time) {
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    timing = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 16u << 20) +
             2 * std::clamp<std::size_t>(group / 2, 256u << 20, 1u << 30);
  }
  // The candidate's own workspace (cuBLAS, cuDNN, intermediates of a multi-kernel plan) comes on
  // top, and room for the server to compute the sets it does not keep resident while this run holds
  // its buffers (else two such runs could each hold what the other's server waits for).
  return 2 * group + timing + (256u << 20) + refs_->need_bytes();
}

Group Verifier::make_group() {
  Group g;
  for (const auto& d : spec_.inputs) g.in.push_back(alloc(d));
  for (const auto& d : spec_.params) g.par.push_back(alloc(d));
  for (const auto& d : spec_.outputs) g.out.push_back(alloc(d));
  for (auto* v : {&g.in, &g.par, &g.out})
    for (const auto& b : *v) g.args.push_back(b.ptr());
  return g;
}

void Verifier::upload(Group& g, const ServedSet& set) {
  auto copy = [&](const DeviceBuffer& dst, const ServedTensor& src) {
    if (src.bytes != dst.bytes)
      throw Reject{VerifyStatus::spec_error,
                   "reference tensor '" + src.name + "' has " + std::to_string(src.bytes) +
                       " bytes, the spec says " + std::to_string(dst.bytes)};
    if (dst.bytes)
      check(cudaMemcpy(dst.ptr(), src.ptr, dst.bytes, cudaMemcpyDeviceToDevice),
            "upload " + src.name);
  };
  if (set.inputs.size() != g.in.size() || set.params.size() != g.par.size() ||
      set.outputs.size() != g.out.size())
    throw Reject{VerifyStatus::spec_error,
                 "the reference server's set " + std::to_string(set.index) +
                     " does not have the spec's inputs, params and outputs"};
  for (std::size_t i = 0; i < g.in.size(); ++i) copy(g.in[i], set.inputs[i]);
  for (std::size_t i = 0; i < g.par.size(); ++i) copy(g.par[i], set.params[i]);
}

void Verifier::check_guards(const DeviceBuffer& b, const std::string& label) const {
  if (!b.guard) return;
  std::vector<unsigned char> host(b.guard);
  for (int side = 0; side < 2; ++side) {
    const std::byte* src = side == 0 ? b.base : b.base + b.guard + b.bytes;
    check(cudaMemcpy(host.data(), src, b.guard, cudaMemcpyDeviceToHost), "guard check");
    const auto n =
        std::count_if(host.begin(), host.end(), [](unsigned char c) { return c != kGuardByte; });
    if (n == 0) continue;
    std::size_t at = 0;
    if (side == 0) {  // the write nearest to the buffer
      for (std::size_t i = host.size(); i-- > 0;)
        if (host[i] != kGuardByte) {
          at = host.size() - i;
          break;
        }
    } else {
      for (std::size_t i = 0; i < host.size(); ++i)
        if (host[i] != kGuardByte) {
          at = i;
          break;
        }
    }
    throw Reject{VerifyStatus::out_of_bounds,
                 label + ": the candidate wrote " + std::to_string(n) + " byte(s) " +
                     (side == 0 ? "before the start" : "after the end") + " of '" + b.name + "' (" +
                     std::to_string(b.bytes) + " bytes; nearest at " + (side == 0 ? "-" : "+") +
                     std::to_string(at + (side == 0 ? 0 : 0)) + " bytes " +
                     (side == 0 ? "before it" : "past its end") + "): an out-of-bounds write"};
  }
}

void Verifier::save_mismatch(const DeviceBuffer& out, const ServedTensor& ref, int k) {
  // Only small tensors (raw bytes, the spec's dtype and shape): a generation's disk use stays
  // bounded (docs/gpu.md).
  constexpr std::size_t kMaxSaved = 64u << 20;
  if (!result_.files.empty() || out.bytes > kMaxSaved) return;
  const std::string stem = "mismatch_set" + std::to_string(k) + "_" + out.name;
  std::vector<char> host(out.bytes);
  auto save = [&](const void* src, const std::string& file) {
    check(cudaMemcpy(host.data(), src, out.bytes, cudaMemcpyDeviceToHost), "download " + out.name);
    std::ofstream f(opts_.work / file, std::ios::binary);
    f.write(host.data(), static_cast<std::streamsize>(host.size()));
    if (f) result_.files.push_back(file);
  };
  save(out.ptr(), stem + "_out.bin");
  save(ref.ptr, stem + "_ref.bin");
}

void Verifier::room_for_server(std::size_t need) {
  // Only once the candidate has run (what it keeps is then on the GPU) and only where the server
  // computes sets on demand (need_bytes 0: every set resident).
  if (!launched_ || refs_->need_bytes() == 0) return;
  if (auto why = server_room_blocked(need, free_gpu_memory, candidate_kept_,
                                     std::chrono::seconds(120), opts_.marker()))
    throw Reject{VerifyStatus::too_large, *why};
}

CallSummary Verifier::call(Group& g, int k, const std::string& label) {
  const ServedSet* served = nullptr;
  room_for_server(refs_->need_bytes());
  try {
    served = &refs_->fetch(k);
  } catch (const RefError& e) {
    throw Reject{e.op_fault ? VerifyStatus::spec_error : VerifyStatus::harness_error, e.what()};
  }
  refs_ms_ += served->compute_ms;
  const ServedSet& set = *served;
  // The candidate's runs and the comparisons are GPU work: never during another job's timed span
  // (base/gpu_lock.h). Taken after the set is fetched, so nothing is awaited while it is held.
  std::optional<GpuTimingLock> quiet;
  quiet.emplace(gpu_lock_path(), opts_.marker(), call_lock_mode());
  verify_lock_wait_ms_ += quiet->waited_ms();
  upload(g, set);
  for (const auto& b : g.out) check(cudaMemset(b.ptr(), kPoisonByte, b.bytes), "poison outputs");
  check(cudaDeviceSynchronize(), "before launch");
  if (trace_.active()) trace_.take();
  const std::uint64_t t0 = trace_.active() ? trace_.now() : 0;
  const bool first = !launched_;
  const std::size_t free_before = first ? free_gpu_memory() : 0;
  launched_ = true;
  const cudaError_t launch_error = launch_(g.args.data(), stream_);
  if (launch_error == cudaErrorMemoryAllocation)
    throw Reject{VerifyStatus::gpu_busy, label + ": egg_candidate_launch ran out of GPU memory (" +
                                             cuda_text(launch_error) +
                                             "), which other jobs may hold"};
  if (launch_error != cudaSuccess)
    throw Reject{VerifyStatus::launch_error,
                 label + ": egg_candidate_launch returned " + cuda_text(launch_error)};
  check(cudaEventRecord(done_, stream_), label + ": the candidate's work on the given stream");
  check(cudaEventSynchronize(done_), label + ": the candidate's work on the given stream");
  const std::uint64_t t_done = trace_.active() ? trace_.now() : 0;
  check(cudaDeviceSynchronize(), label + ": device-wide synchronize");
  check(cudaGetLastError(), label);
  if (first) {  // what the candidate keeps after its call (workspaces it allocated and holds)
    const std::size_t free_after = free_gpu_memory();
    candidate_kept_ = free_before > free_after ? free_before - free_after : 0;
  }
  if (trace_.active()) {
    int kernels = 0;
    for (const auto& kt : trace_.take()) {
      if (kt.start < t0) continue;
      ++kernels;
      if (kt.stream_id != stream_id_ && kt.end > t_done)
        throw Reject{VerifyStatus::side_stream,
                     label + ": kernel '" + kt.name + "' ran on another stream (CUPTI stream " +
                         std::to_string(kt.stream_id) + ", the given stream is " +
                         std::to_string(stream_id_) + ") and was still running " +
                         fmt((kt.end - t_done) / 1000.0) +
                         " us after the given stream was done; launch(args, stream) must put all "
                         "its work on "
                         "`stream` or join its side streams to it before returning"};
    }
    kernels_per_call_ = kernels;
  }
  for (auto* v : {&g.in, &g.par, &g.out})
    for (const auto& b : *v) check_guards(b, label);
  // Inputs and params must be exactly what was uploaded (compared on the GPU).
  auto unchanged = [&](const DeviceBuffer& b, const ServedTensor& orig, const char* kind) {
    std::int64_t at = -1;
    check(first_difference_on_device(b.ptr(), orig.ptr, b.bytes, stream_, at), "input check");
    if (at < 0) return;
    throw Reject{VerifyStatus::input_modified, label + ": the candidate modified " + kind + " '" +
                                                   b.name + "' (first changed byte at offset " +
                                                   std::to_string(at) +
                                                   "); inputs and parameters are read-only"};
  };
  for (std::size_t i = 0; i < g.in.size(); ++i) unchanged(g.in[i], set.inputs[i], "input");
  for (std::size_t i = 0; i < g.par.size(); ++i) unchanged(g.par[i], set.params[i], "parameter");
  CallSummary summary;
  summary.label = label;
  std::vector<std::size_t> by_rule;  // outputs the accuracy rule judges
  for (std::size_t i = 0; i < g.out.size(); ++i) {
    const TensorDecl& d = spec_.outputs[i];
    const Tolerance tol = tolerance_for(d);
    Digest out_digest, ref_digest;
    check(digest_on_device(g.out[i].ptr(), g.out[i].bytes, kPoisonByte, stream_, out_digest),
          "digest");
    check(digest_on_device(set.outputs[i].ptr, set.outputs[i].bytes, kPoisonByte, stream_,
                           ref_digest),
          "digest");
    Comparison c;
    check(compare_on_device(g.out[i].ptr(), d.dtype, set.outputs[i].ptr, d.dtype, d.numel(), tol,
                            stream_, c),
          "compare");
    if (!c.ok()) save_mismatch(g.out[i], set.outputs[i], k);
    if (rule_judges(d, c)) by_rule.push_back(i);
    summary.outputs.push_back(out_digest);
    summary.references.push_back(ref_digest);
    summary.comparisons.push_back(c);
  }
  summary.accuracy.resize(g.out.size());
  if (!by_rule.empty()) {
    // The server computes the float64 outputs under the quiet lock itself: ours goes first.
    quiet.reset();
    judge_against_exact(g, set, by_rule, summary);
  }
  try {
    refs_->release();
  } catch (const RefError& e) {
    throw Reject{VerifyStatus::harness_error, e.what()};
  }
  return summary;
}

Tolerance Verifier::tolerance_for(const TensorDecl& d) const {
  Tolerance tol = default_tolerance(d.dtype);
  if (opts_.atol) tol.atol = *opts_.atol;
  if (opts_.rtol) tol.rtol = *opts_.rtol;
  return tol;
}

bool Verifier::rule_judges(const TensorDecl& d, const Comparison& c) const {
  const bool floating = d.dtype == "float32" || d.dtype == "float16" || d.dtype == "bfloat16";
  if (!floating) return false;
  return opts_.accuracy == AccuracyMode::on ||
         (opts_.accuracy == AccuracyMode::automatic && !c.ok());
}

void Verifier::judge_against_exact(const Group& g, const ServedSet& set,
                                   const std::vector<std::size_t>& outputs, CallSummary& summary) {
  const ExactOutputs* exact = nullptr;
  room_for_server(2 * refs_->need_bytes());  // float64 doubles the set (refserver.py, exact)
  try {
    exact = &refs_->fetch_exact();
  } catch (const RefError& e) {
    throw Reject{e.op_fault ? VerifyStatus::spec_error : VerifyStatus::harness_error, e.what()};
  }
  refs_ms_ += exact->compute_ms;
  if (!exact->available) {
    result_.float64_unavailable = exact->why;
    return;
  }
  const GpuTimingLock quiet(gpu_lock_path(), opts_.marker(), call_lock_mode());
  verify_lock_wait_ms_ += quiet.waited_ms();
  // Errors only: an infinite atol fails a pair only where NaN or inf differ.
  const Tolerance any{std::numeric_limits<double>::infinity(), 0.0};
  for (const std::size_t i : outputs) {
    const TensorDecl& d = spec_.outputs[i];
    const ServedTensor& r64 = exact->outputs.at(i);
    if (r64.dtype != "float64" || r64.bytes != static_cast<std::size_t>(d.numel()) * 8) {
      result_.float64_unavailable = "the float64 output '" + r64.name + "' is " + r64.dtype;
      continue;
    }
    AccuracyInputs in;
    check(compare_on_device(set.outputs[i].ptr, d.dtype, r64.ptr, "float64", d.numel(),
                            tolerance_for(d), stream_, in.torch_vs_exact),
          "compare with float64");
    check(compare_on_device(g.out[i].ptr(), d.dtype, r64.ptr, "float64", d.numel(), any, stream_,
                            in.kernel_vs_exact),
          "compare with float64");
    check(compare_on_device(g.out[i].ptr(), d.dtype, set.outputs[i].ptr, d.dtype, d.numel(), any,
                            stream_, in.kernel_vs_torch_special),
          "compare NaN and inf");
    summary.accuracy[i] = judge_accuracy(in, opts_.accuracy, opts_.accuracy_factor);
  }
}

// Keeps the judged comparison nearest to failing (or the failing one).
void Verifier::record_accuracy(const AccuracyVerdict& v, const std::string& output) {
  const double ratio =
      v.kernel_max_abs / std::max({v.torch_max_abs, v.floor, std::numeric_limits<double>::min()});
  AccuracyRecord& a = result_.accuracy ? *result_.accuracy : result_.accuracy.emplace();
  ++a.judged;
  if (!a.passed || (a.judged > 1 && v.ok() && ratio <= accuracy_ratio_)) return;
  accuracy_ratio_ = ratio;
  a.mode = std::string(accuracy_mode_name(opts_.accuracy));
  a.output = output;
  a.factor = v.factor;
  a.passed = v.ok();
  a.torch_max_abs_error = v.torch_max_abs;
  a.kernel_max_abs_error = v.kernel_max_abs;
  a.torch_mean_abs_error = v.torch_mean_abs;
  a.kernel_mean_abs_error = v.kernel_mean_abs;
}

std::string index_text(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string accuracy_message(const std::string& label, const std::string& output,
                             const AccuracyVerdict& v, Tolerance tol, AccuracyMode mode) {
  std::string msg =
      label + ", output '" + output + "', judged against the model computed in float64 (" +
      (mode == AccuracyMode::on ? std::string("the accuracy rule is on")
                                : "PyTorch's own output misses it beyond " + fmt(tol.atol) + " + " +
                                      fmt(tol.rtol) + "*|ref|") +
      "): ";
  if (v.outcome == AccuracyOutcome::special_values)
    return msg + "NaN or inf where PyTorch's output has a number, or the other way round";
  return msg + "max abs error " + fmt(v.kernel_max_abs) + " (PyTorch's " + fmt(v.torch_max_abs) +
         "), mean abs error " + fmt(v.kernel_mean_abs) + " (PyTorch's " + fmt(v.torch_mean_abs) +
         "); at most " + fmt(v.factor) + " times PyTorch's own error passes";
}

void Verifier::classify(const std::vector<CallSummary>& calls, const CallSummary& repeat) {
  auto set_label = [&](std::size_t k) {
    return "set " + std::to_string(k) + " (seed " + std::to_string(k) +
           (k == 0 ? ", declared inputs)" : ")");
  };
  if (calls[0].all_poison())
    throw Reject{VerifyStatus::nan_output, set_label(0) +
                                               ": the candidate wrote nothing to its outputs "
                                               "(they are NaN-poisoned before each launch)"};
  for (std::size_t k = 1; k < calls.size(); ++k)
    if (calls[k].all_poison())
      throw Reject{
          VerifyStatus::cached_result,
          set_label(k) +
              ": the candidate wrote nothing to its outputs although an earlier call did: it "
              "skips work it believes it has done (a result cached across calls)"};
  // Varied inputs must vary the output.
  auto refs_differ = [&](std::size_t a, std::size_t b) {
    return !same_digests(calls[a].references, calls[b].references);
  };
  if (calls.size() >= 2) {
    bool all_same = true, refs_vary = false;
    for (std::size_t k = 1; k < calls.size(); ++k) {
      all_same = all_same && same_digests(calls[k].outputs, calls[0].outputs);
      refs_vary = refs_vary || refs_differ(k, 0);
    }
    if (all_same && refs_vary)
      throw Reject{
          VerifyStatus::constant_output,
          "the output is bit-for-bit the same for all " + std::to_string(calls.size()) +
              " input sets although the references differ: the candidate ignores its inputs"};
    for (std::size_t k = 1; k < calls.size(); ++k)
      for (std::size_t j = 0; j < k; ++j)
        if (same_digests(calls[k].outputs, calls[j].outputs) && refs_differ(k, j))
          throw Reject{
              VerifyStatus::cached_result,
              set_label(k) + " returned bit-for-bit what " + set_label(j) +
                  " returned although inputs and reference differ: a result cached across calls"};
  }
  auto judge = [&](const CallSummary& call, const std::string& label, VerifyStatus on_fail) {
    for (std::size_t i = 0; i < call.comparisons.size(); ++i) {
      const TensorDecl& d = spec_.outputs[i];
      const Tolerance tol = tolerance_for(d);
      const Comparison& c = call.comparisons[i];
      const std::optional<AccuracyVerdict>& acc = call.accuracy[i];
      result_.max_abs_error = std::max(result_.max_abs_error, c.max_abs_error);
      result_.max_rel_error = std::max(result_.max_rel_error, c.max_rel_error);
      if (result_.output.empty()) result_.atol = tol.atol, result_.rtol = tol.rtol;
      if (acc && acc->applied()) {
        record_accuracy(*acc, d.name);
        if (acc->ok()) continue;
        // Unwritten (NaN-poisoned) elements are skipped work, whichever rule found them.
        throw Reject{c.nan_count > 0 && on_fail == VerifyStatus::mismatch ? VerifyStatus::nan_output
                                                                          : on_fail,
                     accuracy_message(label, d.name, *acc, tol, opts_.accuracy)};
      }
      if (c.ok()) continue;
      result_.output = d.name;
      result_.atol = tol.atol;
      result_.rtol = tol.rtol;
      result_.max_abs_error = c.max_abs_error;
      result_.max_rel_error = c.max_rel_error;
      result_.first_bad_index = c.first_bad_index;
      result_.bad_value = c.bad_value;
      result_.ref_value = c.ref_value;
      result_.bad_count = c.bad_count;
      std::string msg =
          label + ", output '" + d.name + "': " + std::to_string(c.bad_count) + " of " +
          std::to_string(c.count) + " elements outside |out-ref| <= " + fmt(tol.atol) + " + " +
          fmt(tol.rtol) + "*|ref|; max abs error " + fmt(c.max_abs_error) + ", max rel error " +
          fmt(c.max_rel_error) + "; first at index " + std::to_string(c.first_bad_index) + " " +
          index_text(c.first_bad_index, d.shape) + ": got " + fmt(c.bad_value) + ", expected " +
          fmt(c.ref_value);
      if (acc)  // asked, and PyTorch's own output is determined to the tolerance
        msg +=
            "; PyTorch's own output is within the tolerance of the model computed in float64 "
            "(max abs error " +
            fmt(acc->torch_max_abs) + "), so the tolerance check stands";
      else if (!result_.float64_unavailable.empty())
        msg += "; no float64 reference to judge accuracy by (" + result_.float64_unavailable + ")";
      VerifyStatus status = on_fail;
      if (c.nan_count > 0 && on_fail == VerifyStatus::mismatch) {
        status = VerifyStatus::nan_output;
        msg += "; " + std::to_string(c.nan_count) +
               " elements are NaN where the reference is a number: outputs are NaN-poisoned before "
               "each launch, "
               "so these were never written (skipped work) or computed as NaN";
      }
      throw Reject{status, msg};
    }
  };
  for (std::size_t k = 0; k < calls.size(); ++k)
    judge(calls[k], set_label(k), VerifyStatus::mismatch);
  result_.deterministic_bitwise = same_digests(repeat.outputs, calls[0].outputs);
  judge(repeat, set_label(0) + " run again", VerifyStatus::nondeterministic);
}

void Verifier::time_candidate(Group& g) {
  Timing t;
  try {
    upload(g, refs_->fetch(0));
    refs_->release();
  } catch (const RefError& e) {
    throw Reject{VerifyStatus::harness_error, e.what()};
  }
  // Nobody else times, verifies or compiles while we time (base/gpu_lock.h).
  const GpuTimingLock lock(gpu_lock_path(), opts_.marker());
  result_.phases_ms["gpu_lock_wait"] = lock.waited_ms();
  if (!lock.error().empty())
    std::fprintf(stderr, "egg-harness: warning: %s\n", lock.error().c_str());
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  t.l2_flush_bytes = std::max<std::int64_t>(2 * std::int64_t{l2}, 16 << 20);
  void* flush = nullptr;
  check(cudaMalloc(&flush, static_cast<std::size_t>(t.l2_flush_bytes)), "L2 flush buffer");
  allocations_.push_back(flush);
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  auto flush_l2 = [&] {
    check(cudaMemsetAsync(flush, 0, static_cast<std::size_t>(t.l2_flush_bytes), stream_),
          "L2 flush");
  };
  t.warmups = 3;
  for (int i = 0; i < t.warmups; ++i) {
    flush_l2();
    check(launch_(g.args.data(), stream_), "warm-up launch");
  }
  check(cudaDeviceSynchronize(), "warm-up");
  if (trace_.active()) trace_.take();
  const char* hold_env = std::getenv("EGG_HARNESS_HOLD");
  bool use_hold = !(hold_env && std::string(hold_env) == "off");
  t.method = use_hold ? "held stream" : "events";
  StreamHold hold;
  std::vector<double> event_ms;
  std::vector<std::uint64_t> marks = {trace_.active() ? trace_.now() : 0};
  const auto t_begin = Clock::now();
  while (true) {
    // The flush keeps the GPU busy while the host enqueues the launch, so launch latency stays out.
    flush_l2();
    if (use_hold) {
      // Where the stream cannot be held, time with plain events rather than fail the candidate.
      if (const cudaError_t e = hold.hold(stream_); e != cudaSuccess) {
        cudaGetLastError();
        use_hold = false;
        t.method = std::string("events (stream hold unavailable: ") + cudaGetErrorString(e) + ")";
      }
    }
    const cudaError_t started = cudaEventRecord(start, stream_);
    const cudaError_t launched = started == cudaSuccess ? launch_(g.args.data(), stream_) : started;
    const cudaError_t stopped = cudaEventRecord(stop, stream_);
    // Released after the stop event is enqueued, and before any check can throw.
    if (use_hold) hold.release();
    check(launched, "timed launch");
    check(stopped, "event");
    // Device-wide: work a candidate left on other streams finishes inside its own trial.
    check(cudaDeviceSynchronize(), "timed trial");
    if (use_hold && hold.timed_out()) ++t.hold_timeouts;
    if (trace_.active()) marks.push_back(trace_.now());
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event time");
    event_ms.push_back(ms);
    const double wall_s = ms_since(t_begin) / 1000.0;
    const bool enough =
        static_cast<int>(event_ms.size()) >= opts_.min_trials && wall_s >= opts_.min_time_s;
    const bool cannot_win =
        opts_.time_cutoff_ms && event_ms.size() >= kCutoffTrials &&
        *std::min_element(event_ms.begin(), event_ms.end()) > *opts_.time_cutoff_ms;
    if (cannot_win) t.cut_short = true;
    if (enough || cannot_win || event_ms.size() >= 100000 ||
        (wall_s >= 30.0 && event_ms.size() >= 3))
      break;
  }
  t.trials = static_cast<int>(event_ms.size());
  const Summary es = summarize(event_ms);
  t.event_ms = {es.median, es.p10, es.p90};
  if (trace_.active()) {
    const KernelBreakdown kb = kernel_breakdown(trace_.take(), marks);
    const Summary ks = summarize(kb.trial_ms);
    t.cupti_kernel_ms = {ks.median, ks.p10, ks.p90};
    t.kernels_per_launch = static_cast<double>(kb.kernels) / static_cast<double>(event_ms.size());
    t.kernels = kb.per_kernel;
  }
  for (const auto* v : {&spec_.inputs, &spec_.params, &spec_.outputs})
    for (const auto& d : *v) t.bytes_moved += d.bytes();
  if (t.event_ms.median > 0)
    t.achieved_gbps = static_cast<double>(t.bytes_moved) / t.event_ms.median / 1e6;
  // The ceiling to compare with: a device-to-device copy moving as many bytes (read + write).
  // Copy bandwidth is flat beyond a few hundred MB: at most 1 GiB, so large ops need no more
  // memory.
  const std::size_t copy_bytes =
      std::clamp<std::size_t>(static_cast<std::size_t>(t.bytes_moved / 2), 256u << 20, 1u << 30);
  void *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, copy_bytes), "copy buffer");
  allocations_.push_back(a);
  check(cudaMalloc(&b, copy_bytes), "copy buffer");
  allocations_.push_back(b);
  check(cudaMemset(a, 1, copy_bytes), "copy buffer");
  std::vector<double> copy_ms;
  for (int i = 0; i < 23; ++i) {
    check(cudaEventRecord(start, stream_), "event");
    check(cudaMemcpyAsync(b, a, copy_bytes, cudaMemcpyDeviceToDevice, stream_), "copy");
    check(cudaEventRecord(stop, stream_), "event");
    check(cudaEventSynchronize(stop), "copy");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event time");
    if (i >= 3) copy_ms.push_back(ms);
  }
  const double copy_median = summarize(copy_ms).median;
  if (copy_median > 0) t.copy_gbps = 2.0 * static_cast<double>(copy_bytes) / copy_median / 1e6;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  result_.timing = t;
}

VerifyResult Verifier::run() {
  const auto t_total = Clock::now();
  try {
    // 1. Static checks: no PyTorch inside the candidate.
    if (!opts_.source.empty()) {
      std::ifstream in(opts_.source);
      if (!in)
        throw Reject{VerifyStatus::spec_error,
                     "cannot read the candidate source " + opts_.source.string()};
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      const auto findings = scan_source_text(text);
      if (!findings.empty())
        throw Reject{
            VerifyStatus::forbidden_source,
            opts_.source.string() + " uses PyTorch (" + describe(findings) +
                "); kernels must be plain CUDA: no torch/ATen/c10 in device code or in launch"};
    }
    try {
      const auto findings = scan_library(opts_.lib);
      if (!findings.empty())
        throw Reject{VerifyStatus::forbidden_source, opts_.lib.string() + " links PyTorch (" +
                                                         describe(findings) +
                                                         "); kernels must be plain CUDA"};
    } catch (const std::runtime_error& e) {
      throw Reject{VerifyStatus::load_error, e.what()};
    }
    // 2. The spec, and the reference server (which holds the sets on the GPU).
    auto t = Clock::now();
    try {
      spec_ = load_harness_spec(opts_.spec);
    } catch (const std::exception& e) {
      throw Reject{VerifyStatus::spec_error, e.what()};
    }
    try {
      refs_ = std::make_unique<RefClient>(opts_.refs, opts_.marker());
    } catch (const RefError& e) {
      throw Reject{VerifyStatus::harness_error, e.what()};
    }
    const int n_sets = opts_.max_sets > 0 ? std::min(opts_.max_sets, refs_->sets()) : refs_->sets();
    if (n_sets < 1)
      throw Reject{VerifyStatus::spec_error, "the reference server has no input sets"};
    result_.phases_ms["connect_refs"] = ms_since(t);
    // 3. The GPU, its memory, and the candidate.
    t = Clock::now();
    init_gpu();
    load_candidate();
    result_.phases_ms["init_gpu"] = ms_since(t);
    // 4. Every set in turn; set 1 reuses set 0's buffers (a pointer-keyed cache returns stale
    //    data), sets 2, 4, ... use a second group; the declared set runs again at the end.
    t = Clock::now();
    Group a, b;
    {
      const GpuMemoryAdmission admission(memory_needed(), free_gpu_memory, opts_.marker());
      if (!admission.admitted()) throw Reject{VerifyStatus::gpu_busy, admission.error()};
      result_.phases_ms["gpu_memory_wait"] = admission.waited_ms();
      a = make_group();
      b = make_group();
    }
    std::vector<CallSummary> calls;
    for (int k = 0; k < n_sets; ++k)
      calls.push_back(call(k >= 2 && k % 2 == 0 ? b : a, k, "set " + std::to_string(k)));
    const CallSummary repeat = call(b, 0, "set 0 run again");
    result_.phases_ms["verify_calls"] = ms_since(t);
    result_.sets_checked = n_sets;
    const auto t_classify = Clock::now();
    classify(calls, repeat);
    result_.phases_ms["verify_compare"] = ms_since(t_classify);
    result_.phases_ms["verify"] = ms_since(t);
    // 5. Timing.
    if (opts_.time) {
      t = Clock::now();
      time_candidate(a);
      result_.phases_ms["time"] = ms_since(t);
    }
    result_.status = VerifyStatus::verified;
    result_.message = "verified on " + std::to_string(result_.sets_checked) + " input sets" +
                      (trace_.active() ? "" : " (" + trace_.error() + ")");
  } catch (const Reject& r) {
    result_.status = r.status;
    result_.message = r.message;
  } catch (const std::exception& e) {
    result_.status = VerifyStatus::harness_error;
    result_.message = std::string("internal error in egg-harness (please report it): ") + e.what();
  }
  if (refs_) {  // the server's share: computing sets, and all the time spent waiting for its
                // replies
    result_.phases_ms["refs_compute"] = refs_ms_;
    result_.phases_ms["refs_wait"] = refs_->waited_ms();
  }
  result_.phases_ms["verify_lock_wait"] = verify_lock_wait_ms_;
  result_.phases_ms["total"] = ms_since(t_total);
  return result_;
}

}  // namespace

std::filesystem::path HarnessOptions::marker() const {
  return wait_marker.empty() ? work / kGpuLockWaitMarker : wait_marker;
}

VerifyResult verify_candidate(const HarnessOptions& opts) {
  Verifier v(opts);
  return v.run();
}

}  // namespace egg::harness
