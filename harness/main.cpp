// egg-harness: verifies and times one candidate kernel against the frontend's reference tensors.
//
//   egg-harness verify --lib cand.so --spec spec.json --refs <socket> --work <dir> --out
//   result.json
//                      [--source cand.cu] [--atol A --rtol R] [--time] [--strict]
//                      [--max-sets N] [--no-guard] [--no-cupti] [--timeout S] [--wait-marker F]
//                      [--cutoff-ms MS] [--exclusive-calls] [--accuracy off|auto|on]
//                      [--accuracy-factor K]
//
// Exit status: 0 verified, 10 the candidate was rejected (result.json says why), 2 usage error,
// 3 harness or spec error, 4 no GPU. result.json is written in every case but a usage error.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "base/child_env.h"
#include "base/quote.h"
#include "runner.h"
#include "verify.h"

namespace fs = std::filesystem;
using namespace egg;
using namespace egg::harness;

namespace {

constexpr const char* kUsage =
    "usage: egg-harness verify --lib <cand.so> --spec <spec.json> --refs <socket> --work <dir> "
    "--out <result.json>\n"
    "                          [--source <cand.cu>] [--atol A] [--rtol R] [--time] [--strict]\n"
    "                          [--max-sets N] [--no-guard] [--no-cupti] [--timeout SECONDS]\n"
    "                          [--wait-marker <file>] [--cutoff-ms MS] [--exclusive-calls]\n"
    "                          [--accuracy off|auto|on] [--accuracy-factor K]\n"
    "\n"
    "  --lib      the candidate: a shared library exporting\n"
    "             extern \"C\" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t)\n"
    "  --spec     spec.json from the frontend\n"
    "  --refs     the reference server's socket (python3 -m egg_frontend serve; egg-gen starts "
    "it)\n"
    "  --work     folder for logs and mismatching tensors\n"
    "  --source   the candidate's .cu, scanned for torch/ATen/c10 use\n"
    "  --atol/--rtol  tolerance (default per dtype: fp32 1e-4/1e-4, fp16/bf16 1e-2/1e-2)\n"
    "  --accuracy  judge floating outputs against a float64 computation of the model, passing "
    "one\n"
    "             whose max and mean error are at most K times PyTorch's own (default K = 2):\n"
    "             auto (default) where PyTorch's output misses float64 beyond the tolerance,\n"
    "             on for every output, off never\n"
    "  --time     time the candidate (CUDA events, L2 flushed, CUPTI kernel time)\n"
    "  --strict   first run compute-sanitizer memcheck on the candidate\n"
    "  --timeout  exit with status 'timeout' after this many seconds (egg-gen's runner also "
    "kills)\n"
    "  --cutoff-ms  with --time: stop timing after 3 trials if even the fastest took longer "
    "(a\n"
    "             candidate that cannot beat the best so far); the result says cut_short\n"
    "  --wait-marker  the file that exists while this run waits for the GPU lock, GPU memory or "
    "the\n"
    "             reference server, so the parent's time limit pauses (default "
    "<work>/gpu-lock.wait)\n"
    "  --exclusive-calls  hold the GPU lock exclusively around each verification call (a "
    "profiler\n"
    "             such as ncu replays them: a timed span); the caller must not hold it\n"
    "\n"
    "  EGG_HARNESS_GUARD=off in the environment is --no-guard (a timing diagnostic: pass it on "
    "from\n"
    "  egg-gen with EGG_PASS_ENV=EGG_HARNESS_GUARD)\n";

constexpr int kExitVerified = 0, kExitRejected = 10, kExitUsage = 2, kExitInternal = 3,
              kExitNoGpu = 4;
constexpr int kSanitizerErrorExit = 86;

int exit_code_for(VerifyStatus s) {
  if (s == VerifyStatus::verified) return kExitVerified;
  if (s == VerifyStatus::no_gpu) return kExitNoGpu;
  if (is_candidate_failure(s)) return kExitRejected;
  return kExitInternal;
}

void write_result(const VerifyResult& r, const fs::path& out) {
  const fs::path tmp = out.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << to_json(r).dump(2) << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec)
    std::fprintf(stderr, "egg: error: cannot write %s: %s\n", out.c_str(), ec.message().c_str());
}

std::string find_sanitizer() {
  for (const char* var : {"EGG_COMPUTE_SANITIZER"})
    if (const char* v = std::getenv(var); v && *v) return v;
  std::vector<fs::path> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(fs::path(v) / "bin");
  dirs.push_back("/usr/local/cuda/bin");
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (std::size_t s = 0, e; s <= p.size(); s = e + 1) {
      e = p.find(':', s);
      if (e == std::string::npos) e = p.size();
      if (e > s) dirs.emplace_back(p.substr(s, e - s));
    }
  }
  for (const auto& d : dirs)
    if (::access((d / "compute-sanitizer").c_str(), X_OK) == 0)
      return (d / "compute-sanitizer").string();
  return {};
}

// The lines of a sanitizer log that say what went wrong.
std::string sanitizer_summary(const fs::path& log) {
  std::ifstream in(log);
  std::string line, out;
  int kept = 0;
  while (std::getline(in, line) && kept < 8) {
    if (line.find("=========") == std::string::npos) continue;
    // The error's kind ("Invalid __global__ read", "Program hit cudaError..."), where it was
    // ("at ... in kernel"), the address and the count.
    if (line.find("Invalid") != std::string::npos ||
        line.find("Program hit") != std::string::npos || line.find("Error") != std::string::npos ||
        line.find(" at ") != std::string::npos || line.find("Address") != std::string::npos ||
        line.find("ERROR SUMMARY") != std::string::npos) {
      out += (out.empty() ? "" : "\n") + line;
      ++kept;
    }
  }
  return out;
}

// Re-runs this harness under compute-sanitizer memcheck on the declared set, without guard bytes
// (memcheck only sees writes outside an allocation) and without CUPTI (the sanitizer owns the
// profiling interface). Returns a rejection, or nullopt with r.sanitizer describing the outcome.
std::optional<VerifyResult> run_sanitizer(const HarnessOptions& o, VerifyResult& note) {
  const std::string sanitizer = find_sanitizer();
  if (sanitizer.empty()) {
    note.sanitizer =
        "unavailable: compute-sanitizer not found (set EGG_COMPUTE_SANITIZER or CUDA_HOME)";
    return std::nullopt;
  }
  const fs::path dir = o.work / "sanitizer";
  fs::create_directories(dir);
  const fs::path log = dir / "memcheck.log";
  std::vector<std::string> argv = {
      sanitizer, "--tool", "memcheck", "--error-exitcode", std::to_string(kSanitizerErrorExit),
      "--print-limit", "20",
      // Memory errors only: a CUDA call that fails reaches the harness as the launch's own error
      // (checked on every run, with or without the sanitizer), while a library (cuDNN,
      // cuBLASLt) may probe with calls that fail and recover inside it.
      "--report-api-errors", "no",
      // A gap after every allocation: else a read just past one buffer
      // lands in the next (cudaMalloc packs them) and looks valid.
      "--padding", "4096", "--log-file", log.string(), fs::read_symlink("/proc/self/exe").string(),
      "verify", "--lib", fs::absolute(o.lib).string(), "--spec", fs::absolute(o.spec).string(),
      "--refs", fs::absolute(o.refs).string(), "--work", dir.string(), "--out",
      (dir / "result.json").string(), "--max-sets", "1", "--no-guard", "--no-cupti",
      // Its waits (the verification calls take the GPU lock shared) pause this limit and egg-gen's.
      "--wait-marker", o.marker().string()};
  if (o.atol) argv.insert(argv.end(), {"--atol", exact_number(*o.atol)});
  if (o.rtol) argv.insert(argv.end(), {"--rtol", exact_number(*o.rtol)});
  argv.insert(argv.end(), {"--accuracy", std::string(accuracy_mode_name(o.accuracy)),
                           "--accuracy-factor", exact_number(o.accuracy_factor)});
  RunOptions limits(std::chrono::minutes(10));
  limits.pause_marker = o.marker();
  const auto outcome =
      run_process(argv, child_environment(), dir / "stdout.log", dir / "stderr.log", limits);
  note.files.push_back("sanitizer/memcheck.log");
  if (outcome.kind == ProcessOutcome::Kind::exited && outcome.exit_code == kSanitizerErrorExit) {
    VerifyResult r = note;
    r.status = VerifyStatus::sanitizer;
    r.sanitizer = "errors";
    r.message = "compute-sanitizer memcheck reported errors:\n" + sanitizer_summary(log) +
                "\n(full log: " + log.string() + ")";
    return r;
  }
  if (outcome.kind == ProcessOutcome::Kind::exited && outcome.exit_code == 0) {
    note.sanitizer = "clean (memcheck, declared set)";
    return std::nullopt;
  }
  // The candidate may have failed differently under the sanitizer; its result says how.
  std::ifstream in(dir / "result.json");
  if (in && outcome.kind == ProcessOutcome::Kind::exited && outcome.exit_code == kExitRejected) {
    VerifyResult r = result_from_json(nlohmann::json::parse(in));
    r.message = "under compute-sanitizer: " + r.message;
    r.sanitizer = "failed the run";
    r.gpu = note.gpu;
    return r;
  }
  note.sanitizer =
      "unavailable: compute-sanitizer exited (" +
      (outcome.kind == ProcessOutcome::Kind::exited ? "code " + std::to_string(outcome.exit_code)
                                                    : std::string("signal/timeout")) +
      "); see " + log.string();
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("EGG_HARNESS_UNDER_SANITIZER")) {
    // The copy of this harness that compute-sanitizer runs is not our child but the sanitizer's:
    // it dies with the sanitizer (which dies with us: run_process's PR_SET_PDEATHSIG), so killing
    // egg-harness --strict leaves no process on the GPU. Already orphaned: end now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) return kExitInternal;
  }
  if (argc < 2 || std::string(argv[1]) != "verify") {
    std::cerr << kUsage;
    return kExitUsage;
  }
  HarnessOptions o;
  if (const char* g = std::getenv("EGG_HARNESS_GUARD"); g && std::string(g) == "off")
    o.guard = false;
  double timeout_s = 0;
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--lib")
        o.lib = value();
      else if (a == "--spec")
        o.spec = value();
      else if (a == "--refs")
        o.refs = value();
      else if (a == "--work")
        o.work = value();
      else if (a == "--out")
        o.out = value();
      else if (a == "--source")
        o.source = value();
      else if (a == "--atol")
        o.atol = std::stod(value());
      else if (a == "--rtol")
        o.rtol = std::stod(value());
      else if (a == "--accuracy") {
        const std::string v = value();
        const auto m = accuracy_mode_from_name(v);
        if (!m) throw std::invalid_argument("--accuracy " + v + ": use off, auto or on");
        o.accuracy = *m;
      } else if (a == "--accuracy-factor") {
        o.accuracy_factor = std::stod(value());
        if (!(o.accuracy_factor >= 1))
          throw std::invalid_argument("--accuracy-factor must be at least 1");
      } else if (a == "--time")
        o.time = true;
      else if (a == "--strict")
        o.strict = true;
      else if (a == "--max-sets")
        o.max_sets = std::stoi(value());
      else if (a == "--no-guard")
        o.guard = false;
      else if (a == "--no-cupti")
        o.cupti = false;
      else if (a == "--exclusive-calls")
        o.exclusive_calls = true;
      else if (a == "--timeout")
        timeout_s = std::stod(value());
      else if (a == "--cutoff-ms")
        o.time_cutoff_ms = std::stod(value());
      else if (a == "--wait-marker")
        o.wait_marker = value();
      else if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      } else
        throw std::invalid_argument("unknown option " + a);
    }
    if (o.lib.empty() || o.spec.empty() || o.refs.empty() || o.work.empty() || o.out.empty())
      throw std::invalid_argument("--lib, --spec, --refs, --work and --out are required");
  } catch (const std::exception& e) {
    std::cerr << "egg: error: " << e.what() << "\n" << kUsage;
    return kExitUsage;
  }
  std::error_code ec;
  fs::create_directories(o.work, ec);
  if (timeout_s > 0) {
    // A hang inside a kernel blocks this process in the driver; the watchdog reports and exits.
    std::thread([timeout_s, out = o.out] {
      std::this_thread::sleep_for(std::chrono::duration<double>(timeout_s));
      VerifyResult r;
      r.status = VerifyStatus::timeout;
      r.message = "no result within " + std::to_string(timeout_s) +
                  " s: the candidate hangs or is far too slow";
      write_result(r, out);
      std::_Exit(kExitRejected);
    }).detach();
  }
  VerifyResult result;
  if (o.strict && !std::getenv("EGG_HARNESS_UNDER_SANITIZER")) {
    // Only after the candidate passes the cheap checks: the sanitizer run is slow.
    HarnessOptions quick = o;
    quick.time = false;
    result = verify_candidate(quick);
    if (result.status == VerifyStatus::verified) {
      ::setenv("EGG_HARNESS_UNDER_SANITIZER", "1", 1);
      if (auto rejected = run_sanitizer(o, result)) {
        write_result(*rejected, o.out);
        return exit_code_for(rejected->status);
      }
      const std::string sanitizer_note = result.sanitizer;
      const auto files = result.files;
      if (o.time) {
        result = verify_candidate(o);
        result.sanitizer = sanitizer_note;
        result.files.insert(result.files.end(), files.begin(), files.end());
      }
    }
  } else {
    result = verify_candidate(o);
  }
  write_result(result, o.out);
  std::fprintf(stderr, "egg-harness: %s: %s\n", std::string(status_name(result.status)).c_str(),
               result.message.c_str());
  return exit_code_for(result.status);
}
