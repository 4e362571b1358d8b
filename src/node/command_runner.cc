#include "node/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "node/kubelet_process.h"

namespace draplane::node {

std::string render_command(const Command& c) {
  std::string out;
  for (const auto& e : c.env) out += e + " ";
  for (size_t i = 0; i < c.argv.size(); ++i) out += (i ? " " : "") + c.argv[i];
  if (!c.stdin_text.empty()) out += " <<< " + c.stdin_text;
  return out;
}

Result<std::string> RecordingRunner::run(const Command& command) {
  std::lock_guard<std::mutex> lock(mu_);
  log_.push_back(render_command(command));
  if (!command.argv.empty() &&
      std::find(failing_.begin(), failing_.end(), command.argv[0]) != failing_.end()) {
    return Status(Code::kUnavailable, fmt::format("{}: exit status 1", render_command(command)));
  }
  return std::string();
}

std::vector<std::string> RecordingRunner::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

void RecordingRunner::fail_program(std::string program) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_.push_back(std::move(program));
}

namespace {

// The agent's environment with `extra` ("NAME=value") set on top: a name in
// `extra` replaces the inherited value, as putenv would.
std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
  auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    const std::string name = name_of(entry);
    bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) { return name_of(x) == name; });
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Writes `input` to `in_fd` while reading `out_fd` to its end; closes both.
// Both at once: a command that answers as it reads (cat) fills its stdout pipe
// and stops reading long before a large input is written.
Result<std::string> exchange(int in_fd, int out_fd, std::string_view input) {
  // A command that exits without reading its input makes our write fail with
  // EPIPE and raise SIGPIPE, which would kill a process that does not ignore it
  // (tests, library users): keep it blocked here and take it back below.
  sigset_t pipe_set, old_mask;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  bool raised_pipe = false;
  std::string out;
  std::string error;
  size_t written = 0;
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  } else {
    ::fcntl(in_fd, F_SETFL, ::fcntl(in_fd, F_GETFL) | O_NONBLOCK);
  }
  char buf[65536];
  while (out_fd >= 0) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    int n = ::poll(fds, in_fd >= 0 ? 2 : 1, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = fmt::format("poll: {}", std::strerror(errno));
      break;
    }
    if (in_fd >= 0 && fds[1].revents != 0) {
      ssize_t w = ::write(in_fd, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      bool done = written == input.size();
      if (w < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        // EPIPE: the command closed its stdin; what it read is up to it, its
        // exit status says whether that is a failure.
        if (errno == EPIPE) {
          raised_pipe = true;
        } else {
          error = fmt::format("write stdin: {}", std::strerror(errno));
        }
        done = true;
      }
      if (done) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
    if (fds[0].revents != 0) {
      ssize_t r = ::read(out_fd, buf, sizeof buf);
      if (r > 0) {
        out.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        if (r < 0) error = fmt::format("read stdout: {}", std::strerror(errno));
        ::close(out_fd);
        out_fd = -1;
      }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  if (out_fd >= 0) ::close(out_fd);
  if (raised_pipe) {
    timespec zero{};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (!error.empty()) return Status(Code::kUnavailable, error);
  return out;
}

}  // namespace

Result<std::string> ProcessRunner::run(const Command& command) {
  if (command.argv.empty()) return invalid_error("empty command");
  // Everything the child needs is built here, before the spawn: a child of a
  // threaded process may only make async-signal-safe calls between fork and
  // exec (putenv or malloc there can deadlock on a lock another thread held).
  std::vector<std::string> env = merged_environment(command.env);
  std::string exe = resolve_program(command.argv[0], env);
  if (exe.empty()) {
    return Status(Code::kUnavailable,
                  fmt::format("{}: executable file not found in $PATH", render_command(command)));
  }
  std::vector<char*> argv, envp;
  for (const auto& a : command.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return Status(Code::kUnavailable, fmt::format("pipe: {}", std::strerror(errno)));
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return Status(Code::kUnavailable, fmt::format("pipe: {}", std::strerror(err)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  // Nothing of the agent's beyond stdin/stdout/stderr, whatever its flags.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  set_child_signal_defaults(attr, /*own_process_group=*/false);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    return Status(Code::kUnavailable, fmt::format("{}: start: {}", render_command(command), std::strerror(rc)));
  }
  Result<std::string> out = exchange(in_pipe[1], out_pipe[0], command.stdin_text);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!out.has_value()) return Status(Code::kUnavailable, fmt::format("{}: {}", render_command(command), out.error().message()));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status(Code::kUnavailable, fmt::format("{}: exit status {}", render_command(command),
                                                  WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  return out;
}

}  // namespace draplane::node
