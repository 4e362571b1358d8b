#include "node/kubelet_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/split.h"

namespace draplane::node {

void set_child_signal_defaults(posix_spawnattr_t& attr, bool own_process_group) {
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (own_process_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
}
// argv[0] without a slash is searched in the child's PATH (posix_spawnp would
// search the agent's PATH instead).
std::string resolve_program(const std::string& prog, const std::vector<std::string>& env) {
  if (prog.find('/') != std::string::npos) return prog;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  for (std::string_view dir : common::split(path, ':')) {
    std::string cand = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0) return cand;
  }
  return "";
}

Result<int> PosixLauncher::start(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status(Code::kInvalid, "container has no command (no image to take one from)");
  std::string exe = resolve_program(spec.argv[0], spec.env);
  if (exe.empty()) {
    return Status(Code::kUnavailable, "exec: \"" + spec.argv[0] + "\": executable file not found in $PATH");
  }
  if (!spec.log_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(spec.log_path).parent_path(), ec);
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  const std::string log = spec.log_path.empty() ? "/dev/null" : spec.log_path;
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (!spec.working_dir.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.working_dir.c_str());
  // Nothing of the agent's beyond stdin/stdout/stderr, whatever its flags: a
  // descriptor without O_CLOEXEC (a std::fstream, a socket between Asio's
  // socket() and our fcntl) would otherwise outlive the agent in the
  // container, e.g. the API server's listening socket after a kill -9.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  set_child_signal_defaults(attr, /*own_process_group=*/true);
  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status(Code::kUnavailable, "start " + spec.argv[0] + ": " + std::strerror(rc));
  return static_cast<int>(pid);
}

namespace {

// Each container has a thread blocked here. Threads asleep in waitpid all
// wake on every child's exit (the kernel's wait queue is the process's, and
// each waker rescans the children of every thread), so with hundreds of
// containers per agent process that cost grows with the square of the count
// (perf: __do_wait at 4% of a 2,000-pod run). A pidfd wakes only the thread
// waiting for that process; waitpid then returns at once.
void wait_exit_pidfd(int pid) {
#if defined(SYS_pidfd_open)
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return;  // ENOSYS (kernel < 5.3) or gone: waitpid alone decides
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  ::close(fd);
#else
  (void)pid;
#endif
}

}  // namespace

namespace {

struct ProcStat {
  char state = '?';
  int pgrp = 0;
  uint64_t start_time = 0;
};

// Fields of /proc/<pid>/stat; nullopt when the process is gone. The command
// name (field 2) may hold spaces and parentheses: fields are counted after
// its last ')'.
std::optional<ProcStat> read_proc_stat(const std::string& proc_root, int pid) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  ProcStat st;
  std::string skip;
  fields >> st.state;  // field 3
  fields >> skip;      // 4: ppid
  fields >> st.pgrp;   // 5
  for (int f = 6; f < 22; ++f) fields >> skip;
  fields >> st.start_time;  // 22
  if (!fields) return std::nullopt;
  return st;
}

// Live (not zombie) processes in group `pgid` that started at or after `since`.
std::vector<int> group_members(const std::string& proc_root, int pgid, uint64_t since) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    int pid = std::stoi(name);
    auto st = read_proc_stat(proc_root, pid);
    if (st && st->pgrp == pgid && st->state != 'Z' && st->start_time >= since) out.push_back(pid);
  }
  return out;
}

}  // namespace

std::optional<uint64_t> process_start_time(int pid, const std::string& proc_root) {
  auto st = read_proc_stat(proc_root, pid);
  if (!st) return std::nullopt;
  return st->start_time;
}

int end_process_group(int pgid, uint64_t start_time, int wait_ms, const std::string& proc_root) {
  if (pgid <= 1) return 0;
  auto leader = read_proc_stat(proc_root, pgid);
  if (leader && leader->start_time != start_time) return 0;  // the pid names another process now
  std::vector<int> members = group_members(proc_root, pgid, start_time);
  if (leader) {
    ::kill(-pgid, SIGKILL);
  } else {
    for (int pid : members) ::kill(pid, SIGKILL);
  }
  // Not our children: whoever reaps them (init) decides when they vanish;
  // a zombie no longer runs and counts as gone.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (!group_members(proc_root, pgid, start_time).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return static_cast<int>(members.size());
}

int PosixLauncher::wait(int pid) {
  int status = 0;
  wait_exit_pidfd(pid);
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 128 + SIGKILL;  // not our child any more: report as killed
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void PosixLauncher::kill(int pid, int signal) {
  if (pid <= 0) return;
  ::kill(-pid, signal);
}

}  // namespace draplane::node
