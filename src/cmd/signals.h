// Stop signals for the long-running subcommands (server, up, agent, scheduler,
// controllers): SIGINT and SIGTERM are blocked before any thread starts, so that
// one thread can wait for them with sigwait and shut down in order.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>

namespace draplane::cmd {

// Blocks SIGINT and SIGTERM in the calling thread (threads started later inherit
// the mask) and ignores SIGPIPE (a peer closing a socket is not fatal). Returns
// the blocked set.
sigset_t block_stop_signals();

// Waits for a signal of `sigs`; every 200 ms calls `failed`, and returns early
// when it answers true. Returns the signal number, or 0 for an early return.
int wait_for_signal(const sigset_t& sigs, const std::function<bool()>& failed);

// Sets `stop` once a signal of `sigs` arrives (a detached thread that ends with the
// process).
void stop_on_signal(const sigset_t& sigs, std::atomic<bool>& stop);

}  // namespace draplane::cmd
