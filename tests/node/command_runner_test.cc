// ProcessRunner and PosixLauncher against real processes: stdin larger than a
// pipe buffer, the environment, and no descriptor of ours in the child.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "node/command_runner.h"
#include "node/kubelet_process.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

std::string payload(size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 977) % 26);
  return s;
}

TEST(ProcessRunnerTest, EchoesAStdinLargerThanThePipeBuffer) {
  // 1 MiB: cat fills its stdout pipe (64 KiB) long before it has read all of
  // its stdin, so the runner must read while it writes.
  ProcessRunner runner;
  const std::string in = payload(1 << 20);
  auto out = runner.run(Command{{"cat"}, {}, in});
  ASSERT_TRUE(out.has_value()) << out.error().to_string();
  ASSERT_EQ(out->size(), in.size());
  EXPECT_TRUE(*out == in);
}

TEST(ProcessRunnerTest, ACommandThatIgnoresItsStdinIsNoFailure) {
  ProcessRunner runner;
  auto out = runner.run(Command{{"true"}, {}, payload(1 << 20)});
  EXPECT_TRUE(out.has_value()) << out.error().to_string();
}

TEST(ProcessRunnerTest, PassesTheEnvironmentOnTopOfTheInheritedOne) {
  ::setenv("DRAPLANE_RUNNER_INHERITED", "kept", 1);
  ::setenv("DRAPLANE_RUNNER_REPLACED", "old", 1);
  ProcessRunner runner;
  auto out = runner.run(Command{{"env"}, {"DRAPLANE_RUNNER_EXTRA=a b=c", "DRAPLANE_RUNNER_REPLACED=new"}, ""});
  ASSERT_TRUE(out.has_value()) << out.error().to_string();
  EXPECT_NE(out->find("\nDRAPLANE_RUNNER_EXTRA=a b=c\n"), std::string::npos) << *out;
  EXPECT_NE(out->find("DRAPLANE_RUNNER_INHERITED=kept\n"), std::string::npos) << *out;
  EXPECT_NE(out->find("DRAPLANE_RUNNER_REPLACED=new\n"), std::string::npos) << *out;
  EXPECT_EQ(out->find("DRAPLANE_RUNNER_REPLACED=old"), std::string::npos) << *out;
  // The runner's own process keeps its environment (no putenv in this process).
  EXPECT_EQ(::getenv("DRAPLANE_RUNNER_EXTRA"), nullptr);
  EXPECT_STREQ(::getenv("DRAPLANE_RUNNER_REPLACED"), "old");
}

TEST(ProcessRunnerTest, ReportsExitStatusAndMissingPrograms) {
  ProcessRunner runner;
  auto failed = runner.run(Command{{"sh", "-c", "exit 3"}, {}, ""});
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code(), Code::kUnavailable);
  EXPECT_NE(failed.error().message().find("exit status 3"), std::string::npos) << failed.error().message();
  auto missing = runner.run(Command{{"draplane-no-such-program"}, {}, ""});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("draplane-no-such-program"), std::string::npos);
}

// A descriptor opened without O_CLOEXEC (as a library might) must not reach
// the child either.
class InheritableFd {
 public:
  InheritableFd() : fd_(::open("/dev/null", O_RDONLY)) {}
  ~InheritableFd() { ::close(fd_); }
  int fd() const { return fd_; }
  // A shell line that prints "leaked" or "closed" for this descriptor in the shell.
  std::string probe() const {
    return "if [ -e /proc/self/fd/" + std::to_string(fd_) + " ]; then echo leaked; else echo closed; fi";
  }

 private:
  int fd_;
};

TEST(ProcessRunnerTest, TheCommandGetsNoOtherDescriptorOfOurs) {
  InheritableFd fd;
  ASSERT_GE(fd.fd(), 3);
  ProcessRunner runner;
  auto out = runner.run(Command{{"sh", "-c", fd.probe()}, {}, ""});
  ASSERT_TRUE(out.has_value()) << out.error().to_string();
  EXPECT_EQ(*out, "closed\n");
}

TEST(PosixLauncherTest, AContainerGetsNoOtherDescriptorOfOursAndItsOwnProcessGroup) {
  testing::TempDir dir("launcher");
  InheritableFd fd;
  PosixLauncher launcher;
  ProcessSpec spec;
  spec.argv = {"sh", "-c", fd.probe() + "; ls /proc/$$/fd"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.log_path = dir.file("c/0.log");
  auto pid = launcher.start(spec);
  ASSERT_TRUE(pid.has_value()) << pid.error().to_string();
  EXPECT_EQ(::getpgid(*pid), *pid);
  EXPECT_EQ(launcher.wait(*pid), 0);
  // sh's own descriptors: stdin, stdout, stderr and nothing else.
  EXPECT_EQ(testing::read_file(spec.log_path), "closed\n0\n1\n2\n");
}

}  // namespace
}  // namespace draplane::node
