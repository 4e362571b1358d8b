#include "node/command_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

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

Result<std::string> ProcessRunner::run(const Command& command) {
  if (command.argv.empty()) return invalid_error("empty command");
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return Status(Code::kUnavailable, std::strerror(errno));
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return Status(Code::kUnavailable, std::strerror(errno));
  }
  // Build argv/env before fork: only async-signal-safe calls in the child.
  std::vector<char*> argv;
  for (const auto& a : command.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Status(Code::kUnavailable, fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    for (const auto& e : command.env) ::putenv(const_cast<char*>(e.c_str()));
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (!command.stdin_text.empty()) {
    ssize_t ignored = ::write(in_pipe[1], command.stdin_text.data(), command.stdin_text.size());
    (void)ignored;
  }
  ::close(in_pipe[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out_pipe[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status(Code::kUnavailable, fmt::format("{}: exit status {}", render_command(command),
                                                  WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  return out;
}

}  // namespace draplane::node
