// Post-game analysis in the engine (engine/analysis): verdicts on Connect Four checked against
// the exact solver, marks from the win-chance drop, the curve fit, and Tic-Tac-Toe judged
// exactly throughout.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/analysis/analysis.h"
#include "engine/analysis/fit.h"
#include "engine/analysis/win_chance.h"
#include "engine/core/random.h"
#include "engine/games/connect4/solver.h"
#include "engine/games/reversi/endgame.h"
#include "engine/games/reversi/reversi.h"
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

// The solver's outcome (+1, 0, -1 for the side to move) of the position after `digits` plus
// `column` (1-based), from the side that plays `column`; a move that ends the game counts as its
// result.
int MoveOutcome(connect4::Solver& solver, AnyGame& game, const std::string& digits, int column) {
  const Player mover = game.SideToMove();
  EXPECT_TRUE(game.Play(std::to_string(column)).ok());
  const GameStatus status = game.Status();
  EXPECT_TRUE(game.Undo().ok());
  if (status.over) return status.winner < 0 ? 0 : status.winner == mover ? 1 : -1;
  const int score = -SolverScore(solver, digits + std::to_string(column));
  return score > 0 ? 1 : score < 0 ? -1 : 0;
}

// A game the solver plays perfectly but for two moves it chooses to be wrong: one that throws a
// won position away into a draw (a mistake), and later one that leaves an immediate threat of the
// opponent's unblocked (a blunder). The analysis marks exactly those two moves.
TEST(AnalysisTest, SolverChosenErrorsAreExactlyTheMarkedMoves) {
  connect4::Solver solver;
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame("connect4", {});
  ASSERT_TRUE(g.ok());
  AnyGame& game = **g;
  // Ten perfect moves from the judge's book, then the solver's choices.
  std::string digits;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<SearchReport> r = JudgePosition(game, kJudge);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->exact);
    ASSERT_TRUE(game.Play(r->move).ok());
    digits += r->move;
  }
  int thrown = -1, unblocked = -1;
  std::vector<Mark> expected(digits.size(), Mark::kNone);
  while (!game.Status().over) {
    int outcome[8] = {};
    std::vector<int> legal;
    for (const std::string& m : game.LegalMoves()) legal.push_back(std::stoi(m));
    int best = -2;
    for (int c : legal) {
      outcome[c] = MoveOutcome(solver, game, digits, c);
      best = std::max(best, outcome[c]);
    }
    // The opponent's immediate wins if the mover passed: columns where their stone would win.
    std::vector<int> threats;
    for (int c : legal) {
      // As if the mover passed: a stone of theirs elsewhere, then the opponent's at c.
      for (int filler : legal) {
        if (filler == c) continue;
        std::unique_ptr<AnyGame> probe = game.Clone();
        if (!probe->Play(std::to_string(filler)).ok() || probe->Status().over) continue;
        if (probe->Play(std::to_string(c)).ok() && probe->Status().over &&
            probe->Status().winner != game.SideToMove()) {
          threats.push_back(c);
        }
        break;
      }
    }
    int choice = -1;
    Mark mark = Mark::kNone;
    if (thrown < 0 && best == 1) {
      for (int c : legal) {
        if (outcome[c] == 0) choice = c;
      }
      if (choice > 0) {
        thrown = static_cast<int>(digits.size());
        mark = Mark::kMistake;
      }
    } else if (thrown >= 0 && unblocked < 0 && best >= 0 && threats.size() == 1) {
      for (int c : legal) {
        if (c != threats[0] && outcome[c] < 0) choice = c;
      }
      if (choice > 0) {
        unblocked = static_cast<int>(digits.size());
        mark = Mark::kBlunder;
      }
    }
    if (choice < 0) {
      // The solver's move: the best outcome, from the centre outwards.
      for (int c : {4, 3, 5, 2, 6, 1, 7}) {
        if (std::find(legal.begin(), legal.end(), c) != legal.end() && outcome[c] == best) {
          choice = c;
          break;
        }
      }
    }
    ASSERT_TRUE(game.Play(std::to_string(choice)).ok());
    digits += std::to_string(choice);
    expected.push_back(mark);
  }
  ASSERT_GE(thrown, 0) << "no won position had a drawing move: " << digits;
  ASSERT_GE(unblocked, 0) << "no single threat was left unblocked: " << digits;
  std::vector<std::string> moves;
  for (char c : digits) moves.push_back(std::string(1, c));
  absl::StatusOr<GameAnalysis> a = AnalyzeGame("connect4", {}, moves, kJudge);
  ASSERT_TRUE(a.ok()) << a.status();
  for (const MoveVerdict& v : a->moves) {
    EXPECT_EQ(v.mark, expected[v.ply]) << "move " << v.ply + 1 << " of " << digits;
    if (v.ply >= 10) {
      EXPECT_TRUE(v.exact_verdict) << "move " << v.ply + 1;
    }
  }
  EXPECT_EQ(a->players[0].mistakes + a->players[1].mistakes, 1);
  EXPECT_EQ(a->players[0].blunders + a->players[1].blunders, 1);
}

// Reversi from 20 empty cells: after 40 moves of a game between a depth-1 and a depth-3 search,
// the solver plays on, giving a won position away twice (the worst move it has, the first two
// times the side to move is winning). The analysis judges those 20-odd moves, and every verdict
// is checked against exact endgame values computed here with the endgame solver itself: the
// margins before and after each move, and the mark from the outcomes.
TEST(AnalysisTest, ReversiMarksFrom20EmptiesAgreeWithExactEndgameValues) {
  std::vector<std::string> moves = Moves(
      "d3 c5 f6 e3 f3 f4 f5 g4 g3 g6 h4 e6 c4 h3 h2 c2 c3 d2 d6 g5 d1 b2 d7 c6 c1 b1 a1 e2 e1 h5 "
      "h6 f2 b3 g2 e7 f1 h1 g1 b4 c7");
  const size_t from = moves.size();
  absl::StatusOr<Reversi> exact = Reversi::Create({});
  ASSERT_TRUE(exact.ok());
  for (const std::string& m : moves) {
    absl::StatusOr<Reversi::Move> parsed = exact->ParseMove(m);
    ASSERT_TRUE(parsed.ok()) << m;
    Reversi::UndoInfo undo;
    exact->Make(*parsed, undo);
  }
  ASSERT_EQ(exact->Empties(), 20);
  reversi::EndgameSolver solver(64);
  // The solver's disc margin for the side to move before each move from here, and who that is.
  std::vector<std::pair<int, Player>> truth;
  int thrown = 0;
  while (!exact->Status().over) {
    const reversi::EndgameResult here = solver.Solve(*exact);
    ASSERT_TRUE(here.solved);
    truth.push_back({here.score, exact->SideToMove()});
    MoveList<Reversi::Move, Reversi::kMaxMoves> legal;
    exact->GenerateMoves(legal);
    Reversi::Move choice = here.best_move;
    if (here.score > 0 && thrown < 2 && legal.size() > 1) {
      // The worst move there is.
      int worst = here.score;
      for (Reversi::Move m : legal) {
        Reversi child = *exact;
        Reversi::UndoInfo undo;
        child.Make(m, undo);
        const reversi::EndgameResult r = solver.Solve(child);
        ASSERT_TRUE(r.solved);
        if (-r.score < worst) {
          worst = -r.score;
          choice = m;
        }
      }
      if (worst <= 0)
        ++thrown;
      else
        choice = here.best_move;
    }
    moves.push_back(exact->MoveToText(choice));
    Reversi::UndoInfo undo;
    exact->Make(choice, undo);
  }
  ASSERT_EQ(thrown, 2) << absl::StrJoin(moves, " ");
  const GameStatus end = exact->Status();

  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame("reversi", {});
  ASSERT_TRUE(g.ok());
  std::vector<std::optional<SearchReport>> judgements(moves.size() + 1);
  for (size_t i = 0; i <= moves.size(); ++i) {
    if (i < from) {
      // Stand-ins before the endgame: the move played is the best, nothing is marked there.
      judgements[i] = SearchReport{.move = moves[i], .score = 0, .depth = 1};
    } else if (i < moves.size()) {
      absl::StatusOr<SearchReport> r = JudgePosition(**g, {.time_ms = 60000});
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_TRUE(r->exact && !r->outcome_only) << "before move " << i + 1;
      judgements[i] = *r;
    }
    if (i == moves.size()) break;
    ASSERT_TRUE((*g)->Play(moves[i]).ok()) << moves[i];
  }
  ASSERT_TRUE((*g)->Status().over);
  absl::StatusOr<GameAnalysis> a = AssembleAnalysis("reversi", {}, moves, judgements);
  ASSERT_TRUE(a.ok()) << a.status();
  auto sign = [](int x) { return x > 0 ? 1 : x < 0 ? -1 : 0; };
  int marked = 0;
  for (size_t i = from; i < moves.size(); ++i) {
    const MoveVerdict& v = a->moves[i];
    const auto [before, side] = truth[i - from];
    ASSERT_EQ(side, v.player);
    int after = 0;
    if (i + 1 < moves.size()) {
      const auto [next, next_side] = truth[i + 1 - from];
      after = next_side == v.player ? next : -next;
      EXPECT_EQ(v.after, after) << "move " << i + 1;
    } else {
      after = end.winner < 0 ? 0 : end.winner == v.player ? 1 : -1;
      // The end in the solver's units, the margin with the empty cells to the winner (it read
      // "win in 1" after a "win by 64").
      const int margin = v.player == 0 ? end.margin : -end.margin;
      EXPECT_EQ(v.after, margin);
      EXPECT_EQ(v.after_text, margin > 0   ? absl::StrCat("win by ", margin)
                              : margin < 0 ? absl::StrCat("loss by ", -margin)
                                           : "draw");
    }
    EXPECT_TRUE(v.exact_verdict) << "move " << i + 1;
    EXPECT_EQ(v.before, before) << "move " << i + 1;
    EXPECT_EQ(ExactOutcome(v.after), sign(after)) << "move " << i + 1;
    const Mark expected = sign(after) >= sign(before) ? Mark::kNone
                          : sign(after) < 0           ? Mark::kBlunder
                                                      : Mark::kMistake;
    EXPECT_EQ(v.mark, expected) << "move " << i + 1 << ": " << v.before_text << " -> "
                                << v.after_text;
    if (v.mark != Mark::kNone) ++marked;
  }
  // The two given-away wins, and nothing else.
  EXPECT_EQ(marked, 2) << absl::StrJoin(moves, " ");
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

// One judge per verdict: a move's value comes from the judge of the position before it, never
// from a separate search of the next position that may disagree with it.
TEST(AnalysisTest, AMovesValueComesFromTheJudgeOfThePositionBeforeIt) {
  const std::vector<std::string> moves = Moves("1 7 2");
  std::vector<std::optional<SearchReport>> j(4);
  std::vector<std::optional<SearchReport>> played(3);
  // Red's 1 is not the judge's best: its value is the judge's search of it (-200), not what the
  // next judgement (Yellow +500, deeper) says.
  j[0] = SearchReport{.move = "4", .score = 10, .depth = 8, .pv = {"4"}};
  played[0] = SearchReport{.score = -200, .depth = 7};
  // Yellow's 7 is the judge's best: it keeps the judge's +500 even though the next judgement
  // disagrees (Red +800).
  j[1] = SearchReport{.move = "7", .score = 500, .depth = 8, .pv = {"7"}};
  // Red's 2, searched by the judge, is better than the judge's best: no loss at all.
  j[2] = SearchReport{.move = "4", .score = 800, .depth = 8, .pv = {"4"}};
  played[2] = SearchReport{.score = 900, .depth = 7};
  j[3] = SearchReport{.move = "4", .score = 0, .depth = 8};
  absl::StatusOr<GameAnalysis> r = AssembleAnalysis("connect4", {}, moves, j, played);
  ASSERT_TRUE(r.ok()) << r.status();
  const WinChanceCurve curve = WinChanceCurveFor("connect4");
  EXPECT_EQ(r->moves[0].after, -200);
  EXPECT_TRUE(r->moves[0].same_judge);
  EXPECT_EQ(r->moves[0].after_text, "-200");
  EXPECT_DOUBLE_EQ(r->moves[0].win_before - r->moves[0].win_after,
                   WinChance(curve, 10, false) - WinChance(curve, -200, false));
  EXPECT_EQ(r->moves[1].before, 500);
  EXPECT_EQ(r->moves[1].after, 500);
  EXPECT_EQ(r->moves[1].after_text, "+500");
  EXPECT_EQ(r->moves[1].mark, Mark::kNone);
  EXPECT_DOUBLE_EQ(r->moves[1].accuracy, 100);
  EXPECT_EQ(r->moves[2].before, 900);
  EXPECT_EQ(r->moves[2].after, 900);
  EXPECT_EQ(r->moves[2].mark, Mark::kNone);
  EXPECT_DOUBLE_EQ(r->moves[2].accuracy, 100);
  // Values of played moves must fit the moves.
  played.resize(2);
  EXPECT_EQ(AssembleAnalysis("connect4", {}, moves, j, played).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// JudgeMove searches the position after a move to one ply less than the judgement reached, and
// gives its value from the mover's side; a move that ends the game gets its true result.
TEST(AnalysisTest, JudgeMoveSearchesTheMoveAtTheJudgesDepth) {
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame("gomoku", {});
  ASSERT_TRUE(g.ok());
  for (const char* m : {"h8", "h9", "i8", "i9"}) ASSERT_TRUE((*g)->Play(m).ok());
  const AnalysisLimits limits{.time_ms = 5000, .max_depth = 4};
  absl::StatusOr<SearchReport> judged = JudgePosition(**g, limits);
  ASSERT_TRUE(judged.ok()) << judged.status();
  ASSERT_FALSE(judged->exact);
  const uint64_t hash = (*g)->Hash();
  absl::StatusOr<SearchReport> m = JudgeMove(**g, "a1", *judged, limits);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*g)->Hash(), hash);  // left as it was
  EXPECT_LE(m->depth, judged->depth - 1);
  EXPECT_LT(m->score, judged->score);  // a corner move is worse than the judge's best
  EXPECT_TRUE(NeedsMoveJudgement(*judged, "a1"));
  EXPECT_FALSE(NeedsMoveJudgement(*judged, judged->move));
  // An illegal move is refused and changes nothing.
  EXPECT_FALSE(JudgeMove(**g, "h8", *judged, limits).ok());
  EXPECT_EQ((*g)->Hash(), hash);
}

TEST(AnalysisTest, AFewBlundersWeighHeavilyInAPlayersAccuracy) {
  // 30 exact moves and 3 thrown away: the plain mean would be 91 %.
  std::vector<double> accuracies(30, 100.0);
  accuracies.insert(accuracies.end(), 3, 0.0);
  const std::vector<double> flat(accuracies.size(), 1.0);
  EXPECT_NEAR(GameAccuracy(accuracies, flat), (3000.0 / 33 + 33 / (0.3 + 3)) / 2, 1e-9);
  EXPECT_LT(GameAccuracy(accuracies, flat), 55);
  EXPECT_DOUBLE_EQ(GameAccuracy(std::vector<double>(10, 100.0), std::vector<double>(10, 1.0)), 100);
  EXPECT_EQ(GameAccuracy({}, {}), 0);
  // Weights: settled positions weigh 0.5, swings up to 12 (win chances in percent).
  std::vector<double> calm(21, 0.5);
  for (double w : SwingWeights(calm)) EXPECT_DOUBLE_EQ(w, 0.5);
  EXPECT_EQ(SwingWeights(calm).size(), 20u);
  std::vector<double> wild;
  for (int i = 0; i < 21; ++i) wild.push_back(i % 2 == 0 ? 0.1 : 0.9);
  for (double w : SwingWeights(wild)) EXPECT_DOUBLE_EQ(w, 12.0);
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
  EXPECT_EQ(r->moves[1].after_text, "loss by 7");  // an exact margin is a result, not a number
  EXPECT_EQ((SearchReport{.score = 1, .exact = true}).ScoreText(), "win by 1");
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
  // The fit's quality: the true scale inside its interval, better than knowing nothing, and each
  // band of chances seen as often as given.
  const WinChanceFit quality = MeasureFit(samples, fit->scale);
  EXPECT_LT(quality.scale_low, scale);
  EXPECT_GT(quality.scale_high, scale);
  EXPECT_LT(quality.scale_high - quality.scale_low, scale * 0.2);
  EXPECT_NEAR(quality.log_loss_even, std::log(2.0), 1e-9);
  EXPECT_LT(quality.log_loss, quality.log_loss_base - 0.05);
  EXPECT_LT(quality.brier, 0.25);
  int counted = 0;
  for (const WinChanceFit::Bin& b : quality.bins) {
    counted += b.count;
    if (b.count < 500) continue;
    EXPECT_NEAR(b.observed, b.predicted, 0.03) << b.from << ".." << b.to;
  }
  EXPECT_EQ(counted, 20000);
  // A curve of the wrong scale fits worse.
  EXPECT_GT(MeasureFit(samples, fit->scale * 3).log_loss, quality.log_loss);
  EXPECT_NE(FitText(quality).find("log-loss"), std::string::npos);
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
