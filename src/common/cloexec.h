// Close-on-exec for descriptors that libraries open without it (Boost.Asio's
// sockets and acceptors). Containers and commands are spawned with every
// descriptor above stderr closed anyway (node/kubelet_process.cc,
// node/command_runner.cc); this keeps any other exec, and the window before
// such a spawn, from handing them on (a pod holding the API server's port
// after the server died).
#pragma once

#include <fcntl.h>

namespace draplane {

inline void set_cloexec(int fd) {
  if (fd < 0) return;
  int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0 && (flags & FD_CLOEXEC) == 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

}  // namespace draplane
