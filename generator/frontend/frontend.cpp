#include "frontend/frontend.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <iostream>
#include <sstream>

#include "util/files.h"

namespace egg::frontend {

namespace {

// Last lines of a captured stream, for error messages.
std::string tail(const std::string& text, size_t max_chars = 2000) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

// The frontend's own "egg: warning: ..." / "egg: hint: ..." / "egg: note: ..." lines reach the
// user (a forward that changes its input, references computed on the CPU); op.py's prints do not.
void forward_diagnostics(const std::string& err) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("egg: warning: ", 0) == 0 || line.rfind("egg: hint: ", 0) == 0 ||
        line.rfind("egg: note: ", 0) == 0)
      std::cerr << line << std::endl;
}

// "killed by signal 11 (SIGSEGV)" or "exit status 3".
std::string ending(int exit_code) {
  if (exit_code > 128 && exit_code < 128 + 65) {
    const int sig = exit_code - 128;
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (name ? " (SIG" + std::string(name) + ")" : "");
  }
  return "exit status " + std::to_string(exit_code);
}

}  // namespace

spec::Spec trace(ProcessRunner& runner, const FrontendConfig& config,
                 const std::filesystem::path& op_file, const std::filesystem::path& work_dir) {
  ProcessSpec p;
  p.exe = config.python;
  p.args = {"-m",
            "egg_frontend",
            "trace",
            "--op",
            op_file.string(),
            "--out",
            work_dir.string(),
            "--seeds",
            std::to_string(config.seeds)};
  p.env_set["PYTHONPATH"] = (config.data_dir / "python").string();
  p.env_set["PYTHONDONTWRITEBYTECODE"] = "1";
  p.timeout = config.timeout;
  p.activity = "tracing " + op_file.filename().string();
  p.cpu_work = true;  // tracing is CPU-heavy: never during a timed span (base/gpu_lock.h)

  ProcessResult r = runner.run(p);
  if (r.status == ProcessStatus::failed_to_start)
    throw UserError(
        "cannot run the Python frontend: " + r.err,
        "set EGG_PYTHON (CMake) or --python to an interpreter that has torch installed");
  if (r.status == ProcessStatus::timed_out)
    throw UserError(
        SourceLocation{op_file.string(), 0, "trace"},
        "tracing did not finish within " + std::to_string(config.timeout.count() / 1000) + " s",
        "check op.py for an endless loop or make get_inputs()/get_init_inputs() cheaper; a "
        "large op may need more: --trace-timeout <seconds> or EGG_TRACE_TIMEOUT");
  if (r.exit_code == 0 && !std::filesystem::exists(work_dir / "spec.json"))
    throw UserError(SourceLocation{op_file.string(), 0, "trace"},
                    "the Python frontend (" + config.python.string() +
                        ") ended (exit status 0) without writing a spec",
                    "op.py must not call os._exit(); if it does not, set EGG_PYTHON (CMake) or "
                    "--python to a Python 3 interpreter with torch");
  if (r.exit_code == 0) {
    forward_diagnostics(r.err);
    return spec::read_spec(work_dir / "spec.json");
  }

  auto error_text = read_file(work_dir / "error.json");
  nlohmann::json e =
      error_text ? nlohmann::json::parse(*error_text, nullptr, false) : nlohmann::json();
  if (r.exit_code == 1 && e.is_object()) {
    SourceLocation where{e.value("file", op_file.string()), e.value("line", 0), e.value("op", "")};
    throw UserError(where, e.value("message", "op.py could not be traced"), e.value("hint", ""));
  }
  // The frontend reports every Python exception in error.json; a process that ended without one
  // (and without a Python traceback of the frontend's own) was ended by op.py: a segfault in code
  // it calls, os._exit, a signal.
  if (!e.is_object() && r.err.find("Traceback (most recent call last)") == std::string::npos)
    throw UserError(SourceLocation{op_file.string(), 0, "trace"},
                    "the Python process running op.py ended abruptly (" + ending(r.exit_code) +
                        ") without reporting an error" +
                        (r.err.empty() ? "" : "; its last output: " + tail(r.err, 300)),
                    "op.py (or a library it calls) crashed or called os._exit(); run `" +
                        config.python.string() + " " + op_file.string() +
                        "` and call Model()(*get_inputs()) to reproduce it");
  std::string message = e.is_object() ? e.value("message", "") : "";
  throw InternalError("the Python frontend failed (exit " + std::to_string(r.exit_code) + ")" +
                      (message.empty() ? "" : ": " + message) + "\n" + tail(r.err) +
                      "\nrepro: " + repro_line(p) + "\nplease report this as a bug in EGG");
}

}  // namespace egg::frontend
