// ply-bot under issue #20's hardening, as real processes over gRPC: bot time as a budgeted
// resource (a person's move first, bot-vs-bot work kept off the reserved workers), safe
// defaults (a token, loopback unless authenticated), and request text that cannot forge log
// lines or be echoed whole.
#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "bot-service/bot_client.h"
#include "bot-service/bot_service.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "tests/bot_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using testing::Call;
using testing::Metrics;
using testing::MsSince;
using testing::Request;
using testing::ServerProcess;
using testing::StartBot;
using testing::WaitForMetrics;
using Clock = std::chrono::steady_clock;

// --- Issue #20: bot time as a budgeted resource, safe defaults, text that cannot forge logs ---

v1::ChooseMoveRequest Background(v1::ChooseMoveRequest r) {
  r.set_priority(v1::BOT_PRIORITY_BACKGROUND);
  return r;
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name, "-", getpid());
}

void WriteFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

std::string ReadFile(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// ply-bot with its stderr (the request log) in `log`.
std::unique_ptr<ServerProcess> StartBotLoggingTo(const std::string& log,
                                                 const std::vector<std::string>& flags) {
  std::string command =
      absl::StrCat("exec ", PLY_BOT_BINARY, " --host=127.0.0.1 --port=0 --tt_mb=4");
  for (const std::string& f : flags) absl::StrAppend(&command, " ", f);
  absl::StrAppend(&command, " 2>", log);
  absl::StatusOr<std::unique_ptr<ServerProcess>> bot =
      ServerProcess::Start("/bin/sh", {"-c", command});
  EXPECT_TRUE(bot.ok()) << bot.status();
  return bot.ok() ? *std::move(bot) : nullptr;
}

// Runs ply-bot to its end (for flags it refuses); its exit code and everything it printed.
std::pair<int, std::string> RunBotToEnd(const std::string& flags) {
  // Bounded: a ply-bot that accepts the flags serves until killed (exit 124 from timeout).
  const std::string command = absl::StrCat("timeout 10 ", PLY_BOT_BINARY, " ", flags, " 2>&1");
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[1024];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(WorkerPool, InteractiveWorkGoesFirstAndBackgroundKeepsOffTheReservedPart) {
  bot::WorkerPool pool({.workers = 2,
                        .queue_capacity = 2,
                        .reserved_workers = 1,
                        .reserved_queue = 1,
                        .tt_megabytes = 1});
  std::mutex mu;
  std::vector<std::string> started;
  // bg1 ends first, alone, so that which task its worker takes next is the pool's choice alone
  // (two workers freed at once would start their next tasks in either order).
  std::promise<void> release_first, release;
  std::shared_future<void> first_released = release_first.get_future().share();
  std::shared_future<void> released = release.get_future().share();
  auto task = [&](std::string name) {
    return [&, name](SearchCache&) {
      {
        std::lock_guard lock(mu);
        started.push_back(name);
      }
      (name == "bg1" ? first_released : released).wait();
    };
  };
  const auto started_count = [&] {
    std::lock_guard lock(mu);
    return started.size();
  };
  auto wait_for = [&](auto ready) {
    for (int i = 0; i < 500 && !ready(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return ready();
  };
  // Background work: one worker (the other is reserved) and one queue place (of two).
  ASSERT_TRUE(pool.TrySubmit(task("bg1"), bot::Priority::kBackground));
  ASSERT_TRUE(wait_for([&] { return pool.background_busy() == 1 && started_count() == 1; }));
  ASSERT_TRUE(pool.TrySubmit(task("bg2"), bot::Priority::kBackground));
  EXPECT_FALSE(pool.TrySubmit(task("bg3"), bot::Priority::kBackground));
  EXPECT_EQ(pool.busy(), 1);
  EXPECT_EQ(pool.queued(), 1);
  // Interactive work still finds the reserved worker, then the reserved queue place.
  ASSERT_TRUE(pool.TrySubmit(task("i1"), bot::Priority::kInteractive));
  ASSERT_TRUE(wait_for([&] { return pool.busy() == 2 && started_count() == 2; }));
  ASSERT_TRUE(pool.TrySubmit(task("i2"), bot::Priority::kInteractive));
  EXPECT_FALSE(pool.TrySubmit(task("i3"), bot::Priority::kInteractive));
  // bg1's worker, freed, takes i2, which came after bg2.
  release_first.set_value();
  ASSERT_TRUE(wait_for([&] { return started_count() == 3; }));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(started.back(), "i2");
  }
  release.set_value();
  pool.WaitIdle();
  EXPECT_EQ(started, (std::vector<std::string>{"bg1", "i1", "i2", "bg2"}));
}

TEST(WorkerPool, StopsWithBackgroundWorkStillWaitingForItsShare) {
  std::atomic<int> ran{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::thread releaser;
  {
    bot::WorkerPool pool({.workers = 3,
                          .queue_capacity = 4,
                          .reserved_workers = 2,
                          .reserved_queue = 0,
                          .tt_megabytes = 1});
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(pool.TrySubmit(
          [&](SearchCache&) {
            released.wait();
            ++ran;
          },
          bot::Priority::kBackground));
    }
    // The destructor starts while three tasks wait for the one worker background work may use;
    // it runs them, one at a time, then returns.
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      release.set_value();
    });
  }
  releaser.join();
  EXPECT_EQ(ran.load(), 4);
}

TEST(BotService, PersonsMoveIsAnsweredInItsBudgetWhileBotVsBotWorkFloodsTheInstance) {
  auto bot = StartBot({"--workers=2", "--queue=2", "--reserved_workers=1", "--reserved_queue=1"});
  ASSERT_NE(bot, nullptr);
  // The review's attack: bot-vs-bot matches at `perfect` (5 s a move), more than the instance
  // holds, each refused caller trying again at once.
  std::atomic<bool> stop{false};
  std::atomic<int> background_answered{0}, background_refused{0};
  std::vector<std::thread> flood;
  // A failed assertion returns with the flood running: stopped and joined here, so that the
  // failure is reported (joinable threads destroyed aborted the whole test binary).
  struct Joiner {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop = true;
      for (std::thread& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{stop, flood};
  for (int t = 0; t < 6; ++t) {
    flood.emplace_back([&, t] {
      while (!stop) {
        v1::ChooseMoveResponse r;
        grpc::Status s = Call(
            *bot, Background(Request("connect4", {std::to_string(1 + t % 7)}, "perfect", 2500)),
            8000, &r);
        if (s.ok()) {
          ++background_answered;
        } else {
          ++background_refused;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    });
  }
  // On a loaded machine six threads may take a while to fill the background share.
  ASSERT_TRUE(WaitForMetrics(
      *bot,
      [](const auto& m) {
        return m.background_in_flight() == 1 && m.background_queue_length() == 1;
      },
      1000));
  // A person's bot seat: budget 300 ms, deadline budget + 1 s, five moves in a row.
  constexpr int64_t kBudgetMs = 300;
  std::vector<double> reply_ms, queue_ms;
  for (int i = 0; i < 5; ++i) {
    v1::ChooseMoveResponse response;
    const auto sent = Clock::now();
    grpc::Status status =
        Call(*bot, Request("connect4", {"4", std::to_string(1 + i)}, "hard", kBudgetMs),
             kBudgetMs + 1000, &response);
    reply_ms.push_back(MsSince(sent));
    queue_ms.push_back(response.queue_ms());
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_LE(reply_ms.back(), kBudgetMs + 1000);
    EXPECT_LT(response.queue_ms(), 100.0);
  }
  const v1::GetMetricsResponse m = Metrics(*bot);
  stop = true;
  for (std::thread& t : flood) t.join();
  EXPECT_GT(m.rejected_background(), 0);
  std::printf("interactive replies (budget %lld ms) under a background flood:",
              static_cast<long long>(kBudgetMs));
  for (double ms : reply_ms) std::printf(" %.0f", ms);
  std::printf(" ms, queued");
  for (double ms : queue_ms) std::printf(" %.1f", ms);
  std::printf(" ms; background answered %d, refused %d while it ran\n", background_answered.load(),
              background_refused.load());
}

TEST(BotService, RequiresItsTokenWhenGivenOneAndKeepsHealthOpen) {
  const std::string token_file = TempPath("bot-token");
  const std::string token = "0123456789abcdef0123456789abcdef";
  WriteFile(token_file, token + "\n");
  auto bot = StartBot({absl::StrCat("--auth_token_file=", token_file)});
  ASSERT_NE(bot, nullptr);  // Start waits for SERVING: the health service asks for no token
  v1::ChooseMoveResponse response;
  grpc::Status bare = Call(*bot, Request("connect4", {}, "easy", 20), 3000, &response);
  EXPECT_EQ(bare.error_code(), grpc::StatusCode::UNAUTHENTICATED) << bare.error_message();
  EXPECT_EQ(bare.error_message().find(token), std::string::npos);
  {
    auto stub = v1::BotService::NewStub(bot->channel());
    grpc::ClientContext context;
    v1::GetMetricsResponse metrics;
    EXPECT_EQ(stub->GetMetrics(&context, v1::GetMetricsRequest(), &metrics).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  BotClient right({.target = bot->address(), .token = token});
  absl::StatusOr<v1::ChooseMoveResponse> move =
      right.ChooseMove(Request("connect4", {}, "easy", 20), absl::Seconds(3));
  EXPECT_TRUE(move.ok()) << move.status();
  EXPECT_TRUE(right.ListGames(absl::Seconds(3)).ok());
  BotClient wrong({.target = bot->address(), .token = "0123456789abcdef0123456789abcdeX"});
  EXPECT_TRUE(absl::IsUnauthenticated(
      wrong.ChooseMove(Request("connect4", {}, "easy", 20), absl::Seconds(3)).status()));
  // Every request received lands in one outcome: the refused ones were counted in none.
  absl::StatusOr<v1::GetMetricsResponse> m = right.GetMetrics(absl::Seconds(3));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->requests(), 3);
  EXPECT_EQ(m->succeeded(), 1);
  EXPECT_EQ(m->unauthenticated(), 2);
  EXPECT_EQ(m->requests(), m->succeeded() + m->invalid() + m->rejected() + m->cancelled() +
                               m->unauthenticated() + m->unavailable() + m->in_flight() +
                               m->queue_length());
  EXPECT_NE(m->prometheus_text().find("ply_bot_unauthenticated_total 2\n"), std::string::npos)
      << m->prometheus_text();
  std::remove(token_file.c_str());
}

// Numeric flags out of range stop ply-bot at once with exit 2 and a sentence. Before,
// --tt_mb=-1 spun at 100% CPU forever (deaf to SIGTERM: here the 10 s timeout's 124),
// --tt_mb=100000 died of bad_alloc (134), and --queue=0 or --max_budget_ms=-1 started.
TEST(BotService, RefusesNumericFlagsOutOfRange) {
  const std::pair<std::string, std::string> cases[] = {
      {"--tt_mb=-1", "--tt_mb=-1 is out of range: it must be 1..65536"},
      {"--tt_mb=0", "--tt_mb=0 is out of range"},
      {"--tt_mb=100000", "--tt_mb=100000 is out of range"},
      {"--queue=0", "--queue=0 leaves no place for a request to wait"},
      {"--queue=-2", "--queue=-2 is out of range"},
      {"--max_budget_ms=-1", "--max_budget_ms=-1 is out of range"},
      {"--max_budget_ms=0", "--max_budget_ms=0 is out of range"},
      {"--workers=-3", "--workers=-3 is out of range"},
      {"--reserved_workers=-1", "--reserved_workers=-1 is out of range"},
      {"--reserved_queue=-1", "--reserved_queue=-1 is out of range"},
      {"--deadline_margin_ms=-5", "--deadline_margin_ms=-5 is out of range"},
      {"--max_connection_age_ms=0", "--max_connection_age_ms=0 is out of range"},
      {"--max_connection_idle_ms=-1", "--max_connection_idle_ms=-1 is out of range"},
      {"--max_concurrent_streams=-1", "--max_concurrent_streams=-1 is out of range"},
      {"--metrics_port=70000", "--metrics_port=70000 is out of range"},
      {"--port=-1", "--port=-1 is out of range"},
      // Tables no machine holds: 4096 workers of 64 GiB each.
      {"--workers=4096 --tt_mb=65536", "more than this machine's"},
  };
  for (const auto& [flags, sentence] : cases) {
    SCOPED_TRACE(flags);
    auto [code, out] = RunBotToEnd(absl::StrCat("--port=0 ", flags));
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find(sentence), std::string::npos) << out;
    EXPECT_EQ(out.find("listening"), std::string::npos) << out;
  }
}

TEST(BotService, ListensOnLoopbackByDefaultAndBeyondOnlyWithAuthentication) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> plain =
      ServerProcess::Start(PLY_BOT_BINARY, {"--port=0", "--workers=1", "--tt_mb=1"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE((*plain)->ready_line().find("listening on 127.0.0.1:"), std::string::npos)
      << (*plain)->ready_line();

  auto [code, out] = RunBotToEnd("--host=0.0.0.0 --port=0 --workers=1 --tt_mb=1");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("refusing to listen on 0.0.0.0 without authentication"), std::string::npos)
      << out;
  // A server certificate alone does not say who the callers are.
  std::tie(code, out) =
      RunBotToEnd("--host=:: --port=0 --workers=1 --tls_cert=x.pem --tls_key=x.key");
  EXPECT_EQ(code, 2) << out;
  const std::string short_token = TempPath("short-token");
  WriteFile(short_token, "secret\n");
  std::tie(code, out) =
      RunBotToEnd(absl::StrCat("--host=0.0.0.0 --port=0 --auth_token_file=", short_token));
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("at least 16"), std::string::npos) << out;
  EXPECT_EQ(out.find("secret"), std::string::npos) << out;

  const std::string token_file = TempPath("wide-token");
  WriteFile(token_file, "0123456789abcdef0123456789abcdef");
  absl::StatusOr<std::unique_ptr<ServerProcess>> wide = ServerProcess::Start(
      PLY_BOT_BINARY, {"--host=0.0.0.0", "--port=0", "--workers=1", "--tt_mb=1",
                       absl::StrCat("--auth_token_file=", token_file)});
  EXPECT_TRUE(wide.ok()) << wide.status();
  std::remove(short_token.c_str());
  std::remove(token_file.c_str());
}

TEST(BotService, RequestTextIsLoggedQuotedAndEscapedSoItCannotForgeLines) {
  const std::string log = TempPath("bot-request-log");
  auto bot = StartBotLoggingTo(log, {"--log_level=info"});
  ASSERT_NE(bot, nullptr);
  v1::ChooseMoveResponse response;
  const std::string forged = "ply-bot[forged] game=\"connect4\" outcome=OK";
  Call(*bot, Request(absl::StrCat("connect4\n", forged), {}, "easy"), 3000, &response);
  Call(*bot, Request("connect4", {}, absl::StrCat("easy\r\n", forged)), 3000, &response);
  Call(*bot, Request("connect4", {}, absl::StrCat("\u009b31m\u2028", forged)), 3000, &response);
  ASSERT_TRUE(Call(*bot, Request("connect4", {}, "easy", 20), 3000, &response).ok());
  bot.reset();
  const std::string text = ReadFile(log);
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++lines;
    EXPECT_TRUE(absl::StartsWith(line, "ply-bot[")) << line;
    EXPECT_FALSE(absl::StartsWith(line, "ply-bot[forged]")) << line;
  }
  EXPECT_EQ(lines, 4) << text;
  EXPECT_NE(text.find(R"(game="connect4\nply-bot[forged] game=\"connect4\" outcome=OK")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(level="easy\r\nply-bot[forged])"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(level="\xc2\x9b\x33\x31m\xe2\x80\xa8ply-bot[forged])"), std::string::npos)
      << text;
  std::remove(log.c_str());
}

TEST(BotService, BoundsEveryStringFieldAndNeverEchoesOneWhole) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  const std::string big(5000, 'x');
  std::vector<std::pair<std::string, v1::ChooseMoveRequest>> cases;
  cases.push_back({"game name", Request(big, {}, "easy")});
  cases.push_back({"difficulty", Request("connect4", {}, big)});
  cases.push_back({"move", Request("connect4", {big}, "easy")});
  {
    auto r = Request("connect4", {}, "easy");
    (*r.mutable_position()->mutable_spec()->mutable_options())[big] = "1";
    cases.push_back({"option name", r});
    r = Request("connect4", {}, "easy");
    (*r.mutable_position()->mutable_spec()->mutable_options())["width"] = big;
    cases.push_back({"option value", r});
  }
  for (const auto& [what, request] : cases) {
    SCOPED_TRACE(what);
    v1::ChooseMoveResponse response;
    grpc::Status status = Call(*bot, request, 3000, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_LT(status.error_message().size(), 200u) << status.error_message();
    EXPECT_NE(status.error_message().find("5000 bytes"), std::string::npos)
        << status.error_message();
  }
  // What is echoed (a short unknown difficulty) comes back with its control characters escaped.
  v1::ChooseMoveResponse response;
  grpc::Status status = Call(*bot, Request("connect4", {}, "ha\nrd"), 3000, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().find('\n'), std::string::npos) << status.error_message();
  EXPECT_NE(status.error_message().find("ha\\x0ard"), std::string::npos) << status.error_message();
  // An unknown priority is refused rather than guessed at.
  auto unknown = Request("connect4", {}, "easy", 20);
  unknown.set_priority(static_cast<v1::BotPriority>(7));
  status = Call(*bot, unknown, 3000, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("priority 7"), std::string::npos);
}

TEST(BotService, AFloodOfInvalidUtf8WritesABoundedNumberOfLogLines) {
  const std::string log = TempPath("bot-protobuf-log");
  auto bot = StartBotLoggingTo(log, {"--log_level=warning"});
  ASSERT_NE(bot, nullptr);
  // proto3 strings must be UTF-8: the server's parser refuses these (and, without a handler,
  // protobuf writes one line per request to stderr).
  constexpr int kRequests = 300;
  int refused = 0;
  // This process serializes the same bad strings and protobuf complains here too: silenced, so
  // that the test's own output stays readable.
  google::protobuf::LogHandler* const before = google::protobuf::SetLogHandler(nullptr);
  for (int i = 0; i < kRequests; ++i) {
    v1::ChooseMoveResponse response;
    if (!Call(*bot, Request("connect4\xff\xfe", {}, "easy"), 3000, &response).ok()) ++refused;
  }
  google::protobuf::SetLogHandler(before);
  EXPECT_EQ(refused, kRequests);
  bot.reset();
  const std::string text = ReadFile(log);
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  // Ten at once, then one per ten seconds: the run is far shorter than that.
  EXPECT_GE(lines.size(), 1u);
  EXPECT_LE(lines.size(), 11u) << text;
  for (const std::string& line : lines) {
    EXPECT_TRUE(absl::StartsWith(line, "ply-bot: protobuf ERROR: ")) << line;
  }
  std::printf("%d invalid-UTF-8 requests wrote %zu log lines\n", kRequests, lines.size());
  std::remove(log.c_str());
}

}  // namespace
}  // namespace ply
