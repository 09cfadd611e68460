// One generation per cache key at a time, across the processes that share a cache folder: two
// build trees (Debug and Release, a build tree and an install's test) building the same op.py
// at once would otherwise both generate it. The second waits for the first and then finds its
// entry. A flock(2) on <root>/locks/<key>.lock, released by the kernel if the holder dies, so a
// crashed generation never blocks the next one.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace egg::cache {

class KeyLock {
 public:
  // Blocks until `key` is free. When another process holds it, `on_wait(holder_pid)` is called
  // once first (holder_pid: what the holder wrote, 0 if unknown). A lock file that cannot be
  // created leaves the lock unheld: the generation proceeds (it may duplicate another's work,
  // never lose its own), and error() says why.
  KeyLock(const std::filesystem::path& root, const std::string& key,
          const std::function<void(long holder_pid)>& on_wait = {});
  ~KeyLock();
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;

  bool held() const { return fd_ >= 0; }
  bool waited() const { return waited_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool waited_ = false;
  std::string error_;
};

}  // namespace egg::cache
