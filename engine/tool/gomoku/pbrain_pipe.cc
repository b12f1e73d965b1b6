#include "engine/tool/gomoku/pbrain_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace ply {
namespace {

using Clock = std::chrono::steady_clock;

int MsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// write() with SIGPIPE held back in this thread: a dead reader is EPIPE, and the signal it raised
// is taken off the pending set before the mask is restored, so it never reaches the caller.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, old_mask, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  ssize_t n = write(fd, data, size);
  const int saved = errno;
  if (n < 0 && saved == EPIPE && !was_pending) {
    const timespec now{0, 0};
    sigtimedwait(&pipe_only, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved;
  return n;
}

std::string Quoted(const std::vector<std::string>& argv) {
  return argv.empty() ? std::string("(nothing)") : absl::StrCat("'", argv[0], "'");
}

// The process groups to kill on a fatal signal: the ids of children not yet reaped (a zombie keeps
// its id, so an entry never names a group that has been reused). Lock-free atomics, so that the
// handler may read them.
static_assert(std::atomic<pid_t>::is_always_lock_free);
std::atomic<pid_t> tracked_groups[PbrainPipe::kMaxTracked];

int Track(pid_t pid) {
  for (int i = 0; i < PbrainPipe::kMaxTracked; ++i) {
    pid_t empty = 0;
    if (tracked_groups[i].compare_exchange_strong(empty, pid)) return i;
  }
  return -1;  // full: this engine is killed by its owner only
}

void Untrack(int slot) {
  if (slot >= 0) tracked_groups[slot].store(0);
}

constexpr int kFatalSignals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t FatalSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kFatalSignals) sigaddset(&set, sig);
  return set;
}

// Async-signal-safe only: atomic loads, kill, sigaction, raise. The signal raised again stays
// pending until the handler returns (it is blocked in here) and then takes its default action.
extern "C" void KillEnginesAndDie(int sig) {
  for (std::atomic<pid_t>& group : tracked_groups) {
    const pid_t pid = group.load();
    if (pid > 0) kill(-pid, SIGKILL);
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(sig, &fallback, nullptr);
  raise(sig);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PbrainPipe>> PbrainPipe::Start(const std::vector<std::string>& argv,
                                                              const Options& options) {
  if (argv.empty()) return absl::InvalidArgumentError("no engine to start");
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    const int e = errno;
    close(to_child[0]);
    close(to_child[1]);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(e)));
  }
  // dup2 onto 0 and 1 clears close-on-exec there; every other pipe end closes in the child.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  // The engine starts with an empty signal mask and SIGPIPE at its default whatever the caller
  // had (an ignored signal survives exec): an engine whose manager is gone dies on its next write.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, pipe_only;
  sigemptyset(&none);
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &pipe_only);
  // Its own process group, so that a kill reaches whatever it started too (a shell's children).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  // A fatal signal waits until the new engine is tracked, so that it cannot be left behind.
  const sigset_t fatal = FatalSignals();
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &fatal, &old_mask);
  const int spawned = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  const int slot = spawned == 0 ? Track(pid) : -1;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(to_child[0]);
  close(from_child[1]);
  if (spawned != 0) {
    close(to_child[1]);
    close(from_child[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", Quoted(argv), ": ", strerror(spawned)));
  }
  // Sends poll for room instead of blocking on an engine that does not read.
  fcntl(to_child[1], F_SETFL, fcntl(to_child[1], F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<PbrainPipe>(
      new PbrainPipe(pid, slot, to_child[1], from_child[0], options));
}

absl::StatusOr<std::unique_ptr<PbrainPipe>> PbrainPipe::StartShell(const std::string& command,
                                                                   const Options& options) {
  return Start({"/bin/sh", "-c", command}, options);
}

void PbrainPipe::KillEnginesOnSignal() {
  struct sigaction action {};
  action.sa_handler = KillEnginesAndDie;
  action.sa_mask = FatalSignals();  // one at a time
  action.sa_flags = SA_RESTART;
  for (int sig : kFatalSignals) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    // An ignored signal stays ignored (nohup, a background job's SIGINT).
    if (old.sa_handler != SIG_IGN) sigaction(sig, &action, nullptr);
  }
}

PbrainPipe::~PbrainPipe() {
  if (pid_ > 0 && options_.exit_grace.count() > 0 && !Reap(std::chrono::milliseconds(0))) {
    // The whole exchange (END, and the exit after it) stays within the grace.
    const auto deadline = Clock::now() + options_.exit_grace;
    // It may be dead or deaf already; the kill below settles it.
    SendWithin("END", std::min(options_.send_timeout, options_.exit_grace), options_.exit_grace)
        .IgnoreError();
    if (in_ >= 0) close(in_);
    in_ = -1;
    Reap(std::chrono::milliseconds(MsLeft(deadline)));
  }
  if (pid_ > 0) KillGroupAndReap();
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
}

absl::Status PbrainPipe::Send(std::string_view line) {
  return SendWithin(line, options_.send_timeout, std::chrono::milliseconds(500));
}

absl::Status PbrainPipe::SendWithin(std::string_view line, std::chrono::milliseconds send_timeout,
                                    std::chrono::milliseconds reap_timeout) {
  if (in_ < 0) return absl::FailedPreconditionError("the engine's input is closed");
  std::string text(line);
  text += '\n';
  const auto deadline = Clock::now() + send_timeout;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = WriteWithoutSigpipe(in_, text.data() + done, text.size() - done);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE) {
      Reap(reap_timeout);
      return absl::UnavailableError(
          absl::StrCat("cannot send: ", pid_ > 0 ? "the engine closed its input" : EndText()));
    }
    if (errno != EAGAIN) return absl::InternalError(absl::StrCat("write: ", strerror(errno)));
    pollfd p{.fd = in_, .events = POLLOUT, .revents = 0};
    if (MsLeft(deadline) == 0 || poll(&p, 1, MsLeft(deadline)) == 0) {
      return absl::DeadlineExceededError(
          absl::StrCat("the engine read nothing for ", send_timeout.count(), " ms"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PbrainPipe::Answer(
    std::chrono::milliseconds timeout, const std::function<void(const std::string&)>& on_message) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind("MESSAGE", 0) == 0) {
        if (on_message) on_message(line);
        continue;
      }
      if (options_.skip_debug && (line.empty() || line.rfind("DEBUG", 0) == 0)) continue;
      return line;
    }
    if (out_ < 0) return absl::UnavailableError(absl::StrCat("no answer: ", EndText()));
    // Checked before every read, not left to poll: an engine that never stops chattering keeps
    // its output ready, and poll returns at once however late it is.
    const auto late = [&] {
      return absl::DeadlineExceededError(absl::StrCat("no answer within ", timeout.count(), " ms"));
    };
    if (Clock::now() >= deadline) return late();
    pollfd p{.fd = out_, .events = POLLIN, .revents = 0};
    const int ready = poll(&p, 1, MsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return late();
    char chunk[4096];
    ssize_t n = read(out_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(out_);
      out_ = -1;
      // It closed its output, most likely by exiting: a moment to learn how.
      Reap(std::chrono::milliseconds(500));
      return absl::UnavailableError(absl::StrCat("no answer: ", EndText()));
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::StatusOr<int> PbrainPipe::Wait(std::chrono::milliseconds timeout) {
  if (!Reap(timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("the engine is still running after ", timeout.count(), " ms"));
  }
  if (!status_known_) return absl::UnknownError(EndText());
  if (WIFEXITED(wait_status_)) return WEXITSTATUS(wait_status_);
  return absl::AbortedError(EndText());
}

bool PbrainPipe::Reap(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return true;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    // WNOWAIT leaves it a zombie, so that its process id (its group's id) cannot have been reused
    // when the group is swept of whatever it left running.
    siginfo_t info{};
    const int r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid_) {
      KillGroupAndReap();
      return true;
    }
    if (r < 0 && errno != EINTR) {  // not our child any more (SIGCHLD ignored): nothing to reap
      Untrack(slot_);
      slot_ = -1;
      pid_ = -1;
      status_known_ = false;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void PbrainPipe::KillGroupAndReap() {
  kill(-pid_, SIGKILL);
  // Off the list before the reap: until then the group's id cannot be reused.
  Untrack(slot_);
  slot_ = -1;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  status_known_ = r == pid_;
  wait_status_ = status_known_ ? status : 0;
  pid_ = -1;
}

std::string PbrainPipe::EndText() const {
  if (pid_ > 0) return "the engine closed its output";
  if (!status_known_) return "the engine ended (status unknown)";
  if (WIFEXITED(wait_status_)) {
    return absl::StrCat("the engine exited with status ", WEXITSTATUS(wait_status_));
  }
  if (WIFSIGNALED(wait_status_)) {
    return absl::StrCat("the engine was killed by signal ", WTERMSIG(wait_status_), " (",
                        strsignal(WTERMSIG(wait_status_)), ")");
  }
  return "the engine ended";
}

}  // namespace ply
