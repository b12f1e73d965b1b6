// PbrainPipe against small shell engines: answers and chatter, and every way an engine can fail
// (missing, exiting, hanging, not reading) ending in an error within its limit, with no process
// or descriptor left behind.
#include "engine/games/gomoku/pbrain_pipe.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"

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

}  // namespace
}  // namespace ply
