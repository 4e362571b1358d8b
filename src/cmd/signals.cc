#include "cmd/signals.h"

#include <ctime>
#include <thread>

namespace draplane::cmd {

sigset_t block_stop_signals() {
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return sigs;
}

int wait_for_signal(const sigset_t& sigs, const std::function<bool()>& failed) {
  while (true) {
    timespec ts{0, 200'000'000};
    int sig = sigtimedwait(&sigs, nullptr, &ts);
    if (sig > 0) return sig;
    if (failed && failed()) return 0;
  }
}

void stop_on_signal(const sigset_t& sigs, std::atomic<bool>& stop) {
  std::thread([sigs, &stop] {
    int sig = 0;
    sigwait(&sigs, &sig);
    stop.store(true);
  }).detach();
}

}  // namespace draplane::cmd
