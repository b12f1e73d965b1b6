// Post-game analysis in the engine (engine/analysis): verdicts on Connect Four checked against
// the exact solver, marks from the win-chance drop, the curve fit, and Tic-Tac-Toe judged
// exactly throughout.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "engine/analysis/analysis.h"
#include "engine/analysis/fit.h"
#include "engine/analysis/win_chance.h"
#include "engine/core/random.h"
#include "engine/games/connect4/solver.h"
#include "engine/registry/registry.h"
#include "gtest/gtest.h"

namespace ply {
namespace {

std::vector<std::string> Moves(const std::string& text) {
  return absl::StrSplit(text, ' ', absl::SkipEmpty());
}

int SolverScore(connect4::Solver& solver, const std::string& digits) {
  absl::StatusOr<connect4::SolveResult> r = solver.SolveSequence(digits, {.time_ms = 60000});
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->solved);
  return r->score;
}

constexpr AnalysisLimits kJudge{.time_ms = 1500};

TEST(AnalysisTest, MissedBlockOfAThreeInAWonPositionIsAnExactBlunder) {
  // Yellow stacks three in column 1; Red, winning, plays 7 instead of blocking; Yellow wins at 1.
  const std::vector<std::string> moves = Moves("4 1 4 1 3 1 7 1");
  absl::StatusOr<GameAnalysis> a = AnalyzeGame("connect4", {}, moves, kJudge);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->moves.size(), moves.size());
  const MoveVerdict& v = a->moves[6];
  EXPECT_EQ(v.move, "7");
  EXPECT_EQ(v.player, 0);
  EXPECT_TRUE(v.exact_verdict);
  EXPECT_EQ(v.mark, Mark::kBlunder);
  EXPECT_EQ(v.best_move, "1");
  // The solver agrees: Red (to move) wins before, Yellow (to move) wins after.
  connect4::Solver solver;
  EXPECT_GT(SolverScore(solver, "414131"), 0);
  EXPECT_GT(SolverScore(solver, "4141317"), 0);
  EXPECT_EQ(ExactOutcome(v.before), 1);
  EXPECT_EQ(ExactOutcome(v.after), -1);
  EXPECT_EQ(a->players[0].blunders, 1);
  // Yellow's winning move is the best move and is not marked.
  EXPECT_EQ(a->moves[7].mark, Mark::kNone);
}

TEST(AnalysisTest, SlowerWinKeptIsNeverMarked) {
  // From 4 1 4 1 3 1 1 2 Red wins with 3 or 5 (the solver's 13); 1 still wins, with 6.
  const std::vector<std::string> moves = Moves("4 1 4 1 3 1 1 2 1");
  connect4::Solver solver;
  const int best = SolverScore(solver, "41413112");
  const int played = -SolverScore(solver, "414131121");
  ASSERT_GT(played, 0);
  ASSERT_LT(played, best);
  absl::StatusOr<GameAnalysis> a = AnalyzeGame("connect4", {}, moves, kJudge);
  ASSERT_TRUE(a.ok()) << a.status();
  const MoveVerdict& v = a->moves[8];
  EXPECT_TRUE(v.exact_verdict);
  EXPECT_NE(v.best_move, "1");
  EXPECT_EQ(v.mark, Mark::kNone);
  EXPECT_EQ(ExactOutcome(v.before), 1);
  EXPECT_EQ(ExactOutcome(v.after), 1);
  // Slower: the win is further away after the move than the best move's.
  EXPECT_GT(MatePlies(v.after), MatePlies(v.before));
  EXPECT_DOUBLE_EQ(v.accuracy, 100.0);
}

TEST(AnalysisTest, EveryExactVerdictOnConnectFourAgreesWithTheSolver) {
  // A game of random moves, judged with the solver's budget: every exact verdict is checked
  // against the solver's values of the positions around it.
  Rng rng(7);
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame("connect4", {});
  ASSERT_TRUE(g.ok());
  while (!(*g)->Status().over && (*g)->History().size() < 24) {
    std::vector<std::string> legal = (*g)->LegalMoves();
    std::string m = legal[rng.Below(legal.size())];
    ASSERT_TRUE((*g)->Play(m).ok());
  }
  const std::vector<std::string> moves = (*g)->History();
  absl::StatusOr<GameAnalysis> a = AnalyzeGame("connect4", {}, moves, kJudge);
  ASSERT_TRUE(a.ok()) << a.status();
  connect4::Solver solver;
  int checked = 0;
  std::string digits;
  for (const MoveVerdict& v : a->moves) {
    const std::string before = digits;
    digits += v.move;
    // Early positions off the book take a cold solver minutes: check from ply 10 on.
    if (!v.exact_verdict || v.ply < 10) continue;
    int was = SolverScore(solver, before);
    int sign_was = was > 0 ? 1 : was < 0 ? -1 : 0;
    EXPECT_EQ(ExactOutcome(v.before), sign_was) << "before move " << v.ply + 1;
    // The solver takes no sequence that ends in a win: the last move of a won game is left out.
    const bool last = v.ply + 1 == static_cast<int>(moves.size());
    if (!last || !(*g)->Status().over) {
      int now = -SolverScore(solver, digits);
      EXPECT_EQ(ExactOutcome(v.after), now > 0 ? 1 : now < 0 ? -1 : 0) << "after " << v.ply + 1;
    }
    Mark expected = ExactOutcome(v.after) >= sign_was ? Mark::kNone
                    : ExactOutcome(v.after) < 0       ? Mark::kBlunder
                                                      : Mark::kMistake;
    EXPECT_EQ(v.mark, expected) << "move " << v.ply + 1;
    ++checked;
  }
  EXPECT_GT(checked, 8);
}

// A heuristic score that the opponent sees after a move for which the mover's win chance drops
// from 1/2 by `drop`.
Score OpponentScoreForDrop(double drop) {
  const double scale = WinChanceCurveFor("connect4").scale;
  double p = 0.5 - drop;
  return static_cast<Score>(std::lround(std::log(1 / p - 1) / scale));
}

TEST(AnalysisTest, HeuristicMarksFollowTheWinChanceDrop) {
  // Red's four moves, each judged 0 before; Yellow's judgement after decides the drop.
  const std::vector<std::string> moves = Moves("1 7 2 7 3 6 5");
  std::vector<std::optional<SearchReport>> j(moves.size() + 1);
  for (size_t i = 0; i < moves.size(); ++i) {
    j[i] = SearchReport{.move = i % 2 == 0 ? "4" : "1", .score = 0, .pv = {"4"}};
  }
  // After Red's 1, 2, 3 and 5: drops of 3, 7, 12 and 20 win-chance points.
  j[1]->score = OpponentScoreForDrop(0.03);
  j[3]->score = OpponentScoreForDrop(0.07);
  j[5]->score = OpponentScoreForDrop(0.12);
  j[7] = SearchReport{.move = "4", .score = OpponentScoreForDrop(0.20)};
  absl::StatusOr<GameAnalysis> r = AssembleAnalysis("connect4", {}, moves, j);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->moves[0].mark, Mark::kNone);
  EXPECT_EQ(r->moves[2].mark, Mark::kInaccuracy);
  EXPECT_EQ(r->moves[4].mark, Mark::kMistake);
  EXPECT_EQ(r->moves[6].mark, Mark::kBlunder);
  EXPECT_NEAR(r->moves[6].win_before - r->moves[6].win_after, 0.20, 0.01);
  EXPECT_FALSE(r->moves[6].exact_verdict);
  EXPECT_EQ(r->players[0].inaccuracies, 1);
  EXPECT_EQ(r->players[0].mistakes, 1);
  EXPECT_EQ(r->players[0].blunders, 1);
  EXPECT_LT(r->players[0].accuracy, 80);
  // The same drop on the engine's own best move is no mistake.
  j[6]->move = "5";
  r = AssembleAnalysis("connect4", {}, moves, j);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->moves[6].mark, Mark::kNone);
}

// A proven outcome without its margin (Reversi's win/loss/draw solve) reads as such on both
// sides of a move, from each mover's side, and still counts as proven for the marks.
TEST(AnalysisTest, AProvenOutcomeWithoutItsMarginIsShownAsOne) {
  const std::vector<std::string> moves = Moves("4 4");
  std::vector<std::optional<SearchReport>> j(3);
  j[0] = SearchReport{.move = "4", .score = 1, .exact = true, .outcome_only = true};
  j[1] = SearchReport{.move = "3", .score = -1, .exact = true, .outcome_only = true};
  j[2] = SearchReport{.move = "4", .score = 7, .exact = true};
  absl::StatusOr<GameAnalysis> r = AssembleAnalysis("connect4", {}, moves, j);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->moves[0].before_text, "win (proven)");
  EXPECT_EQ(r->moves[0].after_text, "win (proven)");  // the opponent's loss, from the mover
  EXPECT_EQ(r->moves[0].win_before, 1.0);
  EXPECT_TRUE(r->moves[0].exact_verdict);
  EXPECT_EQ(r->moves[0].mark, Mark::kNone);
  EXPECT_EQ(r->moves[1].before_text, "loss (proven)");
  EXPECT_EQ(r->moves[1].after_text, "-7");  // an exact margin keeps its number
  EXPECT_EQ((SearchReport{.score = 1, .exact = true}).ScoreText(), "+1");
  EXPECT_EQ((SearchReport{.score = 0, .exact = true, .outcome_only = true}).ScoreText(), "draw");
  // Without `exact` the flag means nothing: a heuristic score stays a number.
  EXPECT_EQ((SearchReport{.score = 1, .outcome_only = true}).ScoreText(), "+1");
}

TEST(AnalysisTest, JudgementsThatDoNotFitTheGameAreRefused) {
  const std::vector<std::string> moves = Moves("4 4");
  std::vector<std::optional<SearchReport>> j(2);
  EXPECT_EQ(AssembleAnalysis("connect4", {}, moves, j).status().code(),
            absl::StatusCode::kInvalidArgument);
  j.resize(3);
  EXPECT_EQ(AssembleAnalysis("connect4", {}, moves, j).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(AssembleAnalysis("connect4", {}, Moves("4 9"), j).ok());
}

TEST(AnalysisTest, TicTacToeIsJudgedExactlyEverywhere) {
  const std::vector<std::string> moves = Moves("b2 a1 c3 a3 a2 c1 b1 b3 c2");
  absl::StatusOr<GameAnalysis> a = AnalyzeGame("tictactoe", {}, moves, {.time_ms = 2000});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->moves.size(), moves.size());
  for (const MoveVerdict& v : a->moves) EXPECT_TRUE(v.exact_verdict) << v.ply;
  // O's c1 lets X fork (b1 then c2 or b3): drawn before, lost after. Nothing else is marked,
  // X's b1 included, which keeps the win though c2 would have won at once.
  for (const MoveVerdict& v : a->moves) {
    EXPECT_EQ(v.mark, v.ply == 5 ? Mark::kBlunder : Mark::kNone) << v.ply;
  }
  EXPECT_EQ(a->moves[5].move, "c1");
  EXPECT_EQ(ExactOutcome(a->moves[5].before), 0);
  EXPECT_NE(a->moves[6].best_move, "b1");
}

TEST(AnalysisTest, FitRecoversTheScaleThatMadeTheResults) {
  const double scale = 0.004;
  Rng rng(11);
  std::vector<WinChanceSample> samples;
  for (int i = 0; i < 20000; ++i) {
    Score s = static_cast<Score>(rng.Below(1601)) - 800;
    double p = 1 / (1 + std::exp(-scale * s));
    samples.push_back({.score = s, .result = rng.Unit() < p ? 1.0 : 0.0});
  }
  absl::StatusOr<WinChanceCurve> fit = FitWinChance(samples, 100);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->scale, scale, scale * 0.1);
  EXPECT_EQ(fit->samples, 20000);
  // Results that do not rise with the score fix no scale.
  for (WinChanceSample& s : samples) s.result = s.score > 0 ? 0.0 : 1.0;
  EXPECT_FALSE(FitWinChance(samples, 100).ok());
  EXPECT_FALSE(FitWinChance({}, 0).ok());
}

TEST(AnalysisTest, AccuracyFormula) {
  EXPECT_DOUBLE_EQ(MoveAccuracy(0), 100);
  EXPECT_NEAR(MoveAccuracy(0.05), 79.8, 0.2);
  EXPECT_NEAR(MoveAccuracy(1.0), 0, 0.01);
}

}  // namespace
}  // namespace ply
