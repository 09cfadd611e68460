#include "frontend/frontend.h"

#include <nlohmann/json.hpp>

#include "util/files.h"

namespace egg::frontend {

namespace {

// Last lines of a captured stream, for error messages.
std::string tail(const std::string& text, size_t max_chars = 2000) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
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
  if (r.exit_code == 0) return spec::read_spec(work_dir / "spec.json");

  auto error_text = read_file(work_dir / "error.json");
  nlohmann::json e =
      error_text ? nlohmann::json::parse(*error_text, nullptr, false) : nlohmann::json();
  if (r.exit_code == 1 && e.is_object()) {
    SourceLocation where{e.value("file", op_file.string()), e.value("line", 0), e.value("op", "")};
    throw UserError(where, e.value("message", "op.py could not be traced"), e.value("hint", ""));
  }
  std::string message = e.is_object() ? e.value("message", "") : "";
  throw InternalError("the Python frontend failed (exit " + std::to_string(r.exit_code) + ")" +
                      (message.empty() ? "" : ": " + message) + "\n" + tail(r.err) +
                      "\nrepro: " + repro_line(p) + "\nplease report this as a bug in EGG");
}

}  // namespace egg::frontend
