// PbrainPipe against small shell engines: answers and chatter, and every way an engine can fail
// (missing, exiting, hanging, not reading) ending in an error within its limit, with no process
// or descriptor left behind; and pbrain-match, stopped by a signal, taking its engines with it,
// and saying what a 2-0 match tells of the Elo difference (no infinities).
#include "engine/tool/gomoku/pbrain_pipe.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace ply {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::unique_ptr<PbrainPipe> Shell(const std::string& command, PbrainPipe::Options options = {}) {
  absl::StatusOr<std::unique_ptr<PbrainPipe>> pipe = PbrainPipe::StartShell(command, options);
  EXPECT_TRUE(pipe.ok()) << pipe.status();
  return pipe.ok() ? *std::move(pipe) : nullptr;
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Whether `pid` is a live process (not gone, not a zombie waiting for its parent).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

// Whether `pid` is still an entry of the process table, zombie or not.
bool Exists(pid_t pid) { return kill(pid, 0) == 0; }

int OpenDescriptors() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

TEST(PbrainPipe, ReturnsTheAnswerAndHandsOverMessages) {
  auto engine = Shell(
      "read l; echo \"MESSAGE got $l\"; echo 'DEBUG noise'; echo; printf 'OK\\r\\n'; "
      "read l; echo \"$l\"");
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Send("START 15").ok());
  std::vector<std::string> messages;
  absl::StatusOr<std::string> ok =
      engine->Answer(milliseconds(5000), [&](const std::string& m) { messages.push_back(m); });
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, "OK");
  EXPECT_EQ(messages, std::vector<std::string>{"MESSAGE got START 15"});
  ASSERT_TRUE(engine->Send("END").ok());
  EXPECT_EQ(engine->Answer(milliseconds(5000)).value_or("?"), "END");
  EXPECT_EQ(engine->Wait(milliseconds(5000)).value_or(-1), 0);
}

TEST(PbrainPipe, CanShowDebugAndBlankLines) {
  auto engine = Shell("echo 'DEBUG noise'; echo; echo OK", {.skip_debug = false});
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->Answer(milliseconds(5000)).value_or("?"), "DEBUG noise");
  EXPECT_EQ(engine->Answer(milliseconds(5000)).value_or("?"), "");
  EXPECT_EQ(engine->Answer(milliseconds(5000)).value_or("?"), "OK");
}

TEST(PbrainPipe, AProgramThatCannotRunIsAnErrorAtStart) {
  absl::StatusOr<std::unique_ptr<PbrainPipe>> pipe =
      PbrainPipe::Start({"/nonexistent/pbrain-engine"}, {});
  ASSERT_FALSE(pipe.ok());
  EXPECT_NE(pipe.status().message().find("cannot run '/nonexistent/pbrain-engine'"),
            std::string::npos)
      << pipe.status();
}

TEST(PbrainPipe, AnEngineThatDiesSaysHowInsteadOfAnAnswer) {
  auto exits = Shell("read l; exit 3");
  ASSERT_NE(exits, nullptr);
  ASSERT_TRUE(exits->Send("START 15").ok());
  const auto start = Clock::now();
  absl::StatusOr<std::string> answer = exits->Answer(milliseconds(20000));
  EXPECT_LT(MsSince(start), 5000);
  ASSERT_FALSE(answer.ok());
  EXPECT_TRUE(absl::IsUnavailable(answer.status())) << answer.status();
  EXPECT_NE(answer.status().message().find("exited with status 3"), std::string::npos)
      << answer.status();
  EXPECT_EQ(exits->pid(), -1);  // reaped

  auto crashes = Shell("kill -SEGV $$");
  ASSERT_NE(crashes, nullptr);
  absl::StatusOr<int> status = crashes->Wait(milliseconds(5000));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.status().message().find("killed by signal 11"), std::string::npos)
      << status.status();
}

TEST(PbrainPipe, SendingToADeadEngineIsAnErrorNotASignal) {
  auto engine = Shell("exit 0");
  ASSERT_NE(engine, nullptr);
  ASSERT_EQ(engine->Wait(milliseconds(5000)).value_or(-1), 0);
  // The default SIGPIPE action would end this test binary here.
  absl::Status sent = engine->Send("START 15");
  ASSERT_FALSE(sent.ok());
  EXPECT_NE(sent.message().find("cannot send: the engine exited with status 0"), std::string::npos)
      << sent;
}

TEST(PbrainPipe, AHangingEngineTimesOutAndIsKilledWithWhatItStarted) {
  // The shell stays (it waits for its child), so the engine is two processes; the sleeper's
  // process id is its first line.
  auto engine = Shell("sleep 300 & echo $!; wait", {.exit_grace = milliseconds(100)});
  ASSERT_NE(engine, nullptr);
  absl::StatusOr<std::string> first = engine->Answer(milliseconds(5000));
  ASSERT_TRUE(first.ok()) << first.status();
  pid_t sleeper = 0;
  ASSERT_TRUE(absl::SimpleAtoi(*first, &sleeper)) << *first;
  const pid_t shell = engine->pid();
  ASSERT_GT(shell, 0);
  ASSERT_TRUE(Alive(sleeper));

  const auto start = Clock::now();
  absl::StatusOr<std::string> answer = engine->Answer(milliseconds(200));
  EXPECT_GE(MsSince(start), 190);
  EXPECT_LT(MsSince(start), 3000);
  ASSERT_FALSE(answer.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(answer.status())) << answer.status();
  EXPECT_EQ(engine->Wait(milliseconds(50)).status().code(), absl::StatusCode::kDeadlineExceeded);

  engine.reset();
  EXPECT_FALSE(Exists(shell));  // killed and reaped: no zombie of ours
  const auto gone = Clock::now();
  while (Alive(sleeper) && MsSince(gone) < 5000) usleep(10000);
  EXPECT_FALSE(Alive(sleeper));
}

TEST(PbrainPipe, AnEngineThatNeverStopsChatteringStillTimesOut) {
  // A caller slower than the engine (here 200 us a message) always finds its output ready, so
  // only a deadline checked before each read ends the Answer.
  auto engine = Shell("yes 'MESSAGE x'");
  ASSERT_NE(engine, nullptr);
  const pid_t group = engine->pid();
  std::atomic<int> messages{0};
  std::promise<absl::Status> answered;
  std::future<absl::Status> result = answered.get_future();
  std::thread reader([&] {
    answered.set_value(engine
                           ->Answer(milliseconds(200),
                                    [&](const std::string&) {
                                      ++messages;
                                      usleep(200);
                                    })
                           .status());
  });
  const bool in_time = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  // An Answer that does not stop by itself ends when the engine's output closes.
  if (!in_time) kill(-group, SIGKILL);
  reader.join();
  ASSERT_TRUE(in_time) << "Answer went on reading 10 s past its 200 ms";
  const absl::Status status = result.get();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_NE(status.message().find("no answer within 200 ms"), std::string::npos) << status;
  EXPECT_GT(messages.load(), 0);
}

TEST(PbrainPipe, AnEngineReapedByNoOneWeSawEndsWithAnUnknownStatus) {
  // With SIGCHLD ignored the kernel reaps children itself and their exit status is lost.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  // Put back even when an assertion ends the test early.
  struct Restore {
    struct sigaction old {};
    ~Restore() { sigaction(SIGCHLD, &old, nullptr); }
  } restore;
  ASSERT_EQ(sigaction(SIGCHLD, &ignore, &restore.old), 0);
  {
    auto engine = Shell("read l; exit 3");
    ASSERT_NE(engine, nullptr);
    ASSERT_TRUE(engine->Send("START 15").ok());
    absl::StatusOr<std::string> answer = engine->Answer(milliseconds(5000));
    ASSERT_FALSE(answer.ok());
    EXPECT_TRUE(absl::IsUnavailable(answer.status())) << answer.status();
    EXPECT_NE(answer.status().message().find("the engine ended (status unknown)"),
              std::string::npos)
        << answer.status();
    EXPECT_EQ(engine->pid(), -1);
    absl::StatusOr<int> status = engine->Wait(milliseconds(100));
    ASSERT_FALSE(status.ok()) << *status;
    EXPECT_NE(status.status().message().find("status unknown"), std::string::npos)
        << status.status();
  }
}

TEST(PbrainPipe, AnEngineThatClosedItsInputGetsOnlyTheGraceAtTheEnd) {
  // END meets a closed pipe; learning how the engine ended must not outlast exit_grace (the
  // engine never ends: it is killed when the grace is over). 500 ms was waited before.
  auto engine = Shell("exec 0<&-; echo closed; exec sleep 300", {.exit_grace = milliseconds(20)});
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->Answer(milliseconds(5000)).value_or("?"), "closed");
  const pid_t pid = engine->pid();
  const auto start = Clock::now();
  engine.reset();
  EXPECT_LT(MsSince(start), 400);
  EXPECT_FALSE(Exists(pid));
}

TEST(PbrainPipe, AnEngineThatDoesNotReadTimesOutOnSend) {
  auto engine = Shell("exec sleep 300", {.send_timeout = milliseconds(200)});
  ASSERT_NE(engine, nullptr);
  const std::string line(100000, 'x');  // more than a pipe holds
  const auto start = Clock::now();
  absl::Status sent = engine->Send(line);
  EXPECT_LT(MsSince(start), 3000);
  EXPECT_TRUE(absl::IsDeadlineExceeded(sent)) << sent;
}

TEST(PbrainPipe, LeavesNoDescriptorsOrProcessesBehind) {
  const int before = OpenDescriptors();
  std::vector<pid_t> pids;
  for (int i = 0; i < 10; ++i) {
    // Alternately: ends at END within the grace, ignores END and is killed, or already gone.
    const char* commands[3] = {"while read l; do [ \"$l\" = END ] && exit 0; done",
                               "trap '' TERM; exec sleep 300", "exit 1"};
    auto engine = Shell(commands[i % 3], {.exit_grace = milliseconds(100)});
    ASSERT_NE(engine, nullptr);
    pids.push_back(engine->pid());
    if (i % 3 == 2) usleep(20000);
  }
  EXPECT_EQ(OpenDescriptors(), before);
  for (pid_t pid : pids) EXPECT_FALSE(Exists(pid)) << pid;
}

// pbrain-match, stopped by `sig` while its engine hangs at START, dies of that signal and leaves
// neither the engine (a shell) nor what the engine started (a sleeper) running, though both are
// in a process group of their own which the signal itself did not reach.
void ExpectMatchTakesItsEnginesAlong(int sig) {
  int err[2];
  ASSERT_EQ(pipe2(err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, fatal;
  sigemptyset(&none);
  sigemptyset(&fatal);
  sigaddset(&fatal, SIGINT);
  sigaddset(&fatal, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &fatal);  // whatever this test was started with
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const std::string engine = "sleep 300 & echo engine $$ $! >&2; wait";
  std::vector<std::string> argv = {PBRAIN_MATCH_PATH, "--games", "1", engine, engine};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t match = -1;
  const int spawned = posix_spawn(&match, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(err[1]);
  ASSERT_EQ(spawned, 0) << strerror(spawned);
  pid_t shell = 0, sleeper = 0;
  // Whatever assertion ends the test, nothing it started is left running.
  struct Sweep {
    pid_t& match;
    pid_t& shell;
    ~Sweep() {
      if (match > 0) {
        kill(match, SIGKILL);
        waitpid(match, nullptr, 0);
      }
      if (shell > 0 && Alive(shell)) kill(-shell, SIGKILL);
    }
  } sweep{match, shell};

  // The engine's line on pbrain-match's stderr: its shell (its group) and the sleeper.
  std::string text;
  const auto start = Clock::now();
  while (shell == 0 && MsSince(start) < 10000) {
    pollfd p{.fd = err[0], .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char chunk[256];
    const ssize_t n = read(err[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    text.append(chunk, static_cast<size_t>(n));
    std::vector<std::string> lines = absl::StrSplit(text, '\n');
    lines.pop_back();  // not ended yet, or empty
    for (const std::string& line : lines) {
      std::vector<std::string> words = absl::StrSplit(line, ' ');
      if (words.size() == 3 && words[0] == "engine" && absl::SimpleAtoi(words[1], &shell) &&
          absl::SimpleAtoi(words[2], &sleeper)) {
        break;
      }
      shell = sleeper = 0;
    }
  }
  close(err[0]);
  EXPECT_GT(shell, 0) << text;
  ASSERT_TRUE(shell == 0 || Alive(shell));

  kill(match, sig);
  int status = 0;
  ASSERT_EQ(waitpid(match, &status, 0), match);
  match = -1;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
  if (shell == 0) return;
  const auto killed = Clock::now();
  while ((Alive(shell) || Alive(sleeper)) && MsSince(killed) < 5000) usleep(10000);
  EXPECT_FALSE(Alive(shell));
  EXPECT_FALSE(Alive(sleeper));
}

TEST(PbrainMatch, StoppedBySigtermKillsItsEngines) { ExpectMatchTakesItsEnginesAlong(SIGTERM); }

TEST(PbrainMatch, StoppedBySigintKillsItsEngines) { ExpectMatchTakesItsEnginesAlong(SIGINT); }

// B answers START with "NO" and so loses each game at once, with either colour; A need only
// answer START. Two games won of two: no estimate, the honest bound instead of "+inf".
TEST(PbrainMatch, ASweepOfTwoGamesGivesABoundNotInfinities) {
  const std::string command = std::string(PBRAIN_MATCH_PATH) +
                              " --games 2 'echo OK; cat >/dev/null' 'echo NO; cat >/dev/null'";
  FILE* out = popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::string text;
  char chunk[256];
  while (std::fgets(chunk, sizeof(chunk), out) != nullptr) text += chunk;
  EXPECT_EQ(pclose(out), 0) << text;
  EXPECT_NE(text.find("A +2 =0 -0, score 100.0%, Elo: no estimate, all 2 games won (95%: at "
                      "least -216)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
}

}  // namespace
}  // namespace ply
