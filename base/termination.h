// Ending everything with EGG: a child of egg-gen (op.py, nvcc, egg-harness, ...) runs in its own
// process group, tracked here while it runs, and dies with SIGKILL when egg-gen dies (its
// PR_SET_PDEATHSIG). On SIGINT, SIGTERM or SIGHUP (Ctrl-C, Ninja stopping the build), one thread
// kills every tracked group, removes every tracked temp folder and lets the signal end the process,
// so the exit status is the signal's.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace egg {

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every thread it starts) and
// starts the thread that handles them. Call from main before any other thread exists.
void end_children_on_signals();

// True once a signal is being handled: no new child may start.
bool stopping_on_signal();

// Blocks the calling thread for good while a signal is handled (the process is about to die of
// it), so that a thread whose child was just killed neither reports that as an error, writes more
// temp files nor ends the process first. Returns at once otherwise.
void wait_if_stopping();

// A running child's process group (its leader's pid), killed on a signal.
void track_child_group(pid_t group);
void untrack_child_group(pid_t group);

// A temp folder removed on a signal.
void track_temp_dir(const std::filesystem::path& dir);
void untrack_temp_dir(const std::filesystem::path& dir);

// In a forked child before exec (async-signal-safe): its own process group, SIGKILL when the
// parent dies, the signal mask cleared (blocked signals are inherited across exec). `parent` is the
// pid of the forking process; a child whose parent is already gone exits at once.
void prepare_child_after_fork(pid_t parent);

}  // namespace egg
