// A child process speaking the Gomocup (pbrain) protocol on its stdin and stdout, as a tournament
// manager drives one: lines are sent, and an answer is the next line that is not chatter (MESSAGE
// lines, handed to the caller; DEBUG and blank lines, dropped). pbrain-match plays its games
// through it and the Gomoku tests talk to pbrain-ply and pbrain-greedy through it.
//
// Every wait has a limit, so an engine that dies or hangs is an error that says which, never a
// hang of the caller: an answer has a timeout, a send has one (an engine that stops reading fills
// the pipe), waiting for the exit has one, and the destructor kills and reaps what is left. The
// pipes are close-on-exec, so no other child inherits them, and a write to a dead engine is an
// error, not a SIGPIPE in the caller.
//
// An engine runs in its own process group, so a Ctrl-C or a SIGTERM meant for the caller does not
// reach it; a program that can be stopped that way calls KillEnginesOnSignal once, so that every
// engine not yet reaped is killed with its group before the program dies of the signal.
#ifndef PLY_ENGINE_TOOL_GOMOKU_PBRAIN_PIPE_H_
#define PLY_ENGINE_TOOL_GOMOKU_PBRAIN_PIPE_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ply {

class PbrainPipe {
 public:
  struct Options {
    // DEBUG lines and blank lines are skipped, as a manager does; off, Answer returns them (for a
    // test that wants to see every line the engine writes).
    bool skip_debug = true;
    // On destruction an engine still running is sent END, has its stdin closed and gets this long
    // to leave on its own before it is killed; zero kills it at once.
    std::chrono::milliseconds exit_grace{500};
    // The longest a Send waits for room in the pipe of an engine that does not read.
    std::chrono::milliseconds send_timeout{5000};
  };

  // Starts argv[0] (a path; no PATH search, no shell) with the rest as its arguments. An error
  // when it cannot be run (a missing or non-executable file).
  static absl::StatusOr<std::unique_ptr<PbrainPipe>> Start(const std::vector<std::string>& argv,
                                                           const Options& options);
  // Starts `command` as a shell command line (/bin/sh -c), as tournament managers take engines.
  static absl::StatusOr<std::unique_ptr<PbrainPipe>> StartShell(const std::string& command,
                                                                const Options& options);

  PbrainPipe(const PbrainPipe&) = delete;
  PbrainPipe& operator=(const PbrainPipe&) = delete;
  ~PbrainPipe();

  // Writes `line` and a newline.
  absl::Status Send(std::string_view line);

  // The next line that is not chatter, without its line end. MESSAGE lines met on the way go to
  // `on_message` (if given). DeadlineExceeded after `timeout`; Unavailable once the engine has
  // closed its output, saying how it ended when it has.
  absl::StatusOr<std::string> Answer(
      std::chrono::milliseconds timeout,
      const std::function<void(const std::string&)>& on_message = nullptr);

  // Waits up to `timeout` for the engine to exit by itself and returns its exit status; an error
  // if it was killed by a signal, is still running, or was reaped by someone else (SIGCHLD
  // ignored), which leaves its status unknown.
  absl::StatusOr<int> Wait(std::chrono::milliseconds timeout);

  // The child's process id while it has not been reaped, else -1.
  pid_t pid() const { return pid_; }

  // From now on SIGINT, SIGTERM and SIGHUP (each one that is not ignored) kill the process group of
  // every engine this process has started and not reaped, then end the process by that signal as
  // its default action would. Up to kMaxTracked engines at once are covered.
  static void KillEnginesOnSignal();
  static constexpr int kMaxTracked = 64;

 private:
  PbrainPipe(pid_t pid, int slot, int in, int out, const Options& options)
      : options_(options), pid_(pid), slot_(slot), in_(in), out_(out) {}
  // Send with its own limits: `send_timeout` for room in the pipe, `reap_timeout` to learn how an
  // engine that closed its input ended.
  absl::Status SendWithin(std::string_view line, std::chrono::milliseconds send_timeout,
                          std::chrono::milliseconds reap_timeout);
  // Reaps the child if it has exited within `timeout`; true once it is reaped.
  bool Reap(std::chrono::milliseconds timeout);
  // Kills what is left of the group of the exited or killed child, and reaps it.
  void KillGroupAndReap();
  std::string EndText() const;

  Options options_;
  pid_t pid_;
  int slot_;  // the child's entry among the groups to kill on a signal, or -1
  int in_, out_;
  int wait_status_ = 0;        // valid once pid_ is -1 and status_known_
  bool status_known_ = false;  // false when something else reaped the child (SIGCHLD ignored)
  std::string buffer_;
};

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_GOMOKU_PBRAIN_PIPE_H_
