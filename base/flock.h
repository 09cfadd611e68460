// flock(2) that retries when a signal interrupts the wait (EINTR): the one wrapper the GPU lock,
// the GPU memory admission and the cache's key lock share.
#pragma once

namespace egg {

// ::flock(fd, op), again while it fails with EINTR; returns its result (errno set on failure).
int flock_retrying(int fd, int op);

}  // namespace egg
