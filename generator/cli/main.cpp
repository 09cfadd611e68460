// egg-gen: generates verified CUDA kernels from PyTorch reference code.
//
//   egg-gen generate <op.py> --arch sm_90 [--arch ...] --out <dir> [--name n] [--backend b] [--model m]
//   egg-gen cache stats | clear | explain <key>
//   egg-gen version
//
// Exit status: 0 success, 1 user error (the message says what to do), 2 internal error.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "cache/store.h"
#include "pipeline/generate.h"
#include "util/error.h"
#include "util/log.h"
#include "version.h"

#ifndef EGG_SOURCE_DATA_DIR
#define EGG_SOURCE_DATA_DIR ""
#endif

namespace {

namespace fs = std::filesystem;

// The folder holding templates/, prompts/ and python/: --data-dir, $EGG_DATA_DIR, <exe>/../share/egg
// (an install), then the source tree this egg-gen was built from.
fs::path find_data_dir(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("EGG_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "egg";
    if (fs::is_directory(installed / "templates", ec)) return installed;
  }
  return EGG_SOURCE_DATA_DIR;
}

int run_cache(const std::string& action, const std::string& key, const std::string& dir) {
  egg::cache::LocalStore store(dir.empty() ? egg::cache::default_root() : fs::path(dir));
  if (action == "stats") {
    auto s = store.stats();
    std::cout << "cache: " << store.root().string() << "\nentries: " << s.entries << "\nbytes: " << s.bytes << "\n";
    return 0;
  }
  if (action == "clear") {
    std::cout << "removed " << store.clear() << " entries from " << store.root().string() << "\n";
    return 0;
  }
  if (action == "explain") {
    if (key.empty()) throw egg::UserError("cache explain needs a key", "egg-gen cache explain <key> (see manifest.json)");
    auto fields = store.fields(key);
    if (!fields)
      throw egg::UserError("no cache entry for key " + key + " in " + store.root().string(),
                           "the key is in a kernel's manifest.json (cache_key); check EGG_CACHE_DIR");
    std::cout << "key " << key << " is SHA-256 over these length-prefixed fields, in order:\n";
    for (auto it = fields->begin(); it != fields->end(); ++it)
      std::cout << "  " << it.key() << ": sha256 " << it->value("sha256", "") << ", " << it->value("bytes", 0)
                << " bytes: " << it->value("preview", "") << "\n";
    return 0;
  }
  throw egg::UserError("unknown cache action '" + action + "'", "use stats, clear or explain <key>");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"egg-gen: expert-guided generation of verified CUDA kernels from PyTorch reference code\n"
               "exit status: 0 success, 1 user error, 2 internal error"};
  app.require_subcommand(1);
  app.set_version_flag("--version", egg::kEggVersion);

  egg::pipeline::GenerateOptions g;
  std::string data_dir, cache_dir, name;
  std::vector<std::string> options;
  bool no_cache = false;
  auto* gen = app.add_subcommand("generate", "generate a kernel from an op.py");
  gen->add_option("op", g.op_file, "the op.py (KernelBench format)")->required();
  gen->add_option("--arch", g.arches, "target architecture, e.g. sm_90 (repeatable)")->required();
  gen->add_option("--out", g.out_dir, "output folder")->required();
  gen->add_option("--name", name, "kernel name (default: the op file's stem)");
  gen->add_option("--backend", g.backend, "builtin (default)");
  gen->add_option("--model", g.model, "model name for LLM backends");
  gen->add_option("--option", options, "backend option key=value (repeatable)");
  gen->add_option("--python", g.python, "Python interpreter with torch (default: python3)");
  gen->add_option("--nvcc", g.nvcc, "nvcc to compile and identify (default: nvcc)");
  gen->add_option("--data-dir", data_dir, "folder with templates/, prompts/, python/");
  gen->add_option("--cache-dir", cache_dir, "cache folder (default: $EGG_CACHE_DIR or ~/.cache/egg)");
  gen->add_flag("--no-cache", no_cache, "neither read nor write the cache");
  gen->add_flag("--require-verified", g.require_verified, "fail unless every arch is verified on a GPU");
  gen->add_flag("--keep-work", g.keep_work, "keep the work folder (spec, reference tensors, candidates)");
  gen->add_option("--dump-dir", g.dump_dir, "write every step's artifact (spec.json, stage1.cu, stage2.cu, verify.json)");
  gen->add_option("--override-dir", g.override_dir, "take step artifacts from here (hand-edited); bypasses the cache");
  gen->add_option("--from", g.from_step, "resume from this step: spec, stage1, stage2, verify, emit");
  std::vector<double> tolerance;
  gen->add_option("--tolerance", tolerance, "atol rtol (default by dtype: fp32 1e-4 1e-4, fp16/bf16 1e-2 1e-2)")
      ->expected(2);
  gen->add_option("--seeds", g.seeds, "seeded input sets beyond the declared one (default 3)")->check(CLI::Range(1, 100));

  std::string cache_action, cache_key, cache_root;
  auto* cache = app.add_subcommand("cache", "inspect the kernel cache");
  cache->add_option("action", cache_action, "stats | clear | explain")->required();
  cache->add_option("key", cache_key, "the key to explain");
  cache->add_option("--cache-dir", cache_root, "cache folder (default: $EGG_CACHE_DIR or ~/.cache/egg)");

  app.add_subcommand("version", "print the generator's version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }

  try {
    if (app.got_subcommand("version")) {
      std::cout << "egg-gen " << egg::kEggVersion << "\n";
      return 0;
    }
    if (app.got_subcommand("cache")) return run_cache(cache_action, cache_key, cache_root);

    g.name = name;
    if (tolerance.size() == 2) {
      if (tolerance[0] < 0 || tolerance[1] < 0)
        throw egg::UserError("tolerances must not be negative", "pass --tolerance <atol> <rtol>, e.g. 1e-4 1e-4");
      g.atol = tolerance[0];
      g.rtol = tolerance[1];
    }
    g.data_dir = find_data_dir(data_dir);
    g.cache_dir = cache_dir;
    g.cache_enabled = !no_cache && egg::cache::enabled_by_env();
    for (const auto& opt : options) {
      auto eq = opt.find('=');
      if (eq == std::string::npos)
        throw egg::UserError("option '" + opt + "' is not key=value", "write --option key=value");
      g.options[opt.substr(0, eq)] = opt.substr(eq + 1);
    }
    egg::SystemProcessRunner runner;
    egg::pipeline::Services services{runner};
    auto r = egg::pipeline::generate(g, services);
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
