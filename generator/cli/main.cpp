// egg-gen: generates verified CUDA kernels from PyTorch reference code.
//
//   egg-gen generate <op.py> --arch sm_90 [--arch ...] --out <dir> [--name n] [--backend b] ...
//   egg-gen bench <op.py or folder>... --arch sm_90 --out <dir> [--json f] [--markdown f] [-j N]
//       (exit 1 when an op could not be generated or failed verification)
//   egg-gen report <output or bench folder> --html <file>
//   egg-gen cache stats | clear | explain <key>
//   egg-gen version
//
// Exit status: 0 success, 1 user error (the message says what to do), 2 internal error.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "base/termination.h"
#include "cache/store.h"
#include "llm/http_client.h"
#include "pipeline/bench.h"
#include "pipeline/generate.h"
#include "pipeline/report.h"
#include "python_default.h"
#include "toolchain/cudnn.h"
#include "util/error.h"
#include "util/files.h"
#include "util/log.h"
#include "verify/harness_verifier.h"
#include "verify/verifier.h"
#include "version.h"

#ifndef EGG_SOURCE_DATA_DIR
#define EGG_SOURCE_DATA_DIR ""
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path self_exe() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

// The folder holding templates/, prompts/ and python/: --data-dir, $EGG_DATA_DIR,
// <exe>/../share/egg (an install), then the source tree this egg-gen was built from.
fs::path find_data_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("EGG_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  fs::path installed = self_exe().parent_path().parent_path() / "share" / "egg";
  if (fs::is_directory(installed / "templates", ec)) return installed;
  return EGG_SOURCE_DATA_DIR;
}

// The Python that runs the frontend and the baselines: --python, $EGG_PYTHON, the interpreter EGG
// was configured with (when it still exists), then python3 on PATH.
fs::path find_python(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("EGG_PYTHON"); env && *env) return env;
  std::error_code ec;
  if (*egg::cli::kConfiguredPython && fs::exists(egg::cli::kConfiguredPython, ec))
    return egg::cli::kConfiguredPython;
  return "python3";
}

int run_cache(const std::string& action, const std::string& key, const std::string& dir) {
  egg::cache::LocalStore store(dir.empty() ? egg::cache::default_root() : fs::path(dir));
  if (action == "stats") {
    auto s = store.stats();
    std::cout << "cache: " << store.root().string() << "\nentries: " << s.entries
              << "\nbytes: " << s.bytes << "\n";
    return 0;
  }
  if (action == "clear") {
    std::cout << "removed " << store.clear() << " entries from " << store.root().string() << "\n";
    return 0;
  }
  if (action == "explain") {
    if (key.empty())
      throw egg::UserError("cache explain needs a key",
                           "egg-gen cache explain <key> (see manifest.json)");
    auto fields = store.fields(key);
    if (!fields)
      throw egg::UserError(
          "no cache entry for key " + key + " in " + store.root().string(),
          "the key is in a kernel's manifest.json (cache_key); check EGG_CACHE_DIR");
    std::cout << "key " << key << " is SHA-256 over these length-prefixed fields, in order:\n";
    for (auto it = fields->begin(); it != fields->end(); ++it)
      std::cout << "  " << it.key() << ": sha256 " << it->value("sha256", "") << ", "
                << it->value("bytes", 0) << " bytes: " << it->value("preview", "") << "\n";
    return 0;
  }
  throw egg::UserError("unknown cache action '" + action + "'",
                       "use stats, clear or explain <key>");
}

// Options shared by generate and bench.
struct CommonOptions {
  egg::pipeline::GenerateOptions g;
  std::string data_dir, cache_dir, name, python;
  std::vector<std::string> options;
  std::vector<double> tolerance;
  double trace_timeout_s = 300;
  bool no_cache = false, no_verify = false, no_max_autotune = false;
};

void add_common(CLI::App* cmd, CommonOptions& c) {
  cmd->add_option("--arch", c.g.arches, "target architecture, e.g. sm_90 (repeatable)")->required();
  cmd->add_option("--out", c.g.out_dir, "output folder")->required();
  cmd->add_option("--backend", c.g.backend, "builtin (default), openai, anthropic, replay");
  cmd->add_option("--model", c.g.model, "model name for the LLM backends");
  cmd->add_option("--option", c.options,
                  "backend option key=value (repeatable), e.g. transcript=<file> for replay");
  cmd->add_option("--python", c.python,
                  "Python interpreter with torch (default: $EGG_PYTHON, else the one EGG was "
                  "configured with, else python3)");
  cmd->add_option("--nvcc", c.g.nvcc, "nvcc to compile and identify (default: nvcc)");
  cmd->add_option(
      "--cudnn", c.g.cudnn,
      "cuDNN root (include/cudnn.h, lib/libcudnn.so*) for the conv family's cuDNN structure; "
      "'none' turns it off (default: $EGG_CUDNN_ROOT, else the CUDA toolkit of --nvcc)");
  cmd->add_option("--data-dir", c.data_dir, "folder with templates/, prompts/, python/");
  cmd->add_option("--cache-dir", c.cache_dir,
                  "cache folder (default: $EGG_CACHE_DIR or ~/.cache/egg)");
  cmd->add_flag("--no-cache", c.no_cache, "neither read nor write the cache");
  cmd->add_option("--remote-cache", c.g.remote_cache,
                  "shared cache base URL (GET/PUT <url>/ac/<key>; default $EGG_REMOTE_CACHE)");
  cmd->add_flag("--remote-cache-read-only", c.g.remote_read_only,
                "read the shared cache, never upload (default: $EGG_REMOTE_CACHE_READ_ONLY=1)");
  cmd->add_flag("--no-verify", c.no_verify, "do not verify on a GPU even if one is present");
  cmd->add_flag("--no-max-autotune", c.no_max_autotune,
                "with a GPU: time torch.compile in its default mode only, not also "
                "max-autotune-no-cudagraphs (whose autotuning takes minutes per GEMM or conv)");
  cmd->add_flag("--keep-work", c.g.keep_work,
                "keep the work folder (spec, reference tensors, candidates)");
  cmd->add_option("--tolerance", c.tolerance,
                  "atol rtol (default by dtype: fp32 1e-4 1e-4, fp16/bf16 1e-2 1e-2)")
      ->expected(2);
  cmd->add_option("--budget", c.g.budget, "candidates evaluated per stage (default 8)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--trace-timeout", c.trace_timeout_s,
                  "seconds the frontend may take to trace op.py and write its references "
                  "(default 300; $EGG_TRACE_TIMEOUT)")
      ->envname("EGG_TRACE_TIMEOUT")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seeds", c.g.seeds, "seeded input sets beyond the declared one (default 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--ref-device", c.g.ref_device,
                  "where PyTorch computes the references, which stay on the GPU: cuda (default) "
                  "or cpu (accuracy audits: fp32 reductions and scans accumulate in double; "
                  "default $EGG_REF_DEVICE)")
      ->envname("EGG_REF_DEVICE")
      ->check(CLI::IsMember({"cpu", "cuda"}));
}

void finish_common(CommonOptions& c) {
  c.g.name = c.name;
  c.g.data_dir = find_data_dir(c.data_dir);
  c.g.python = find_python(c.python);
  c.g.cache_dir = c.cache_dir;
  c.g.cache_enabled = !c.no_cache && egg::cache::enabled_by_env();
  c.g.trace_timeout = std::chrono::milliseconds(static_cast<long long>(c.trace_timeout_s * 1000));
  c.g.baseline_max_autotune = !c.no_max_autotune;
  if (c.g.remote_cache.empty())
    if (const char* url = std::getenv("EGG_REMOTE_CACHE"); url && *url) c.g.remote_cache = url;
  if (const char* ro = std::getenv("EGG_REMOTE_CACHE_READ_ONLY"); ro && std::string(ro) == "1")
    c.g.remote_read_only = true;
  if (const char* k = std::getenv("EGG_REMOTE_CACHE_KEY"); k && *k) c.g.remote_key = k;
  if (c.tolerance.size() == 2) {
    if (c.tolerance[0] < 0 || c.tolerance[1] < 0)
      throw egg::UserError("tolerances must not be negative",
                           "pass --tolerance <atol> <rtol>, e.g. 1e-4 1e-4");
    c.g.atol = c.tolerance[0];
    c.g.rtol = c.tolerance[1];
  }
  for (const auto& opt : c.options) {
    auto eq = opt.find('=');
    if (eq == std::string::npos)
      throw egg::UserError("option '" + opt + "' is not key=value", "write --option key=value");
    c.g.options[opt.substr(0, eq)] = opt.substr(eq + 1);
  }
}

// HTTP for the remote cache over libcurl; a transport failure is an exchange with status 0.
// $EGG_REMOTE_CACHE_TOKEN goes out as a bearer token (bazel-remote, an nginx in front of WebDAV)
// and is never part of a message.
egg::cache::HttpCall remote_cache_http() {
  auto transport = std::make_shared<egg::llm::CurlTransport>(
      egg::llm::CurlOptions{256u << 20, std::nullopt, "", "--remote-cache / EGG_REMOTE_CACHE"});
  std::string token;
  if (const char* t = std::getenv("EGG_REMOTE_CACHE_TOKEN"); t && *t) token = t;
  return [transport, token](const std::string& method, const std::string& url,
                            const std::string& body) {
    egg::llm::HttpRequest req;
    req.method = method;
    req.url = url;
    req.body = body;
    if (method == "PUT") req.headers = {{"Content-Type", "application/json"}};
    if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
    req.total_timeout = std::chrono::seconds(60);
    egg::cache::HttpExchange out;
    try {
      auto r = transport->send(req);
      out.status = r.status;
      out.body = std::move(r.body);
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  };
}

// The GPU verifier when a GPU and egg-harness are here; otherwise null and the reason in `g`.
// One egg-harness run gets 60 s; time it spends waiting for the GPU timing lock does not count
// (harness/runner.h, run_process).
std::unique_ptr<egg::verify::GpuVerifier> make_verifier(egg::ProcessRunner& runner,
                                                        CommonOptions& c) {
  if (c.no_verify) {
    c.g.no_gpu_reason = "verification disabled (--no-verify)";
    return nullptr;
  }
  auto gpu = egg::verify::probe_gpu(runner);
  if (!gpu.present) return nullptr;
  gpu.arch = egg::verify::verified_arch(gpu.arch, c.g.arches);  // sm_90a kernels on an sm_90 GPU
  auto harness = egg::verify::find_harness(self_exe());
  if (!harness) {
    c.g.no_gpu_reason = "a GPU is present but egg-harness is not built (build EGG with LibTorch)";
    egg::log::warning(c.g.no_gpu_reason);
    return nullptr;
  }
  // A harness that cannot start (a missing LibTorch, say) must not be blamed on the candidates.
  egg::ProcessSpec check;
  check.exe = *harness;
  check.args = {"verify", "--help"};
  check.timeout = std::chrono::seconds(60);
  auto r = runner.run(check);
  if (!r.ok()) {
    c.g.no_gpu_reason =
        "egg-harness at " + harness->string() + " cannot run: " +
        (r.err.empty() ? "exit " + std::to_string(r.exit_code) : r.err.substr(0, r.err.find('\n')));
    egg::log::warning(c.g.no_gpu_reason);
    return nullptr;
  }
  const auto cudnn = egg::toolchain::find_cudnn(c.g.cudnn, c.g.nvcc);
  std::vector<std::string> flags = egg::toolchain::cudnn_compile_flags(cudnn);
  for (auto& f : egg::toolchain::cudnn_link_flags(cudnn)) flags.push_back(f);
  return std::make_unique<egg::verify::HarnessVerifier>(runner, c.g.nvcc, *harness, gpu,
                                                        std::chrono::seconds(60), std::move(flags));
}

int run_bench(CommonOptions& c, const std::vector<std::string>& paths, const std::string& json_out,
              const std::string& md_out, double copy_gbps, int jobs, const std::string& rows_out) {
  egg::SystemProcessRunner runner;
  auto verifier = make_verifier(runner, c);
  egg::pipeline::Services services{runner, verifier.get(), remote_cache_http()};
  std::vector<fs::path> inputs(paths.begin(), paths.end());
  auto ops = egg::pipeline::collect_ops(inputs);
  if (ops.empty())
    throw egg::UserError("no op.py files in the given paths",
                         "pass op.py files or folders holding them");
  const fs::path out_root = c.g.out_dir;
  // Ops run side by side on `jobs` threads (tracing, nvcc and verification overlap; timed spans
  // take turns on the GPU lock); each row lands in its op's slot, so the report keeps op order.
  const std::vector<std::string> names = egg::pipeline::bench_names(ops);
  std::vector<json> slots(ops.size());
  std::mutex log_mutex;
  size_t next = 0;
  auto work = [&] {
    while (true) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(log_mutex);
        if (next >= ops.size()) return;
        i = next++;
        std::cerr << "egg: bench [" << i + 1 << "/" << ops.size() << "] " << ops[i].string()
                  << std::endl;
      }
      auto o = c.g;
      o.op_file = ops[i];
      o.name = names[i];
      o.out_dir = out_root / o.name;
      auto start = std::chrono::steady_clock::now();
      auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      json row;
      try {
        auto r = egg::pipeline::generate(o, services);
        row = egg::pipeline::bench_row(o.name, r.manifest, seconds());
      } catch (const egg::UserError& e) {
        row = egg::pipeline::bench_error_row(o.name, e.describe(), seconds());
      } catch (const std::exception& e) {
        row =
            egg::pipeline::bench_error_row(o.name, std::string("internal: ") + e.what(), seconds());
      }
      std::lock_guard<std::mutex> lock(log_mutex);
      if (!rows_out.empty()) {  // every finished row at once, so a killed run keeps its rows
        std::ofstream rows_file(rows_out, std::ios::app);
        rows_file << row.dump() << std::endl;
      }
      std::cerr << "egg: bench " << o.name << ": " << row.value("status", "") << " ("
                << static_cast<int>(seconds()) << " s)" << std::endl;
      slots[i] = std::move(row);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(jobs, static_cast<int>(ops.size())); ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  json rows = json::array();
  for (auto& row : slots) rows.push_back(std::move(row));
  auto report =
      egg::pipeline::bench_report(rows, verifier ? verifier->gpu_name() : "none", copy_gbps);
  std::cout << egg::pipeline::bench_text(report);
  egg::write_atomic(json_out.empty() ? out_root / "bench.json" : fs::path(json_out),
                    report.dump(2) + "\n");
  egg::write_atomic(md_out.empty() ? out_root / "bench.md" : fs::path(md_out),
                    egg::pipeline::bench_markdown(report));
  // An op that could not be generated (or failed verification) fails the run; unverified is not
  // failed.
  int failed = 0;
  for (const auto& row : report["rows"])
    failed += row.value("status", "").rfind("failed", 0) == 0 ? 1 : 0;
  if (failed > 0)
    egg::log::error(std::to_string(failed) + " of " + std::to_string(ops.size()) + " ops failed");
  return failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts: SIGINT/SIGTERM/SIGHUP end every child and remove the temp folders.
  egg::end_children_on_signals();
  CLI::App app{
      "egg-gen: expert-guided generation of verified CUDA kernels from PyTorch reference code\n"
      "exit status: 0 success, 1 user error, 2 internal error"};
  app.require_subcommand(1);
  app.set_version_flag("--version", egg::kEggVersion);

  CommonOptions gen_opts;
  gen_opts.g.baseline_compile = false;  // a build times eager only unless --compare-compile
  auto* gen = app.add_subcommand("generate", "generate a kernel from an op.py");
  gen->add_option("op", gen_opts.g.op_file, "the op.py (KernelBench format)")->required();
  gen->add_option("--name", gen_opts.name, "kernel name (default: the op file's stem)");
  add_common(gen, gen_opts);
  gen->add_flag("--require-verified", gen_opts.g.require_verified,
                "fail unless every arch is verified on a GPU");
  gen->add_flag("--require-faster", gen_opts.g.require_faster,
                "with a GPU: fail when the kernel is slower than eager PyTorch beyond 3 % noise");
  gen->add_flag("--strict", gen_opts.g.strict,
                "with a GPU: compute-sanitizer memcheck on the winner");
  bool no_baseline = false;
  gen->add_flag("--no-baseline", no_baseline,
                "with a GPU: do not time PyTorch eager (nor torch.compile)");
  gen->add_flag("--compare-compile", gen_opts.g.baseline_compile,
                "with a GPU: also time torch.compile (default mode, and "
                "max-autotune-no-cudagraphs unless --no-max-autotune) for the manifest's "
                "comparison; off by default, as its compilation adds 20 s to minutes per kernel "
                "(`bench` times it always; default: $EGG_COMPARE_COMPILE=1)")
      ->envname("EGG_COMPARE_COMPILE");
  gen->add_option("--dump-dir", gen_opts.g.dump_dir,
                  "write every step's artifact (spec.json, stage1.cu, stage2.cu, verify.json)");
  gen->add_option("--override-dir", gen_opts.g.override_dir,
                  "take step artifacts from here (hand-edited); bypasses the cache");
  gen->add_option("--from", gen_opts.g.from_step,
                  "resume from this step: spec, stage1, stage2, verify, emit");

  CommonOptions bench_opts;
  std::vector<std::string> bench_paths;
  std::string bench_json, bench_md;
  double copy_gbps = 0;
  bool bench_lenient = false;
  auto* bench = app.add_subcommand(
      "bench", "generate, verify and time every op.py against PyTorch eager and torch.compile");
  bench->add_option("paths", bench_paths, "op.py files or folders")->required();
  add_common(bench, bench_opts);
  bench->add_option("--json", bench_json, "JSON report (default <out>/bench.json)");
  bench->add_option("--markdown", bench_md, "Markdown report (default <out>/bench.md)");
  bench->add_option("--copy-gbps", copy_gbps,
                    "measured copy bandwidth, for the % of ceiling column");
  bench->add_flag("--no-strict", bench_lenient, "skip compute-sanitizer memcheck on the winners");
  int bench_jobs = 1;
  bench
      ->add_option("-j,--jobs", bench_jobs,
                   "ops generated side by side (default 1); timing takes turns on the GPU")
      ->check(CLI::Range(1, 64));
  bool bench_no_baseline = false;
  bench->add_flag("--no-baseline", bench_no_baseline,
                  "generate and verify only: no PyTorch eager or torch.compile timing (a test of "
                  "the suite, not a benchmark)");
  std::string bench_rows;
  bench->add_option("--rows", bench_rows,
                    "append each op's row to this JSON-lines file as soon as it is done");

  egg::pipeline::ReportRequest report_req;
  std::string report_python, report_data;
  auto* report = app.add_subcommand(
      "report", "a self-contained HTML page of generated kernels or of an egg-gen bench run");
  report
      ->add_option("folder", report_req.source,
                   "a kernel's output folder, a folder of them, an egg-gen bench --out folder, or "
                   "a bench --rows .jsonl file")
      ->required();
  report->add_option("--html", report_req.html, "the page to write")->required();
  report->add_option("--python", report_python,
                     "Python with matplotlib (default: $EGG_PYTHON, else the one EGG was "
                     "configured with, else python3)");
  report->add_option("--data-dir", report_data, "folder with python/egg_report");

  std::string cache_action, cache_key, cache_root;
  auto* cache = app.add_subcommand("cache", "inspect the kernel cache");
  cache->add_option("action", cache_action, "stats | clear | explain")->required();
  cache->add_option("key", cache_key, "the key to explain");
  cache->add_option("--cache-dir", cache_root,
                    "cache folder (default: $EGG_CACHE_DIR or ~/.cache/egg)");

  app.add_subcommand("version", "print the generator's version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    egg::log::error(e.what());
    std::cerr << "egg: hint: egg-gen --help lists the commands, egg-gen <command> --help their "
                 "options"
              << std::endl;
    return 1;
  }

  try {
    if (app.got_subcommand("version")) {
      std::cout << "egg-gen " << egg::kEggVersion << "\n";
      return 0;
    }
    if (app.got_subcommand("cache")) return run_cache(cache_action, cache_key, cache_root);
    // What runs killed by SIGKILL (or a power cut) left behind: work folders, process folders and
    // reference-server sockets (in /tmp when the temp folder's path is too long for a socket).
    std::vector<fs::path> temp_dirs = {fs::temp_directory_path()};
    if (temp_dirs[0] != "/tmp") temp_dirs.emplace_back("/tmp");
    int swept = 0;
    for (const fs::path& dir : temp_dirs)
      swept += egg::sweep_stale_temp_entries(dir, {"egg-work-", "egg-proc-", "egg-ref-"});
    if (swept) egg::log::debug("removed " + std::to_string(swept) + " temp entries of killed runs");
    if (app.got_subcommand("report")) {
      report_req.python = find_python(report_python);
      report_req.data_dir = find_data_dir(report_data);
      egg::SystemProcessRunner runner;
      egg::pipeline::write_report(runner, report_req);
      return 0;
    }
    if (app.got_subcommand("bench")) {
      finish_common(bench_opts);
      bench_opts.g.strict = !bench_lenient;
      if (bench_no_baseline) bench_opts.g.baseline = false;
      return run_bench(bench_opts, bench_paths, bench_json, bench_md, copy_gbps, bench_jobs,
                       bench_rows);
    }
    finish_common(gen_opts);
    gen_opts.g.baseline = !no_baseline;
    egg::SystemProcessRunner runner;
    auto verifier = make_verifier(runner, gen_opts);
    egg::pipeline::Services services{runner, verifier.get(), remote_cache_http()};
    auto r = egg::pipeline::generate(gen_opts.g, services);
    egg::log::info(r.name + ": cache " + r.cache_status + ", " + std::to_string(r.changed.size()) +
                   " file(s) updated, " + r.status_text);
    return 0;
  } catch (const egg::UserError& e) {
    egg::log::error(e.describe());
    if (!e.hint().empty()) std::cerr << "egg: hint: " << e.hint() << std::endl;
    return 1;
  } catch (const egg::InternalError& e) {
    egg::log::error(std::string("internal: ") + e.what());
    return 2;
  } catch (const std::exception& e) {
    egg::log::error(std::string("internal: ") + e.what() + " (please report this as a bug in EGG)");
    return 2;
  }
}
