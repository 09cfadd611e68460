// GPU test driver: compiles one planted candidate with nvcc, verifies it through run_candidate()
// (a child egg-harness with a time limit) and checks the status. Exits 77 (ctest: skipped) with
// the reason when there is no CUDA device.
//
//   egg_harness_gpu_test --harness H --nvcc N --python P --pythonpath D --planted DIR --make-spec F
//                        --op OP --work DIR (--case NAME --expect STATUS [--rows R --cols C]
//                        [--max-disk-mb M] [--expect-accuracy passed|failed] [--time]
//                        [--strict] | --baseline)
//
// Each case starts its own reference server (python3 -m egg_frontend serve, the path egg-gen
// uses), so every planted candidate is judged against references that live on the GPU.
#include <sys/resource.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <thread>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include <cuda_runtime_api.h>

#include "base/child_env.h"
#include "base/quote.h"
#include "runner.h"

namespace fs = std::filesystem;
using namespace egg;
using namespace egg::harness;

namespace {

constexpr int kSkip = 77;

std::string file_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs a helper command; on failure prints its log and returns false.
bool run_step(const std::string& what, const std::vector<std::string>& argv, const fs::path& dir,
              std::chrono::seconds limit,
              std::map<std::string, std::string> env = child_environment()) {
  const auto out =
      run_process(argv, env, dir / (what + ".stdout.log"), dir / (what + ".stderr.log"), limit);
  if (out.kind == ProcessOutcome::Kind::exited && out.exit_code == 0) return true;
  std::cerr << "FAILED: " << what << ": " << quote_command(argv) << "\n"
            << (out.kind == ProcessOutcome::Kind::timed_out ? "timed out\n" : out.error + "\n")
            << "exit " << out.exit_code << " signal " << out.signal << "\n"
            << file_text(dir / (what + ".stdout.log")) << file_text(dir / (what + ".stderr.log"))
            << "\n";
  return false;
}

// Bytes of the regular files under `dir` (what a run left on disk).
std::uintmax_t disk_bytes(const fs::path& dir) {
  std::uintmax_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) n += it->file_size(ec);
  return n;
}

// The reference server of one case, ended with its process group at exit.
class RefServer {
 public:
  RefServer(const std::string& python, const std::string& pythonpath, const fs::path& op,
            const fs::path& spec, const fs::path& dir)
      : socket_(dir / "refs.sock"), ready_(dir / "ready.json") {
    boost::process::environment env;
    for (const auto& [k, v] : child_environment()) env[k] = v;
    env["PYTHONPATH"] = pythonpath;
    env["PYTHONUNBUFFERED"] = "1";
    child_ = boost::process::child(
        boost::process::exe = python,
        boost::process::args = {"-m", "egg_frontend", "serve", "--op", op.string(), "--spec",
                                spec.string(), "--socket", socket_.string(), "--ready",
                                ready_.string()},
        boost::process::std_in<stdin_, (boost::process::std_out & boost::process::std_err)>(
            dir / "server.log")
            .string(),
        env, group_);
  }
  ~RefServer() {
    stdin_.close();
    std::error_code ec;
    group_.terminate(ec);
    child_.wait(ec);
  }
  // The socket once the server is ready; empty (with the log printed) when it failed.
  fs::path wait_ready() {
    for (int i = 0; i < 24000; ++i) {
      if (fs::exists(ready_)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto j = nlohmann::json::parse(file_text(ready_), nullptr, false);
        if (!j.is_discarded() && j.value("ok", false)) {
          std::cout << "reference server: " << j.dump() << "\n";
          return socket_;
        }
        std::cerr << "FAILED: the reference server: " << file_text(ready_) << "\n";
        return {};
      }
      std::error_code ec;
      if (!child_.running(ec)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::cerr << "FAILED: the reference server did not start:\n"
              << file_text(ready_.parent_path() / "server.log");
    return {};
  }

 private:
  fs::path socket_, ready_;
  boost::process::opstream stdin_;
  boost::process::group group_;
  boost::process::child child_;
};

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> a;
  std::set<std::string> flags;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--time" || k == "--strict" || k == "--baseline")
      flags.insert(k);
    else if (i + 1 < argc)
      a.emplace(k, argv[++i]);
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::cout << "SKIP: no CUDA device ("
              << (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices")
              << "); the gpu tests run on a GPU machine: bash tools/gpu_check.sh (docs/gpu.md)\n";
    return kSkip;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const std::string arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  const fs::path work = fs::absolute(a["--work"]);
  fs::create_directories(work);

  if (flags.count("--baseline")) {
    const fs::path dir = work / "baseline";
    fs::create_directories(dir);
    auto env = child_environment();
    env["PYTHONPATH"] = a["--pythonpath"];
    env["PYTHONUNBUFFERED"] = "1";
    if (!run_step("baseline",
                  {a["--python"], "-m", "egg_bench", "baseline", "--op", a["--op"], "--out",
                   (dir / "times.json").string()},
                  dir, std::chrono::seconds(540), env))
      return 1;
    const auto j = nlohmann::json::parse(file_text(dir / "times.json"));
    std::cout << j.dump(2) << "\n";
    const bool ok =
        j.at("eager").at("median_ms").get<double>() > 0 && j.at("compile").contains("median_ms");
    std::cout << (ok ? "PASS" : "FAIL") << ": baseline times\n";
    return ok ? 0 : 1;
  }

  const std::string name = a["--case"];
  // The spec, per case (cases may use different ops and run side by side).
  const std::string label = a.count("--label") ? a["--label"] : name;  // the case's folders
  const fs::path spec_dir = work / (label + "-spec");
  fs::remove_all(spec_dir);
  fs::create_directories(spec_dir);
  if (!run_step("make_spec",
                {a["--python"], a["--make-spec"], "--op", a["--op"], "--out", spec_dir.string()},
                spec_dir, std::chrono::seconds(300)))
    return 1;
  const fs::path planted = a["--planted"];
  const std::string base = name == "good_strict" || name == "uses_torch" ? "good" : name;
  const fs::path dir = work / label;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path so = dir / "cand.so";
  if (!run_step("nvcc",
                {a["--nvcc"], "-shared", "-Xcompiler", "-fPIC", "-DEGG_CANDIDATE_ENTRY", "-O3",
                 "-arch=" + arch, "-DEGG_ROWS=" + (a.count("--rows") ? a["--rows"] : "1024"),
                 "-DEGG_COLS=" + (a.count("--cols") ? a["--cols"] : "4096"),
                 (planted / (base + ".cu")).string(), "-o", so.string()},
                dir, std::chrono::seconds(300)))
    return 1;

  RefServer server(a["--python"], a["--pythonpath"], a["--op"], spec_dir / "spec.json", dir);
  const fs::path socket = server.wait_ready();
  if (socket.empty()) return 1;
  CandidateRun run;
  run.harness = a["--harness"];
  run.library = so;
  run.spec = spec_dir / "spec.json";
  run.refs = socket;
  run.work_dir = dir / "verify";
  run.source = planted / (name == "uses_torch" ? "uses_torch.cu" : base + ".cu");
  run.time = flags.count("--time") > 0;
  run.strict = flags.count("--strict") > 0;
  run.time_limit = std::chrono::seconds(name == "hang" ? 15 : 240);
  const auto t0 = std::chrono::steady_clock::now();
  const VerifyResult r = run_candidate(run);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string got(status_name(r.status));
  std::cout << "case:     " << name << "\nexpected: " << a["--expect"] << "\ngot:      " << got
            << "\nmessage:  " << r.message << "\nwall:     " << wall << " s\nrepro:    " << r.repro
            << "\n";
  std::cout << to_json(r).dump(2) << "\n";
  bool ok = got == a["--expect"];
  // What the run left on disk (the harness's work folder, the server's log), and the harness's
  // peak host memory.
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  const double disk_mb = static_cast<double>(disk_bytes(dir)) / (1 << 20);
  std::cout << "disk:     " << disk_mb << " MiB in " << dir
            << "\nhost:     " << usage.ru_maxrss / 1024.0 << " MiB peak resident (largest child)\n";
  // --expect-accuracy passed|failed: the accuracy rule judged the outputs, with that verdict.
  if (a.count("--expect-accuracy")) {
    const std::string want = a["--expect-accuracy"];
    const std::string have = !r.accuracy ? "none" : r.accuracy->passed ? "passed" : "failed";
    std::cout << "accuracy: " << have << " (expected " << want << ")\n";
    ok = ok && have == want;
  }
  if (a.count("--max-disk-mb") && disk_mb > std::stod(a["--max-disk-mb"])) {
    std::cout << "disk use over the limit of " << a["--max-disk-mb"] << " MiB\n";
    ok = false;
  }
  if (a.count("--max-host-mb") && usage.ru_maxrss / 1024.0 > std::stod(a["--max-host-mb"])) {
    std::cout << "host memory over the limit of " << a["--max-host-mb"] << " MiB\n";
    ok = false;
  }
  std::cout << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
