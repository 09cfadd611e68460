#include "base/termination.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace egg {
namespace {

struct Tracked {
  std::mutex mutex;
  std::set<pid_t> groups;
  std::set<std::filesystem::path> dirs;
};

Tracked& tracked() {
  static Tracked* t = new Tracked;  // never destroyed: the signal thread may use it at exit
  return *t;
}

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

std::atomic<bool> stopping{false};

void kill_and_remove(Tracked& t) {
  for (pid_t g : t.groups) ::kill(-g, SIGKILL);
  for (const auto& d : t.dirs) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}

[[noreturn]] void handle(int sig) {
  stopping = true;  // run_process starts no new child from now on
  Tracked& t = tracked();
  std::size_t groups = 0, dirs = 0;
  // The other threads run on while this one works: a killed nvcc may still be writing, and a
  // pipeline thread whose child failed may write its next candidate. A few passes catch most of it;
  // egg-gen's next start sweeps the rest (the folders carry this pid).
  for (int pass = 0; pass < 8; ++pass) {
    {
      std::lock_guard<std::mutex> lock(t.mutex);
      groups = std::max(groups, t.groups.size());
      dirs = std::max(dirs, t.dirs.size());
      kill_and_remove(t);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const char* abbrev = ::sigabbrev_np(sig);
  std::fprintf(stderr,
               "egg: stopped by SIG%s: ended %zu child process group(s), removed %zu temp "
               "folder(s)\n",
               abbrev ? abbrev : "?", groups, dirs);
  std::fflush(stderr);
  // Die of the signal itself, as a shell and Ninja expect.
  ::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  std::_Exit(128 + sig);
}

}  // namespace

void end_children_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    const sigset_t set = handled_signals();
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    // main() returning while the signal is handled must not end the process first.
    std::atexit(wait_if_stopping);
    std::thread([set] {
      int sig = 0;
      while (::sigwait(&set, &sig) != 0) {
      }
      handle(sig);
    }).detach();
  });
}

bool stopping_on_signal() { return stopping; }

void wait_if_stopping() {
  if (!stopping) return;
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}

void track_child_group(pid_t group) {
  std::lock_guard<std::mutex> lock(tracked().mutex);
  tracked().groups.insert(group);
}

void untrack_child_group(pid_t group) {
  std::lock_guard<std::mutex> lock(tracked().mutex);
  tracked().groups.erase(group);
}

void track_temp_dir(const std::filesystem::path& dir) {
  std::lock_guard<std::mutex> lock(tracked().mutex);
  tracked().dirs.insert(dir);
}

void untrack_temp_dir(const std::filesystem::path& dir) {
  std::lock_guard<std::mutex> lock(tracked().mutex);
  tracked().dirs.erase(dir);
}

void prepare_child_after_fork(pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace egg
