#include "util/process.h"

#include <algorithm>
#include <boost/process.hpp>
#include <cstdlib>
#include <thread>

#include "util/files.h"

namespace egg {
namespace bp = boost::process;

std::string repro_line(const ProcessSpec& spec) {
  auto quote = [](const std::string& s) {
    if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?;&|<>()[]{}") == std::string::npos) return s;
    std::string q = "'";
    for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string line;
  for (const auto& [k, v] : spec.env_set) line += k + "=" + quote(v) + " ";
  line += quote(spec.exe.string());
  for (const auto& a : spec.args) line += " " + quote(a);
  return line;
}

bool is_secret_env_name(const std::string& name) {
  for (const char* marker : {"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"})
    if (name.find(marker) != std::string::npos) return true;
  for (const char* prefix : {"OPENAI_", "ANTHROPIC_", "EGG_LLM_"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

ProcessResult SystemProcessRunner::run(const ProcessSpec& spec) {
  ProcessResult result;
  TempDir io(std::filesystem::temp_directory_path(), "egg-proc");
  const std::string out_path = (io.path() / "out").string();
  const std::string err_path = (io.path() / "err").string();

  bp::environment env = boost::this_process::environment();
  if (spec.scrub_secrets) {
    std::vector<std::string> drop;
    for (const auto& entry : env)
      if (is_secret_env_name(entry.get_name())) drop.push_back(entry.get_name());
    for (const auto& name : drop) env.erase(name);
  }
  for (const auto& name : spec.env_unset) env.erase(name);
  for (const auto& [k, v] : spec.env_set) env[k] = v;

  std::error_code ec;
  bp::child child;
  // A bare name ("python3") is looked up on PATH, as a shell would.
  std::string exe = spec.exe.string();
  if (!spec.exe.has_parent_path())
    if (auto found = find_on_path(exe)) exe = found->string();
  const std::string cwd =
      spec.cwd.empty() ? std::filesystem::current_path().string() : spec.cwd.string();
  child = bp::child(exe, bp::args(spec.args), bp::std_out > out_path, bp::std_err > err_path,
                    bp::std_in < bp::null, bp::env(env), bp::start_dir(cwd), ec);
  if (ec) {
    result.status = ProcessStatus::failed_to_start;
    result.err = "cannot start " + exe + ": " + ec.message();
    return result;
  }
  // Polling, not child.wait_for: wait_for is deprecated as unreliable in Boost 1.83.
  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  auto pause = std::chrono::milliseconds(1);
  while (child.running(ec) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  if (child.running(ec)) {
    child.terminate(ec);
    child.wait(ec);
    result.status = ProcessStatus::timed_out;
  } else {
    result.status = ProcessStatus::exited;
    result.exit_code = child.exit_code();
    const int native = child.native_exit_code();
    if (WIFSIGNALED(native)) result.exit_code = 128 + WTERMSIG(native);
  }
  result.out = read_file(out_path).value_or("");
  result.err = read_file(err_path).value_or("");
  return result;
}

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string all = path;
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::filesystem::path candidate = std::filesystem::path(all.substr(start, end - start)) / name;
    std::error_code ec;
    if (!candidate.empty() && std::filesystem::is_regular_file(candidate, ec) &&
        access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace egg
