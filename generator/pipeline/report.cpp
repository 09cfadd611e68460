#include "pipeline/report.h"

#include <sstream>
#include <string>

#include "util/error.h"
#include "util/log.h"

namespace egg::pipeline {

namespace fs = std::filesystem;

namespace {

// The text after `prefix` on the first line that starts with it.
std::string line_after(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return {};
}

}  // namespace

void write_report(ProcessRunner& runner, const ReportRequest& request) {
  ProcessSpec p;
  p.exe = request.python;
  p.args = {"-m", "egg_report", fs::absolute(request.source).string(), "--html",
            fs::absolute(request.html).string()};
  p.env_set["PYTHONPATH"] = (request.data_dir / "python").string();
  p.env_set["PYTHONDONTWRITEBYTECODE"] = "1";
  p.env_set["MPLBACKEND"] = "Agg";
  p.timeout = std::chrono::minutes(5);
  p.activity = "drawing the report";
  const ProcessResult r = runner.run(p);
  if (r.status == ProcessStatus::failed_to_start)
    throw UserError(
        "cannot run the Python " + request.python.string() + " for the report: " + r.err,
        "set EGG_PYTHON or --python to an interpreter with matplotlib");
  if (r.status == ProcessStatus::timed_out)
    throw InternalError("the report did not finish within 5 minutes\nrepro: " + repro_line(p));
  if (r.exit_code == 1) {
    const std::string message = line_after(r.err, "egg: error: ");
    if (!message.empty()) throw UserError(message, line_after(r.err, "egg: hint: "));
  }
  if (r.exit_code != 0)
    throw InternalError("the report failed (exit " + std::to_string(r.exit_code) + "):\n" + r.err +
                        "\nrepro: " + repro_line(p) + "\nplease report this as a bug in EGG");
  const std::string done = line_after(r.err, "egg: ");
  if (!done.empty()) log::info(done);
}

}  // namespace egg::pipeline
