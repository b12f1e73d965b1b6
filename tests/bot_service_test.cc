// ply-bot as its users see it: real ply-bot processes on free loopback ports, driven over gRPC.
// Moves for every game, deadlines shorter than the budget, cancellation, a full queue, bad
// input, draining on SIGTERM, and two instances behind one BotClient (one of them killed). The
// /metrics HTTP port is bot_metrics_test's.
#include "bot-service/bot_service.h"

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
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "tests/bot_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using testing::Call;
using testing::Request;
using testing::ServerProcess;
using testing::StartBot;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

v1::GetMetricsResponse Metrics(ServerProcess& bot) {
  auto stub = v1::BotService::NewStub(bot.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::GetMetricsResponse response;
  EXPECT_TRUE(stub->GetMetrics(&context, v1::GetMetricsRequest(), &response).ok());
  return response;
}

// A ChooseMove call running in the background, to be cancelled or awaited.
class BackgroundCall {
 public:
  BackgroundCall(ServerProcess& bot, const v1::ChooseMoveRequest& request, int64_t deadline_ms)
      : stub_(v1::BotService::NewStub(bot.channel())), request_(request) {
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(deadline_ms));
    stub_->async()->ChooseMove(&context_, &request_, &response_, [this](grpc::Status s) {
      std::lock_guard lock(mu_);
      status_ = s;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~BackgroundCall() {
    context_.TryCancel();
    Wait();
  }
  void Cancel() { context_.TryCancel(); }
  grpc::Status Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }
  const v1::ChooseMoveResponse& response() const { return response_; }

 private:
  std::unique_ptr<v1::BotService::Stub> stub_;
  grpc::ClientContext context_;
  v1::ChooseMoveRequest request_;
  v1::ChooseMoveResponse response_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
};

// Polls the instance's metrics until `ready` holds (searching/queued counts settle a little
// after the calls are sent).
template <class Pred>
bool WaitForMetrics(ServerProcess& bot, Pred ready) {
  for (int i = 0; i < 200; ++i) {
    if (ready(Metrics(bot))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// After SIGTERM: true once the instance reports NOT_SERVING (it drains).
bool WaitForNotServing(ServerProcess& bot) {
  for (int i = 0; i < 200; ++i) {
    auto health = bot.Health(absl::Seconds(1));
    if (health.ok() && *health == grpc::health::v1::HealthCheckResponse::NOT_SERVING) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(SearchBudget, IsTheSmallestOfLevelRequestAndDeadlineLessMargin) {
  EXPECT_EQ(bot::SearchBudgetMs(1000, 0, std::nullopt, 20, 30000), 1000);
  EXPECT_EQ(bot::SearchBudgetMs(1000, 300, std::nullopt, 20, 30000), 300);
  EXPECT_EQ(bot::SearchBudgetMs(1000, 5000, std::nullopt, 20, 30000), 1000);
  EXPECT_EQ(bot::SearchBudgetMs(1000, 0, 500, 20, 30000), 480);
  EXPECT_EQ(bot::SearchBudgetMs(0, 0, std::nullopt, 20, 30000), 30000);
  // Short deadlines keep most of their time: the margin is at most a quarter of it.
  EXPECT_EQ(bot::SearchBudgetMs(1000, 0, 40, 20, 30000), 30);
  EXPECT_EQ(bot::SearchBudgetMs(1000, 0, 0, 20, 30000), 0);
  EXPECT_EQ(bot::SearchBudgetMs(1000, 0, -50, 20, 30000), 0);
}

TEST(BotService, ListsEveryRegisteredGameWithItsLevels) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  auto stub = v1::BotService::NewStub(bot->channel());
  grpc::ClientContext context;
  v1::ListGamesResponse response;
  ASSERT_TRUE(stub->ListGames(&context, v1::ListGamesRequest(), &response).ok());
  ASSERT_EQ(response.games_size(), static_cast<int>(ListGames().size()));
  for (int i = 0; i < response.games_size(); ++i) {
    const GameInfo& info = ListGames()[i];
    const v1::GameInfo& wire = response.games(i);
    EXPECT_EQ(wire.name(), info.name);
    EXPECT_EQ(wire.options_size(), static_cast<int>(info.options.size()));
    // What the game's own folder declares: how to type a move, its record formats.
    EXPECT_FALSE(wire.notation_hint().empty()) << info.name;
    EXPECT_EQ(wire.notation_hint(), info.notation_hint);
    EXPECT_EQ(std::vector<std::string>(wire.record_formats().begin(), wire.record_formats().end()),
              info.record_formats)
        << info.name;
    if (info.name == "draughts") {
      ASSERT_EQ(wire.record_formats_size(), 1);
      EXPECT_EQ(wire.record_formats(0), "pdn");
    }
    ASSERT_EQ(wire.levels_size(), static_cast<int>(info.levels.size()));
    for (int l = 0; l < wire.levels_size(); ++l) {
      EXPECT_EQ(wire.levels(l).name(), info.levels[l].name);
      EXPECT_EQ(wire.levels(l).time_ms(), info.levels[l].time_ms);
      // ply-bot keeps no players: the calibration ladder's rating.
      const LadderRating* r = info.ladder.Find(info.levels[l].name);
      ASSERT_NE(r, nullptr) << info.name << " " << info.levels[l].name;
      EXPECT_EQ(wire.levels(l).rating_source(), v1::RATING_SOURCE_LADDER);
      EXPECT_EQ(wire.levels(l).rating(), static_cast<int>(std::lround(r->rating)));
      EXPECT_EQ(wire.levels(l).ladder_command(), info.ladder.command);
    }
  }
}

TEST(BotService, AnswersALegalMoveForEveryGameAndLevel) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  Rng rng(7);
  for (const GameInfo& info : ListGames()) {
    // The initial position and one a few random moves in.
    auto game = CreateGame(info.name);
    ASSERT_TRUE(game.ok());
    for (int position = 0; position < 2; ++position) {
      for (const Difficulty& level : info.levels) {
        SCOPED_TRACE(info.name + " " + level.name + " after " +
                     std::to_string((*game)->History().size()) + " moves");
        v1::ChooseMoveResponse response;
        grpc::Status status =
            Call(*bot, Request(info.name, (*game)->History(), level.name, /*budget_ms=*/30),
                 /*deadline_ms=*/3000, &response);
        ASSERT_TRUE(status.ok()) << status.error_message();
        std::vector<std::string> legal = (*game)->LegalMoves();
        EXPECT_NE(std::find(legal.begin(), legal.end(), response.move()), legal.end())
            << response.move();
        EXPECT_FALSE(response.instance().empty());
        EXPECT_LE(response.budget_ms(), 30);
        if (!response.random_move()) {
          EXPECT_EQ(response.pv(0), response.move());
        }
      }
      for (int i = 0; i < 3 && !(*game)->Status().over; ++i) {
        std::vector<std::string> legal = (*game)->LegalMoves();
        ASSERT_TRUE((*game)->Play(legal[rng.Below(legal.size())]).ok());
        if ((*game)->Status().over) {
          ASSERT_TRUE((*game)->Undo().ok());
        }
      }
    }
  }
}

TEST(BotService, FindsTheWinningMoveInConnect4AndTicTacToe) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  v1::ChooseMoveResponse c4;
  ASSERT_TRUE(
      Call(*bot, Request("connect4", {"1", "2", "1", "2", "1", "2"}, "hard", 200), 3000, &c4).ok());
  EXPECT_EQ(c4.move(), "1");
  EXPECT_EQ(c4.score_text(), "win in 1");
  EXPECT_TRUE(c4.exact());

  v1::ChooseMoveResponse ttt;
  ASSERT_TRUE(
      Call(*bot, Request("tictactoe", {"a1", "b1", "a2", "b2"}, "medium", 200), 3000, &ttt).ok());
  EXPECT_EQ(ttt.move(), "a3");
  EXPECT_GT(ttt.depth(), 0);
}

TEST(BotService, AnalysisRequestJudgesWithTheSolverAndTakesNoDifficulty) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  // Red, winning, to move with Yellow's three in column 1 open: the solver proves the win
  // (the search alone, at depth 2, would not).
  v1::ChooseMoveRequest r = Request("connect4", {"4", "1", "4", "1", "3", "1"}, "", 2000);
  r.set_analysis(true);
  r.set_max_depth(2);
  v1::ChooseMoveResponse judged;
  ASSERT_TRUE(Call(*bot, r, 5000, &judged).ok());
  EXPECT_TRUE(judged.exact());
  EXPECT_EQ(judged.move(), "1");
  EXPECT_NE(judged.score_text().find("win in"), std::string::npos) << judged.score_text();
  // A level's name and the analysis do not go together; nor does a depth past the search's.
  r.set_difficulty("easy");
  EXPECT_EQ(Call(*bot, r, 5000, &judged).error_code(), grpc::INVALID_ARGUMENT);
  r.set_difficulty("");
  r.set_max_depth(500);
  EXPECT_EQ(Call(*bot, r, 5000, &judged).error_code(), grpc::INVALID_ARGUMENT);
}

// Reversi with 17 empty cells, White to move and winning (by 6 with best play): the first 43
// moves of the game analysis_test analyses (a depth-1 against a depth-3 search).
constexpr char kReversiWhiteWinsWith17Empty[] =
    "d3 c5 f6 e3 f3 f4 f5 g4 g3 g6 h4 e6 c4 h3 h2 c2 c3 d2 d6 g5 d1 b2 d7 c6 c1 b1 a1 e2 e1 h5 "
    "h6 f2 b3 g2 e7 f1 h1 g1 b4 c7 b5 d8 h7";

TEST(BotService, AWinLossDrawSolveRepliesWithAProvenOutcomeNotAMargin) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  const std::vector<std::string> moves = absl::StrSplit(kReversiWhiteWinsWith17Empty, ' ');
  // 2,000,000 nodes give the solver three fifths: enough for the win/loss/draw solve of 17
  // empty cells (Reversi::PlanSolve: 755,300), not for the exact one (3,230,000).
  v1::ChooseMoveRequest r = Request("reversi", moves, "perfect");
  r.set_max_nodes(2'000'000);
  v1::ChooseMoveResponse proven;
  ASSERT_TRUE(Call(*bot, r, 30000, &proven).ok());
  EXPECT_TRUE(proven.exact());
  EXPECT_TRUE(proven.outcome_only());
  EXPECT_EQ(proven.score(), 1);  // the sign of the outcome
  EXPECT_EQ(proven.score_text(), "win (proven)");
  EXPECT_EQ(proven.move(), "f8");
  // With the level's own budget the margin is solved too: an exact score, not only the outcome.
  r.clear_max_nodes();
  v1::ChooseMoveResponse exact;
  ASSERT_TRUE(Call(*bot, r, 30000, &exact).ok());
  EXPECT_TRUE(exact.exact());
  EXPECT_FALSE(exact.outcome_only());
  EXPECT_EQ(exact.score(), 6);
  EXPECT_EQ(exact.score_text(), "+6");
}

TEST(BotService, DeadlineShorterThanTheLevelBudgetStillAnswersInTime) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  // "hard" thinks for a second; the caller gives it 300 ms.
  for (int64_t deadline_ms : {300, 100}) {
    SCOPED_TRACE(deadline_ms);
    v1::ChooseMoveResponse response;
    auto sent = Clock::now();
    grpc::Status status =
        Call(*bot, Request("connect4", {"4", "4"}, "hard"), deadline_ms, &response);
    double reply_ms = MsSince(sent);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_LT(reply_ms, static_cast<double>(deadline_ms));
    EXPECT_LT(response.budget_ms(), deadline_ms);
    EXPECT_GE(response.depth(), 1);
    EXPECT_FALSE(response.move().empty());
  }
}

TEST(BotService, CancelledSearchFreesItsWorkerAtOnce) {
  auto bot = StartBot({"--workers=1", "--queue=1"});
  ASSERT_NE(bot, nullptr);
  {
    BackgroundCall long_search(*bot, Request("connect4", {}, "hard"), /*deadline_ms=*/10000);
    ASSERT_TRUE(WaitForMetrics(*bot, [](const auto& m) { return m.in_flight() == 1; }));
    long_search.Cancel();
    EXPECT_EQ(long_search.Wait().error_code(), grpc::StatusCode::CANCELLED);
  }
  // Without the cancellation the one worker would stay busy for at least 400 ms more ("hard"
  // searches for a second and stops deepening after 40% of it). The bounds are loose because
  // this machine is shared: scheduling, not the search, dominates the measured time.
  v1::ChooseMoveResponse response;
  auto sent = Clock::now();
  ASSERT_TRUE(Call(*bot, Request("connect4", {}, "easy", 20), 3000, &response).ok());
  EXPECT_LT(response.queue_ms(), 250.0);
  EXPECT_LT(MsSince(sent), 300.0);

  v1::GetMetricsResponse metrics = Metrics(*bot);
  EXPECT_EQ(metrics.cancelled(), 1);
  EXPECT_EQ(metrics.succeeded(), 1);
  EXPECT_LT(metrics.cancel_to_free_ms_max(), 100.0);
  std::printf("worker free %.3f ms after the cancellation reached the server\n",
              metrics.cancel_to_free_ms_max());
  EXPECT_NE(metrics.prometheus_text().find("ply_bot_cancelled_total 1"), std::string::npos)
      << metrics.prometheus_text();
}

TEST(BotService, CancelledSearchFreesItsWorkerInEveryGame) {
  // Each game's search reads the cancellation flag (solvers and threat searches included).
  auto bot = StartBot({"--workers=1", "--queue=1", "--max_budget_ms=20000"});
  ASSERT_NE(bot, nullptr);
  for (const char* game : {"connect4", "reversi", "gomoku", "draughts", "morris", "tictactwo"}) {
    SCOPED_TRACE(game);
    BackgroundCall search(*bot, Request(game, {}, "hard", 10000), /*deadline_ms=*/20000);
    ASSERT_TRUE(WaitForMetrics(*bot, [](const auto& m) { return m.in_flight() == 1; }));
    search.Cancel();
    EXPECT_EQ(search.Wait().error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_TRUE(WaitForMetrics(*bot, [](const auto& m) { return m.in_flight() == 0; }));
  }
  EXPECT_LT(Metrics(*bot).cancel_to_free_ms_max(), 100.0);
}

// User and system CPU time of a process so far, in seconds (/proc/PID/stat).
double CpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command's closing parenthesis, from the state (field 3): utime is 14th.
  std::vector<std::string> fields = absl::StrSplit(text.substr(text.rfind(')') + 2), ' ');
  if (fields.size() < 13) return 0;
  return static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12])) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

TEST(BotService, ACancellationStormLeavesNoWorkerBusy) {
  // Four callers start expensive searches (10 s budgets) and cancel each 0-20 ms later. Each is
  // refused, cancelled while queued, or stopped within a node, so nothing searches on once they
  // stop, and a person's call meanwhile goes straight to a worker. Measured: 600 such calls in
  // 1.5 s, the bot idle 1 ms after the last, 0.02 s of CPU in the 2 s after, a person's `easy`
  // call every 200 ms at most 6.4 ms.
  auto bot = StartBot({"--workers=2", "--queue=4", "--max_budget_ms=20000"});
  ASSERT_NE(bot, nullptr);
  const std::vector<std::string> games = {"connect4", "reversi", "gomoku", "draughts", "morris"};
  std::atomic<int> cancelled{0};
  std::vector<std::thread> callers;
  for (int k = 0; k < 4; ++k) {
    callers.emplace_back([&, k] {
      for (int i = 0; i < 60; ++i) {
        BackgroundCall call(*bot, Request(games[(k + i) % games.size()], {}, "hard", 10000),
                            /*deadline_ms=*/20000);
        std::this_thread::sleep_for(std::chrono::milliseconds(i % 20));
        call.Cancel();
        if (call.Wait().error_code() == grpc::StatusCode::CANCELLED) ++cancelled;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  // Refusals (RESOURCE_EXHAUSTED) mean the workers and the queue were still busy with searches
  // already cancelled: with the stop flag ignored, 24 of 240 calls were cancelled, not 200+.
  EXPECT_GT(cancelled.load(), 100);
  ASSERT_TRUE(WaitForMetrics(
      *bot, [](const auto& m) { return m.in_flight() == 0 && m.queue_length() == 0; }));
  // Two workers still searching would use two CPU seconds a second.
  const double cpu = CpuSeconds(bot->pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_LT(CpuSeconds(bot->pid()) - cpu, 0.5);
  v1::ChooseMoveResponse response;
  ASSERT_TRUE(Call(*bot, Request("connect4", {}, "easy", 20), 3000, &response).ok());
  EXPECT_LT(response.queue_ms(), 250.0);
  EXPECT_LT(Metrics(*bot).cancel_to_free_ms_max(), 250.0);
}

TEST(BotService, FullQueueIsRefusedAtOnceWithResourceExhausted) {
  auto bot = StartBot({"--workers=1", "--queue=1"});
  ASSERT_NE(bot, nullptr);
  BackgroundCall running(*bot, Request("connect4", {}, "hard"), 10000);
  ASSERT_TRUE(WaitForMetrics(*bot, [](const auto& m) { return m.in_flight() == 1; }));
  BackgroundCall waiting(*bot, Request("connect4", {"4"}, "hard"), 10000);
  ASSERT_TRUE(WaitForMetrics(*bot, [](const auto& m) { return m.queue_length() == 1; }));

  v1::ChooseMoveResponse response;
  auto sent = Clock::now();
  grpc::Status status = Call(*bot, Request("connect4", {"3"}, "easy"), 5000, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("full"), std::string::npos) << status.error_message();
  EXPECT_LT(MsSince(sent), 200.0);
  EXPECT_EQ(Metrics(*bot).rejected(), 1);
}

TEST(BotService, RejectsBadInputWithItsCodeAndASentence) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  struct Case {
    std::string what;
    v1::ChooseMoveRequest request;
    grpc::StatusCode code;
    std::string says;
  };
  std::vector<Case> cases;
  cases.push_back(
      {"unknown game", Request("chess", {}, "easy"), grpc::INVALID_ARGUMENT, "unknown game"});
  {
    auto r = Request("connect4", {}, "easy");
    (*r.mutable_position()->mutable_spec()->mutable_options())["colour"] = "red";
    cases.push_back({"unknown option", r, grpc::INVALID_ARGUMENT, "colour"});
    (*r.mutable_position()->mutable_spec()->mutable_options()).clear();
    (*r.mutable_position()->mutable_spec()->mutable_options())["width"] = "99";
    cases.push_back({"option out of range", r, grpc::INVALID_ARGUMENT, "width"});
  }
  cases.push_back({"unparsable move", Request("connect4", {"4", "x"}, "easy"),
                   grpc::INVALID_ARGUMENT, "move 2"});
  cases.push_back({"illegal move", Request("connect4", {"1", "1", "1", "1", "1", "1", "1"}, "easy"),
                   grpc::FAILED_PRECONDITION, "move 7"});
  cases.push_back({"finished position",
                   Request("tictactoe", {"a1", "b1", "a2", "b2", "a3"}, "easy"),
                   grpc::FAILED_PRECONDITION, "finished"});
  cases.push_back({"unknown difficulty", Request("connect4", {}, "grandmaster"),
                   grpc::INVALID_ARGUMENT, "unknown difficulty 'grandmaster'"});
  cases.push_back({"negative budget", Request("connect4", {}, "easy", -5), grpc::INVALID_ARGUMENT,
                   "budget_ms"});
  cases.push_back({"absurd budget", Request("connect4", {}, "easy", int64_t{1} << 40),
                   grpc::INVALID_ARGUMENT, "budget_ms"});
  {
    auto r = Request("connect4", {}, "easy");
    r.set_max_nodes(-1);
    cases.push_back({"negative node budget", r, grpc::INVALID_ARGUMENT, "max_nodes"});
  }
  cases.push_back({"huge move text", Request("connect4", {std::string(5000, '4')}, "easy"),
                   grpc::INVALID_ARGUMENT, "move 1 is 5000 bytes"});
  cases.push_back({"too many moves",
                   Request("connect4", std::vector<std::string>(20000, "4"), "easy"),
                   grpc::INVALID_ARGUMENT, "at most"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::ChooseMoveResponse response;
    grpc::Status status = Call(*bot, c.request, 3000, &response);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    EXPECT_NE(status.error_message().find(c.says), std::string::npos) << status.error_message();
  }
  // Past gRPC's own message limit the transport refuses it; the process lives on.
  v1::ChooseMoveResponse response;
  grpc::Status huge =
      Call(*bot, Request("connect4", {std::string(2 << 20, '4')}, "easy"), 3000, &response);
  EXPECT_EQ(huge.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << huge.error_message();
  EXPECT_TRUE(Call(*bot, Request("connect4", {}, "easy", 20), 3000, &response).ok());
  EXPECT_EQ(Metrics(*bot).invalid(), static_cast<int64_t>(cases.size()));
}

TEST(BotService, SigtermDrainsInFlightSearchesThenExits) {
  auto bot = StartBot({"--workers=1"});
  ASSERT_NE(bot, nullptr);
  BackgroundCall in_flight(*bot, Request("connect4", {}, "hard"), 10000);
  ASSERT_TRUE(WaitForMetrics(*bot, [](const auto& m) { return m.in_flight() == 1; }));
  bot->Signal(SIGTERM);
  // Draining: the health service says NOT_SERVING and new searches are refused, while the one
  // in flight goes on.
  EXPECT_TRUE(WaitForNotServing(*bot));
  v1::ChooseMoveResponse refused;
  EXPECT_EQ(Call(*bot, Request("connect4", {"4"}, "easy"), 3000, &refused).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  grpc::Status finished = in_flight.Wait();
  EXPECT_TRUE(finished.ok()) << finished.error_message();
  EXPECT_FALSE(in_flight.response().move().empty());
  EXPECT_EQ(bot->WaitExit(absl::Seconds(10)), std::optional<int>(0));
}

TEST(BotClient, SpreadsRequestsOverInstancesAndSkipsAKilledOne) {
  auto a = StartBot({"--workers=1"});
  auto b = StartBot({"--workers=1"});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  BotClient client(
      BotClientOptions{.target = absl::StrCat("ipv4:", a->address(), ",", b->address())});
  ASSERT_TRUE(client.WaitForReady(absl::Seconds(5)));
  // The channel is ready once one instance is; round robin takes the second as soon as its
  // connection is up, which on a loaded machine can take a few requests.
  std::set<std::string> instances;
  for (int i = 0; i < 200 && instances.size() < 2; ++i) {
    auto reply = client.ChooseMove(Request("connect4", {"4"}, "easy", 10), absl::Seconds(3));
    ASSERT_TRUE(reply.ok()) << reply.status();
    instances.insert(reply->instance());
  }
  EXPECT_EQ(instances.size(), 2u);

  a->Signal(SIGKILL);
  a->WaitExit(absl::Seconds(5));
  std::set<std::string> after;
  for (int i = 0; i < 20; ++i) {
    auto reply = client.ChooseMove(Request("connect4", {"4"}, "easy", 10), absl::Seconds(3));
    ASSERT_TRUE(reply.ok()) << "request " << i << " after the kill: " << reply.status();
    after.insert(reply->instance());
  }
  // Every later request was answered by the survivor.
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(absl::EndsWith(*after.begin(), absl::StrCat(":", b->port()))) << *after.begin();
}

TEST(BotClient, SendsNothingToADrainingInstance) {
  auto a = StartBot({"--workers=1"});
  auto b = StartBot({"--workers=1"});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  BotClient client(
      BotClientOptions{.target = absl::StrCat("ipv4:", a->address(), ",", b->address())});
  ASSERT_TRUE(client.WaitForReady(absl::Seconds(5)));
  // `a` drains for as long as its one search runs (most of a second).
  BackgroundCall in_flight(*a, Request("connect4", {}, "hard"), 10000);
  ASSERT_TRUE(WaitForMetrics(*a, [](const auto& m) { return m.in_flight() == 1; }));
  a->Signal(SIGTERM);
  ASSERT_TRUE(WaitForNotServing(*a));
  for (int i = 0; i < 10; ++i) {
    auto reply = client.ChooseMove(Request("connect4", {"4"}, "easy", 10), absl::Seconds(3));
    ASSERT_TRUE(reply.ok()) << "request " << i << ": " << reply.status();
    EXPECT_TRUE(absl::EndsWith(reply->instance(), absl::StrCat(":", b->port())));
  }
  EXPECT_TRUE(in_flight.Wait().ok());
  EXPECT_EQ(a->WaitExit(absl::Seconds(10)), std::optional<int>(0));
}

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
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto task = [&](std::string name) {
    return [&, name](SearchCache&) {
      {
        std::lock_guard lock(mu);
        started.push_back(name);
      }
      released.wait();
    };
  };
  auto wait_for = [&](auto ready) {
    for (int i = 0; i < 500 && !ready(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return ready();
  };
  // Background work: one worker (the other is reserved) and one queue place (of two).
  ASSERT_TRUE(pool.TrySubmit(task("bg1"), bot::Priority::kBackground));
  ASSERT_TRUE(wait_for([&] { return pool.background_busy() == 1; }));
  ASSERT_TRUE(pool.TrySubmit(task("bg2"), bot::Priority::kBackground));
  EXPECT_FALSE(pool.TrySubmit(task("bg3"), bot::Priority::kBackground));
  EXPECT_EQ(pool.busy(), 1);
  EXPECT_EQ(pool.queued(), 1);
  // Interactive work still finds the reserved worker, then the reserved queue place.
  ASSERT_TRUE(pool.TrySubmit(task("i1"), bot::Priority::kInteractive));
  ASSERT_TRUE(wait_for([&] { return pool.busy() == 2; }));
  ASSERT_TRUE(pool.TrySubmit(task("i2"), bot::Priority::kInteractive));
  EXPECT_FALSE(pool.TrySubmit(task("i3"), bot::Priority::kInteractive));
  release.set_value();
  pool.WaitIdle();
  // i2 came after bg2 and ran before it.
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
  ASSERT_TRUE(WaitForMetrics(*bot, [](const auto& m) {
    return m.background_in_flight() == 1 && m.background_queue_length() == 1;
  }));
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
  std::remove(token_file.c_str());
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
