// ply-bot as its users see it: real ply-bot processes on free loopback ports, driven over gRPC.
// Moves for every game, deadlines shorter than the budget, cancellation, a full queue, bad
// input, draining on SIGTERM, and two instances behind one BotClient (one of them killed). The
// /metrics HTTP port is bot_metrics_test's; issue #20's budgets, defaults and input bounds are
// bot_hardening_test's.
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
using testing::Metrics;
using testing::MsSince;
using testing::Request;
using testing::ServerProcess;
using testing::StartBot;
using testing::WaitForMetrics;
using Clock = std::chrono::steady_clock;

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
  EXPECT_EQ(exact.score_text(), "win by 6");
}

// An analysis request names the move played: the judge values it too, at one ply less than its
// own depth, when it is not the judge's best; a proven judgement or the best move needs nothing.
TEST(BotService, AnAnalysisValuesThePlayedMoveWithTheSameJudge) {
  auto bot = StartBot();
  ASSERT_NE(bot, nullptr);
  v1::ChooseMoveRequest r = Request("gomoku", {"h8", "h9", "i8", "i9"}, "", 2000);
  r.set_analysis(true);
  r.set_max_depth(4);
  r.set_judge_move("a1");
  v1::ChooseMoveResponse judged;
  ASSERT_TRUE(Call(*bot, r, 10000, &judged).ok());
  ASSERT_FALSE(judged.exact());
  ASSERT_TRUE(judged.has_judged_move());
  EXPECT_LE(judged.judged_move().depth(), judged.depth() - 1);
  EXPECT_GT(judged.judged_move().depth(), 0);
  EXPECT_LT(judged.judged_move().score(), judged.score());
  EXPECT_FALSE(judged.judged_move().score_text().empty());
  // The judge's own best move: nothing more to search.
  r.set_judge_move(judged.move());
  v1::ChooseMoveResponse best;
  ASSERT_TRUE(Call(*bot, r, 10000, &best).ok());
  EXPECT_FALSE(best.has_judged_move());
  // An illegal move, or one without an analysis, is refused with a sentence.
  r.set_judge_move("h8");
  grpc::Status refused = Call(*bot, r, 10000, &best);
  EXPECT_EQ(refused.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("judge_move"), std::string::npos);
  r.set_judge_move("a1");
  r.set_analysis(false);
  r.set_max_depth(0);
  EXPECT_EQ(Call(*bot, r, 10000, &best).error_code(), grpc::INVALID_ARGUMENT);
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

}  // namespace
}  // namespace ply
