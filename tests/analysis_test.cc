// Post-game analysis through the lobby (LobbyService.AnalyzeMatch), end to end: real PostgreSQL,
// two ply-bot processes and ply-lobby processes. A finished match is analysed once, over both
// bots, and stored (a second request, on another instance too, gets the stored analysis at
// once; two at the same time on two instances analyse once); a match with a person in it cannot
// be analysed while it runs, a bot game can (partially, not stored). A Reversi win that ply-bot
// proves only as an outcome is shown and stored as "win (proven)", within a node budget that
// makes it independent of the clock, and a smaller node budget keeps the solver from it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::Analysed;
using ::ply::testing::Analyze;
using ::ply::testing::Create;
using ::ply::testing::HumanMatch;
using ::ply::testing::HumanSeats;
using ::ply::testing::LobbyInstance;
using ::ply::testing::Move;
using ::ply::testing::TakingSeat;

// Red, winning, leaves Yellow's three in column 1 open (7); Yellow wins with 1.
constexpr char kBlunderGame[] = "4 1 4 1 3 1 7 1";

class AnalysisTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override { UseNewDatabase("analysis"); }

  static std::vector<std::string> AnalysisFlags() {
    return {"--analysis_ms=1500", "--analysis_parallel=4"};
  }

  // A finished human game: kBlunderGame played by two people.
  int64_t FinishedGame(v1::LobbyService::Stub* stub) {
    HumanSeats seats = HumanMatch(stub, stub, "connect4");
    std::vector<std::string> moves = absl::StrSplit(kBlunderGame, ' ');
    for (size_t i = 0; i < moves.size(); ++i) {
      grpc::Status s = Move(stub, seats.id, static_cast<int>(i), moves[i], seats.tokens[i % 2]);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    EXPECT_EQ(Get(seats.id).status(), v1::MATCH_STATUS_FINISHED);
    return seats.id;
  }

  // FinishedReversiGame judged with `nodes` a position (at depth 4; the clock, 30 s, the bots'
  // largest budget, never runs out first, so the verdicts do not depend on the machine's load):
  // the analysis as made (`first`) and as stored.
  void JudgeReversiGameOnNodes(int64_t nodes, Analysed* first, Analysed* stored);
};

TEST_F(AnalysisTest, FinishedMatchIsAnalysedOverEveryBotAndStoredOnce) {
  StartLobby(AnalysisFlags());
  const int64_t id = FinishedGame(stub_.get());
  // Nothing is stored before the first analysis.
  Analysed none = Analyze(stub_.get(), id, /*stored_only=*/true);
  EXPECT_EQ(none.status.error_code(), grpc::StatusCode::NOT_FOUND) << none.status.error_message();

  Analysed first = Analyze(stub_.get(), id);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_TRUE(first.has_analysis);
  // Progress: from 0 to every position (8 before each move; the last is over).
  ASSERT_GE(first.progress.size(), 2u);
  EXPECT_EQ(first.progress.front().positions_done(), 0);
  EXPECT_EQ(first.progress.back().positions_done(), 8);
  EXPECT_EQ(first.progress.back().positions(), 8);
  const v1::MatchAnalysis& a = first.analysis;
  EXPECT_EQ(a.match_id(), id);
  EXPECT_FALSE(a.partial());
  ASSERT_EQ(a.moves_size(), 8);
  const v1::MoveAnalysis& blunder = a.moves(6);
  EXPECT_EQ(blunder.move(), "7");
  EXPECT_EQ(blunder.mark(), v1::MOVE_MARK_BLUNDER);
  EXPECT_TRUE(blunder.exact_verdict());
  EXPECT_EQ(blunder.best_move(), "1");
  EXPECT_NE(blunder.score_before_text().find("win in"), std::string::npos);
  EXPECT_NE(blunder.score_after_text().find("loss in"), std::string::npos);
  ASSERT_EQ(a.players_size(), 2);
  EXPECT_EQ(a.players(0).blunders(), 1);
  // Four positions at a time, round robin: both bot instances judge some. The lobby's channel
  // sends only to the instances it has connected to, and on a loaded machine the second may
  // connect after this first analysis is done: then the next game's analysis uses it.
  std::set<std::string> instances(a.instances().begin(), a.instances().end());
  if (instances.size() < 2) {
    const Analysed next = Analyze(stub_.get(), FinishedGame(stub_.get()));
    ASSERT_TRUE(next.status.ok()) << next.status.error_message();
    instances.insert(next.analysis.instances().begin(), next.analysis.instances().end());
  }
  EXPECT_EQ(instances.size(), 2u);

  // Asked again, here or on another instance: the stored analysis at once, no progress.
  Analysed again = Analyze(stub_.get(), id);
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_TRUE(again.progress.empty());
  EXPECT_EQ(again.analysis.analysed_ms(), a.analysed_ms());
  EXPECT_EQ(again.analysis.moves(6).mark(), v1::MOVE_MARK_BLUNDER);
  LobbyInstance other = StartLobbyInstance({BotTargetFlag()});
  ASSERT_NE(other.process, nullptr);
  Analysed stored = Analyze(other.get(), id, /*stored_only=*/true);
  ASSERT_TRUE(stored.status.ok()) << stored.status.error_message();
  EXPECT_EQ(stored.analysis.analysed_ms(), a.analysed_ms());
  EXPECT_EQ(stored.analysis.moves_size(), 8);
}

// A finished Reversi game to the full board, no passes: a depth-1 search (Black) against a
// depth-3 one. Before move 44 (f8) 17 cells are empty and White, to move, wins.
int64_t FinishedReversiGame(v1::LobbyService::Stub* stub) {
  HumanSeats seats = HumanMatch(stub, stub, "reversi");
  const std::vector<std::string> moves = absl::StrSplit(
      "d3 c5 f6 e3 f3 f4 f5 g4 g3 g6 h4 e6 c4 h3 h2 c2 c3 d2 d6 g5 d1 b2 d7 c6 c1 b1 a1 e2 e1 h5 "
      "h6 f2 b3 g2 e7 f1 h1 g1 b4 c7 b5 d8 h7 f8 e8 c8 f7 b6 a6 a4 a3 a5 b7 a2 b8 a8 a7 g8 g7 h8",
      ' ');
  for (size_t i = 0; i < moves.size(); ++i) {
    grpc::Status s = Move(stub, seats.id, static_cast<int>(i), moves[i], seats.tokens[i % 2]);
    EXPECT_TRUE(s.ok()) << moves[i] << ": " << s.error_message();
    if (!s.ok()) return seats.id;
  }
  return seats.id;
}

void AnalysisTest::JudgeReversiGameOnNodes(int64_t nodes, Analysed* first, Analysed* stored) {
  StartLobby({"--analysis_ms=30000", absl::StrCat("--analysis_nodes=", nodes), "--analysis_depth=4",
              "--analysis_parallel=4"});
  const int64_t id = FinishedReversiGame(stub_.get());
  ASSERT_EQ(Get(id).status(), v1::MATCH_STATUS_FINISHED);
  *first = Analyze(stub_.get(), id);
  ASSERT_TRUE(first->status.ok()) << first->status.error_message();
  *stored = Analyze(stub_.get(), id, /*stored_only=*/true);
  ASSERT_TRUE(stored->status.ok()) << stored->status.error_message();
}

TEST_F(AnalysisTest, AReversiWinProvenByTheWinLossDrawSolveIsShownAsAProvenWin) {
  // 4,500,000 nodes a position: the judge's solver has three fifths of them, 2,700,000
  // (Reversi::PlanSolve), exact up to 16 empty cells and win/loss/draw at 17. Before move 44
  // ply-bot proves the outcome only, and the lobby must keep it a proven win
  // (ChooseMoveResponse.outcome_only), not a "+1" margin.
  Analysed first, stored;
  ASSERT_NO_FATAL_FAILURE(JudgeReversiGameOnNodes(4500000, &first, &stored));
  for (const Analysed* a : {&first, &stored}) {
    ASSERT_EQ(a->analysis.moves_size(), 60);
    const v1::MoveAnalysis& white = a->analysis.moves(43);
    EXPECT_EQ(white.move(), "f8");
    EXPECT_EQ(white.score_before_text(), "win (proven)");
    // Black's move before it, seen from Black: the position it left is a proven loss.
    EXPECT_EQ(a->analysis.moves(42).score_after_text(), "loss (proven)");
  }
}

TEST_F(AnalysisTest, TheNodeBudgetLimitsTheJudgeWhateverTheClock) {
  // 100,000 nodes a position leave the solver 60,000: exact up to 12 empty cells, win/loss/draw
  // at 13, where the 30 s clock alone would solve exactly up to 22. The position before move 44
  // (17 empty) is then judged by the depth-4 search, not proven; move 49's, from 12 empty to 11,
  // still both are.
  Analysed first, stored;
  ASSERT_NO_FATAL_FAILURE(JudgeReversiGameOnNodes(100000, &first, &stored));
  ASSERT_EQ(first.analysis.moves_size(), 60);
  EXPECT_FALSE(first.analysis.moves(43).exact_verdict());
  EXPECT_EQ(first.analysis.moves(43).score_before_text().find("proven"), std::string::npos)
      << first.analysis.moves(43).score_before_text();
  EXPECT_TRUE(first.analysis.moves(48).exact_verdict());
  // The budget is part of the analysis, stored with it.
  EXPECT_EQ(first.analysis.max_nodes(), 100000);
  EXPECT_EQ(stored.analysis.max_nodes(), 100000);
}

TEST_F(AnalysisTest, TwoInstancesAskingAtOnceAnalyseOnce) {
  StartLobby(AnalysisFlags());
  std::vector<std::string> flags = {BotTargetFlag()};
  for (const std::string& f : AnalysisFlags()) flags.push_back(f);
  LobbyInstance second = StartLobbyInstance(flags);
  ASSERT_NE(second.process, nullptr);
  const int64_t id = FinishedGame(stub_.get());
  Analysed results[2];
  std::thread a([&] { results[0] = Analyze(stub_.get(), id); });
  std::thread b([&] { results[1] = Analyze(second.get(), id); });
  a.join();
  b.join();
  int waited = 0;
  for (const Analysed& r : results) {
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    ASSERT_TRUE(r.has_analysis);
    for (const v1::AnalysisProgress& p : r.progress) waited += p.waiting() ? 1 : 0;
  }
  // One analysis, made once: the same moment in both answers, and one of them waited for it
  // (or, had it come second, found it stored).
  EXPECT_EQ(results[0].analysis.analysed_ms(), results[1].analysis.analysed_ms());
  EXPECT_LE(waited, 1);
  int analysed_here = 0;
  for (const Analysed& r : results) {
    for (const v1::AnalysisProgress& p : r.progress) {
      if (!p.waiting() && p.positions_done() == p.positions() && p.positions() > 0) {
        ++analysed_here;
        break;
      }
    }
  }
  EXPECT_EQ(analysed_here, 1);
}

TEST_F(AnalysisTest, PlayersCannotAnalyseTheirMatchWhileItRuns) {
  StartLobby(AnalysisFlags());
  EXPECT_EQ(Analyze(stub_.get(), 999999).status.error_code(), grpc::StatusCode::NOT_FOUND);
  // Waiting for a second player: nothing to analyse.
  v1::CreateMatchResponse waiting;
  ASSERT_TRUE(
      Create(stub_.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &waiting)
          .ok());
  EXPECT_EQ(Analyze(stub_.get(), waiting.match().id()).status.error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // A person against a bot, under way: refused to everyone, the player included.
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT},
                     {"", "easy"}, &created, TakingSeat(0, "alice"))
                  .ok());
  ASSERT_TRUE(Move(stub_.get(), created.match().id(), 0, "4", created.seat_token()).ok());
  Analysed refused = Analyze(stub_.get(), created.match().id());
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << refused.status.error_message();
  EXPECT_FALSE(refused.has_analysis);
}

TEST_F(AnalysisTest, SpectatorsAnalyseARunningBotGameWithoutStoringIt) {
  StartLobby(AnalysisFlags());
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                     {"easy", "easy"}, &created,
                     [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(1500); })
                  .ok());
  const int64_t id = created.match().id();
  // Wait for a few moves.
  absl::Time until = absl::Now() + absl::Seconds(30);
  while (Get(id).moves_size() < 2 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(100));
  Analysed live = Analyze(stub_.get(), id);
  ASSERT_TRUE(live.status.ok()) << live.status.error_message();
  ASSERT_TRUE(live.has_analysis);
  EXPECT_TRUE(live.analysis.partial());
  EXPECT_GE(live.analysis.moves_size(), 2);
  EXPECT_EQ(Analyze(stub_.get(), id, /*stored_only=*/true).status.error_code(),
            grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace ply
