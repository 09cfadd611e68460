#include "util/process.h"

#include <list>

#include "base/child_env.h"
#include "base/cpu_slot.h"
#include "base/gpu_lock.h"
#include "base/quote.h"
#include "util/files.h"
#include "util/log.h"

namespace egg {

std::string repro_line(const ProcessSpec& spec) {
  std::string line;
  for (const auto& [k, v] : spec.env_set) line += k + "=" + shell_quote(v) + " ";
  std::vector<std::string> argv = {spec.exe.string()};
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  return line + quote_command(argv);
}

ProcessResult SystemProcessRunner::run(const ProcessSpec& spec) {
  // A CPU slot first, then the CPU lock shared (base/cpu_slot.h, base/gpu_lock.h).
  std::optional<CpuSlot> slot;
  std::list<CpuSlot> more_slots;  // for a child's extra threads (not movable: a list)
  std::optional<CpuWorkLock> quiet;
  std::vector<std::string> args = spec.args;
  if (spec.cpu_work) {
    slot.emplace(cpu_lock_path());
    if (slot->waited_ms() > 1000)
      log::debug("waited " + std::to_string(static_cast<long>(slot->waited_ms() / 1000)) +
                 " s for a CPU slot (EGG_CPU_SLOTS) before " + spec.exe.filename().string());
    if (slot->held())
      for (int t = 1; t < spec.max_threads; ++t) {
        more_slots.emplace_back(cpu_lock_path(), cpu_slot_count(), false);
        if (!more_slots.back().held()) {
          more_slots.pop_back();
          break;
        }
      }
    if (!more_slots.empty() && !spec.threads_flag.empty())
      args.push_back(spec.threads_flag + std::to_string(1 + more_slots.size()));
    quiet.emplace();
  }
  ProcessResult result;
  TempDir io(std::filesystem::temp_directory_path(), "egg-proc");
  const auto out_path = io.path() / "out";
  const auto err_path = io.path() / "err";
  Environment env = child_environment();
  for (const auto& [k, v] : spec.env_set) env[k] = v;
  if (spec.private_tmp) {
    std::filesystem::create_directory(io.path() / "tmp");
    env["TMPDIR"] = (io.path() / "tmp").string();
  }
  std::vector<std::string> argv = {spec.exe.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.time_limit = spec.timeout;
  options.cwd = spec.cwd;
  options.progress_every = spec.progress_every;
  if (!spec.activity.empty())
    options.on_progress = [&](long seconds) {
      log::info("still " + spec.activity + " after " + std::to_string(seconds) + " s");
    };
  const ProcessOutcome o = run_process(argv, env, out_path, err_path, options);
  switch (o.kind) {
    case ProcessOutcome::Kind::failed_to_start:
      result.status = ProcessStatus::failed_to_start;
      result.err = o.error;
      return result;
    case ProcessOutcome::Kind::timed_out:
      result.status = ProcessStatus::timed_out;
      break;
    case ProcessOutcome::Kind::signaled:
      result.status = ProcessStatus::exited;
      result.exit_code = 128 + o.signal;
      break;
    case ProcessOutcome::Kind::exited:
      result.status = ProcessStatus::exited;
      result.exit_code = o.exit_code;
      break;
  }
  result.out = read_file(out_path).value_or("");
  result.err = read_file(err_path).value_or("");
  return result;
}

}  // namespace egg
