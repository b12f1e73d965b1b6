#include "engine/games/reversi/reversi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/games/reversi/endgame.h"
#include "engine/registry/game_adapter.h"
#include "engine/registry/registry.h"
#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "tests/conformance.h"
#include "tests/data/test_data.h"

namespace ply {
namespace {

Reversi Make(const GameOptions& options = {}) {
  absl::StatusOr<Reversi> g = Reversi::Create(options);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

TEST(Reversi, PerftMatchesKnownCountsOnEightByEight) {
  const uint64_t expected[] = {4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288};
  Reversi g = Make();
  for (int d = 1; d <= 9; ++d) EXPECT_EQ(Perft(g, d), expected[d - 1]) << "depth " << d;
}

TEST(Reversi, PerftMatchesKnownCountsOnSixBySix) {
  const uint64_t expected[] = {4, 12, 56, 244, 1364, 7604, 47740, 308716};
  Reversi g = Make({{"width", "6"}, {"height", "6"}});
  for (int d = 1; d <= 8; ++d) EXPECT_EQ(Perft(g, d), expected[d - 1]) << "depth " << d;
}

// The generic code paths (one word and four words) must agree with the 8x8 one where they
// describe the same board: a 16x16 board's centre plays like any other board's for a few plies.
TEST(Reversi, GenericBoardsMatchTheOpeningCounts) {
  const uint64_t expected[] = {4, 12, 56, 244, 1396, 8200};
  Reversi big = Make({{"width", "16"}, {"height", "16"}});
  Reversi wide = Make({{"width", "10"}, {"height", "8"}});
  for (int d = 1; d <= 6; ++d) {
    EXPECT_EQ(Perft(big, d), expected[d - 1]) << "16x16 depth " << d;
    EXPECT_EQ(Perft(wide, d), expected[d - 1]) << "10x8 depth " << d;
  }
}

TEST(Reversi, PassesConformanceOnEveryVariant) {
  testing::RunConformance(Make(), 60, 1);
  testing::RunConformance(Make({{"width", "6"}, {"height", "6"}}), 60, 2);
  testing::RunConformance(Make({{"width", "4"}, {"height", "4"}}), 100, 3);
  testing::RunConformance(Make({{"width", "10"}, {"height", "8"}}), 20, 4);
  testing::RunConformance(Make({{"width", "4"}, {"height", "12"}}), 30, 5);
  testing::RunConformance(Make({{"width", "16"}, {"height", "4"}}), 30, 9);
  testing::RunConformance(Make({{"width", "16"}, {"height", "16"}}), 3, 6);
  testing::RunConformance(Make({{"walls", "c3+f6+a8+h1+d1"}}), 40, 7);
  testing::RunConformance(Make({{"width", "12"}, {"height", "10"}, {"walls", "a1;l10;f3"}}), 5, 8);
}

TEST(Reversi, StartsWithFourDiscsAndFourMoves) {
  Reversi g = Make();
  EXPECT_EQ(g.SideToMove(), 0);
  EXPECT_EQ(g.Empties(), 60);
  MoveListOf<Reversi> moves;
  g.GenerateMoves(moves);
  std::vector<std::string> texts;
  for (Reversi::Move m : moves) texts.push_back(g.MoveToText(m));
  EXPECT_EQ(texts, (std::vector<std::string>{"d3", "c4", "f5", "e6"}));
  EXPECT_EQ(g.Render().substr(0, 20), "    a b c d e f g h\n");
  EXPECT_NE(g.Render().find("  4 . . . O X . . .  4"), std::string::npos) << g.Render();
}

TEST(Reversi, ParsesCellsAndExplainsIllegalMoves) {
  Reversi g = Make();
  EXPECT_EQ(g.MoveToText(*g.ParseMove(" D3 ")), "d3");
  EXPECT_EQ(g.ParseMove("d4").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("a1").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("pass").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("i1").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("a9").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("a0").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("d03").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(g.ParseMove("a1").status().message().empty());
  Reversi big = Make({{"width", "16"}, {"height", "16"}});
  EXPECT_EQ(big.MoveToText(*big.ParseMove("h7")), "h7");
  EXPECT_EQ(big.ParseMove("p16").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(big.ParseMove("q1").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Reversi, FlipsAllBracketedLines) {
  // Black on d4 brackets c4-b4 (to a4), d3-d2 (to d1) and c3-b2 (to a1).
  absl::StatusOr<Reversi> g = Reversi::FromCells({{"width", "4"}, {"height", "4"}},
                                                 "X--X"
                                                 "-O-O"
                                                 "--OO"
                                                 "XOO-",
                                                 /*to_move=*/0);
  ASSERT_TRUE(g.ok()) << g.status();
  Reversi::UndoInfo undo;
  g->Make(*g->ParseMove("d4"), undo);
  EXPECT_EQ(reversi::PopCount(undo.flips), 6);
  EXPECT_EQ(reversi::PopCount(g->discs(0)), 3 + 1 + 6);
  EXPECT_EQ(reversi::PopCount(g->discs(1)), 0);
  EXPECT_EQ(g->GetOutcome(), Outcome::kLoss);  // White, to move, has no disc left
  EXPECT_EQ(g->Status().winner, 0);
  EXPECT_EQ(g->ParseMove("pass").status().code(), absl::StatusCode::kFailedPrecondition);
}

// Depth-first search for a game that is over after exactly `depth` plies.
bool FindFinishedGame(Reversi& g, int depth) {
  if (g.GetOutcome() != Outcome::kOngoing) return depth == 0;
  if (depth == 0) return false;
  MoveListOf<Reversi> moves;
  g.GenerateMoves(moves);
  for (Reversi::Move m : moves) {
    Reversi::UndoInfo undo;
    g.Make(m, undo);
    if (FindFinishedGame(g, depth - 1)) return true;
    g.Unmake(m, undo);
  }
  return false;
}

TEST(Reversi, ShortestGamesEndAfterNineMoves) {
  Reversi g = Make();
  EXPECT_FALSE(FindFinishedGame(g, 8));
  ASSERT_TRUE(FindFinishedGame(g, 9));
  EXPECT_TRUE(g.Status().over);
  EXPECT_STREQ(g.Status().reason, "neither side can move");
  EXPECT_EQ(g.GetOutcome(), Outcome::kLoss) << g.Render();
  EXPECT_EQ(g.Status().winner, 1 - g.SideToMove());
  EXPECT_NE(g.Render().find("game over"), std::string::npos);
}

TEST(Reversi, ForcedPassIsTheOnlyMove) {
  // Black to move has no legal move; White has one (c1, over b1), so Black must pass.
  absl::StatusOr<Reversi> g = Reversi::FromCells({{"width", "4"}, {"height", "4"}},
                                                 "OX--"
                                                 "----"
                                                 "----"
                                                 "----",
                                                 /*to_move=*/0);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->GetOutcome(), Outcome::kOngoing);
  MoveListOf<Reversi> moves;
  g->GenerateMoves(moves);
  ASSERT_EQ(moves.size(), 1);
  EXPECT_EQ(moves[0], Reversi::kPass);
  EXPECT_EQ(*g->ParseMove("pass"), Reversi::kPass);
  EXPECT_EQ(g->ParseMove("c1").status().code(), absl::StatusCode::kFailedPrecondition);
  Reversi::UndoInfo undo;
  const Reversi before = *g;
  g->Make(Reversi::kPass, undo);
  EXPECT_EQ(g->SideToMove(), 1);
  EXPECT_EQ(g->MoveToText(*g->ParseMove("c1")), "c1");
  g->Unmake(Reversi::kPass, undo);
  EXPECT_TRUE(*g == before);
}

TEST(Reversi, GameEndsWhenNeitherSideCanMove) {
  absl::StatusOr<Reversi> g = Reversi::FromCells({{"width", "4"}, {"height", "4"}},
                                                 "XX--"
                                                 "----"
                                                 "----"
                                                 "---O",
                                                 /*to_move=*/1);
  ASSERT_TRUE(g.ok()) << g.status();
  // Nobody can bracket anything: the game is over with empty cells left.
  EXPECT_EQ(g->GetOutcome(), Outcome::kLoss);
  EXPECT_EQ(g->Status().winner, 0);
  EXPECT_STREQ(g->Status().reason, "neither side can move");
  // The counts the result reports: the discs on the board, empty cells to nobody.
  EXPECT_EQ(g->Status().points[0], 2);
  EXPECT_EQ(g->Status().points[1], 1);
}

TEST(Reversi, WallsAreNeverPlayedAndStopLines) {
  // Black to move: a1 would bracket b1 against d1, but the wall on c1 stops the line.
  absl::StatusOr<Reversi> g = Reversi::FromCells({{"width", "4"}, {"height", "4"}},
                                                 "-O#X"
                                                 "-OX-"
                                                 "----"
                                                 "----",
                                                 /*to_move=*/0);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->EffectiveOptions().at("walls"), "c1");
  EXPECT_EQ(g->ParseMove("c1").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g->ParseMove("a1").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(g->ParseMove("a2").ok());
  EXPECT_NE(g->Render().find('#'), std::string::npos);

  EXPECT_FALSE(Reversi::Create({{"walls", "d4"}}).ok());  // a starting disc
  EXPECT_FALSE(Reversi::Create({{"walls", "z9"}}).ok());
  EXPECT_FALSE(Reversi::Create({{"width", "7"}}).ok());
  EXPECT_FALSE(Reversi::Create({{"width", "18"}}).ok());
  EXPECT_FALSE(Reversi::Create({{"height", "2"}}).ok());
  Reversi walled = Make({{"walls", "h1 a1;c3+c3"}});
  EXPECT_EQ(walled.EffectiveOptions().at("walls"), "a1+h1+c3");
  EXPECT_TRUE(Make(walled.EffectiveOptions()) == walled);
}

TEST(Reversi, HashSeparatesSideToMoveAndBoardShapes) {
  absl::StatusOr<Reversi> black = Reversi::FromCells({{"width", "4"}, {"height", "4"}},
                                                     "-OX-"
                                                     "----"
                                                     "----"
                                                     "----",
                                                     0);
  absl::StatusOr<Reversi> white = Reversi::FromCells({{"width", "4"}, {"height", "4"}},
                                                     "-OX-"
                                                     "----"
                                                     "----"
                                                     "----",
                                                     1);
  EXPECT_NE(black->Hash(), white->Hash());
  EXPECT_NE(Make().Hash(), Make({{"width", "6"}, {"height", "6"}}).Hash());
}

// Black to move can take the a1 corner (O on b1 is flanked by X on c1).
absl::StatusOr<Reversi> CornerOffered() {
  return Reversi::FromCells({},
                            "-OX-----"
                            "--------"
                            "--------"
                            "---OX---"
                            "---XO---"
                            "--------"
                            "--------"
                            "--------",
                            0);
}

TEST(Reversi, EvaluationIsSymmetricAndPrefersCorners) {
  EXPECT_EQ(Make().Evaluate(), 0);
  // The same position with colours swapped evaluates the same for the side to move.
  absl::StatusOr<Reversi> a = Reversi::FromCells({},
                                                 "X--OOO--"
                                                 "-XOOX---"
                                                 "--XXO---"
                                                 "--XOXO--"
                                                 "---OXX--"
                                                 "--------"
                                                 "--------"
                                                 "--------",
                                                 0);
  absl::StatusOr<Reversi> b = Reversi::FromCells({},
                                                 "O--XXX--"
                                                 "-OXXO---"
                                                 "--OOX---"
                                                 "--OXOX--"
                                                 "---XOO--"
                                                 "--------"
                                                 "--------"
                                                 "--------",
                                                 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->Evaluate(), b->Evaluate());
  // Ordering puts an available corner first.
  absl::StatusOr<Reversi> c = CornerOffered();
  ASSERT_TRUE(c.ok());
  MoveListOf<Reversi> moves;
  c->GenerateMoves(moves);
  Reversi::Move best = moves[0];
  for (Reversi::Move m : moves) {
    if (c->MoveOrderScore(m) > c->MoveOrderScore(best)) best = m;
  }
  EXPECT_EQ(c->MoveToText(best), "a1");
}

TEST(Reversi, SearchTakesAnOfferedCorner) {
  absl::StatusOr<Reversi> c = CornerOffered();
  auto searcher = std::make_unique<Searcher<Reversi>>(4);
  auto r = searcher->Search(*c, {.max_depth = 4});
  EXPECT_EQ(c->MoveToText(r.best_move), "a1");
}

TEST(Reversi, SearchReachesDepthQuicklyOnTheStandardBoard) {
  Reversi g = Make();
  auto searcher = std::make_unique<Searcher<Reversi>>(16);
  auto r = searcher->Search(g, {.max_depth = 7});
  EXPECT_EQ(r.depth, 7);
  EXPECT_TRUE(r.has_move);
}

TEST(Reversi, EndgameSolverMatchesPlainNegamax) {
  // Random 8x8 positions a few moves from the end, half of them with walls: the bitboard
  // solver against plain negamax over the game class.
  Rng rng(7);
  for (int game = 0; game < 24; ++game) {
    Reversi g = game % 2 == 0 ? Make() : Make({{"walls", "a1+c6+h3"}});
    std::vector<Reversi::UndoInfo> undo(70);
    int ply = 0;
    const int stop_at = 7 + static_cast<int>(rng.Below(3));
    while (g.GetOutcome() == Outcome::kOngoing && g.Empties() > stop_at) {
      MoveListOf<Reversi> moves;
      g.GenerateMoves(moves);
      g.Make(moves[static_cast<int>(rng.Below(moves.size()))], undo[ply++]);
    }
    if (g.GetOutcome() != Outcome::kOngoing) continue;
    reversi::EndgameResult fast = reversi::SolveEndgame(g);
    ASSERT_TRUE(fast.solved);
    // Plain negamax over the game class as the reference.
    std::function<int(Reversi&)> exact = [&](Reversi& p) -> int {
      if (p.GetOutcome() != Outcome::kOngoing) {
        int d = p.DiscDifference();
        return d > 0 ? d + p.Empties() : d < 0 ? d - p.Empties() : 0;
      }
      MoveListOf<Reversi> moves;
      p.GenerateMoves(moves);
      int best = -1000;
      for (Reversi::Move m : moves) {
        Reversi::UndoInfo u;
        p.Make(m, u);
        best = std::max(best, -exact(p));
        p.Unmake(m, u);
      }
      return best;
    };
    ASSERT_EQ(fast.score, exact(g)) << g.Render();
    Reversi::UndoInfo u;
    g.Make(fast.best_move, u);
    EXPECT_EQ(-exact(g), fast.score) << "the best move must reach the score";
  }
}

TEST(Reversi, GenericSolverSolvesSixBySixEndgames) {
  Reversi g = Make({{"width", "6"}, {"height", "6"}});
  Rng rng(3);
  std::vector<Reversi::UndoInfo> undo(40);
  int ply = 0;
  while (g.GetOutcome() == Outcome::kOngoing && g.Empties() > 9) {
    MoveListOf<Reversi> moves;
    g.GenerateMoves(moves);
    g.Make(moves[static_cast<int>(rng.Below(moves.size()))], undo[ply++]);
  }
  reversi::EndgameResult r = reversi::SolveEndgame(g);
  ASSERT_TRUE(r.solved);
  EXPECT_LE(std::abs(r.score), 36);
  EXPECT_NE(r.best_move, Reversi::kNoMove);
}

TEST(Reversi, ParsesObfLines) {
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8:+18; H1:+12; "
      "H7:+6;");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->best_score, 18);
  EXPECT_EQ(p->best_moves, std::vector<std::string>{"g8"});
  EXPECT_EQ(p->game.SideToMove(), 0);
  EXPECT_EQ(p->game.Empties(), 14);
  EXPECT_FALSE(reversi::ParseObfLine("XO X; A1:+2").ok());
  EXPECT_FALSE(reversi::ParseObfLine(std::string(64, '-') + " Z; A1:+2").ok());
}

// Several .obf files read in one call: their positions in order, and a file that cannot be read
// is an error that names it.
TEST(Reversi, ReadsSeveralObfFilesInOrder) {
  const std::string a = std::string(PLY_SOURCE_DIR) + "/engine/games/reversi/ffo45-49.obf";
  auto one = reversi::ReadObfFile(a);
  ASSERT_TRUE(one.ok()) << one.status();
  auto both = reversi::ReadObfFiles({a, a});
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->size(), 2 * one->size());
  for (size_t i = 0; i < one->size(); ++i) {
    EXPECT_EQ((*both)[i].game, (*one)[i].game);
    EXPECT_EQ((*both)[one->size() + i].best_moves, (*one)[i].best_moves);
  }
  auto missing = reversi::ReadObfFiles({a, "/nonexistent/x.obf"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/x.obf"), std::string_view::npos);
}

// The FFO endgame set: positions 1-19 (the easier ones; tests/data/reversi/ffo-1-19.txt, every
// move's exact score) solved exactly, with a best move among the listed best moves.
TEST(Reversi, SolvesFfoEndgamePositionsExactly) {
  const std::string path = test_data::Path("reversi/ffo-1-19.txt");
  auto positions = reversi::ReadObfFile(path);
  ASSERT_TRUE(positions.ok()) << "test data missing or malformed: " << positions.status();
  ASSERT_EQ(positions->size(), 19u) << path;
  reversi::EndgameSolver solver(64);
  const auto start = std::chrono::steady_clock::now();
  int solved = 0;
  for (size_t i = 0; i < positions->size(); ++i) {
    const reversi::ObfPosition& p = (*positions)[i];
    if (p.game.Empties() > 20) continue;
    solver.Clear();
    reversi::EndgameResult r = solver.Solve(p.game);
    ASSERT_TRUE(r.solved);
    EXPECT_EQ(r.score, p.best_score) << "FFO #" << i + 1;
    const std::string move = p.game.MoveToText(r.best_move);
    EXPECT_NE(std::find(p.best_moves.begin(), p.best_moves.end(), move), p.best_moves.end())
        << "FFO #" << i + 1 << " played " << move;
    ++solved;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(15)) break;
  }
  EXPECT_GE(solved, 10);
}

// Positions of 20-26 empty cells from the public FFO set with their exact scores (inline, so
// the test does not depend on the shared data folder): the solve must find the score and one
// of the moves listed with it.
TEST(Reversi, SolvesLargerFfoPositionsExactly) {
  const char* const kLines[] = {
      // FFO #40, 20 empties.
      "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38;",
      // fforum #35, 21 empties.
      "--XXX-----XXXX-OOOXXOOOOOOOOOOXO-OOXXXXO-OOOXXXO---XOXX---X----- O; C7:+0;",
      // fforum #39, 26 empties: a wipe-out.
      "O-OOOO--XOXXOX--XOOOXXX-XOOOXX--XOOXOX--XOXXX---X-XX------------ O; A8:+64; B1:+64; "
      "G1:+64; G5:+64; G6:+64; C8:+64; H3:+64; E8:+64; H4:+64;",
  };
  reversi::EndgameSolver solver(16);
  for (const char* line : kLines) {
    absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(line);
    ASSERT_TRUE(p.ok()) << p.status();
    solver.Clear();
    reversi::EndgameResult r = solver.Solve(p->game);
    ASSERT_TRUE(r.solved);
    EXPECT_EQ(r.score, p->best_score) << line;
    const std::string move = p->game.MoveToText(r.best_move);
    EXPECT_NE(std::find(p->best_moves.begin(), p->best_moves.end(), move), p->best_moves.end())
        << line << " played " << move;
  }
}

// FFO #45-#49 ship with the solver (the shared data stops at #44); too slow for a unit test to
// solve (a minute or more in all), they are checked by `ply-engine solve reversi`
// (engine/README.md).
TEST(Reversi, ShipsFfoPositionsFortyFiveToFortyNine) {
  auto positions =
      reversi::ReadObfFile(std::string(PLY_SOURCE_DIR) + "/engine/games/reversi/ffo45-49.obf");
  ASSERT_TRUE(positions.ok()) << positions.status();
  ASSERT_EQ(positions->size(), 5u);
  const int empties[] = {24, 24, 25, 25, 26};
  const int scores[] = {6, -8, 4, 28, 16};
  for (size_t i = 0; i < positions->size(); ++i) {
    EXPECT_EQ((*positions)[i].game.Empties(), empties[i]) << "FFO #" << 45 + i;
    EXPECT_EQ((*positions)[i].best_score, scores[i]) << "FFO #" << 45 + i;
  }
}

// A node budget stops the solve part-way (the root's null-window tests included): the result
// says it is not solved, and the same solver then finishes the position without a budget.
TEST(Reversi, EndgameSolveStopsAtItsNodeBudget) {
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38;");
  ASSERT_TRUE(p.ok()) << p.status();
  reversi::EndgameSolver solver(16);
  const reversi::EndgameResult stopped = solver.Solve(p->game, {.max_nodes = 100'000});
  EXPECT_FALSE(stopped.solved);
  EXPECT_LT(stopped.nodes, 200'000);
  const reversi::EndgameResult full = solver.Solve(p->game);
  ASSERT_TRUE(full.solved);
  EXPECT_EQ(full.score, 38);
  EXPECT_EQ(p->game.MoveToText(full.best_move), "a2");
}

// Every move listed for fforum #29 (20 empties) with its exact score, best or not: the value
// of the position after the move, solved from the opponent's side.
TEST(Reversi, SolvesTheScoreOfEveryListedMove) {
  const std::string line =
      "-OXXXX----OXXO--XXOOXOOOXXXOOXOOXXOOXOOOXXXXOO-XX-XXO----------- X; G2:+10; A1:+4; "
      "G6:-10; H2:-12; F8:-12; E8:-12; G7:-24; G1:-24; B2:-30; F7:-34;";
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(line);
  ASSERT_TRUE(p.ok()) << p.status();
  reversi::EndgameSolver solver(16);
  std::vector<std::string> items = absl::StrSplit(line.substr(line.find(';') + 1), ';');
  int checked = 0;
  for (std::string item : items) {
    item = std::string(absl::StripAsciiWhitespace(item));
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    ASSERT_NE(colon, std::string::npos) << item;
    // The table is kept from move to move: bounds from one solve must not spoil the next.
    Reversi g = p->game;
    absl::StatusOr<Reversi::Move> m = g.ParseMove(absl::AsciiStrToLower(item.substr(0, colon)));
    ASSERT_TRUE(m.ok()) << item;
    Reversi::UndoInfo undo;
    g.Make(*m, undo);
    const reversi::EndgameResult r = solver.Solve(g);
    ASSERT_TRUE(r.solved);
    EXPECT_EQ(-r.score, std::stoi(item.substr(colon + 1))) << item;
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

TEST(Reversi, SolveTablePrintsOneRowPerPositionAndTotals) {
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8:+18; H1:+12;");
  ASSERT_TRUE(p.ok());
  // The second copy claims a wrong score, which the table must flag.
  reversi::ObfPosition wrong = *p;
  wrong.best_score = 20;
  reversi::EndgameSolver solver(4);
  std::vector<std::string> lines;
  reversi::ObfTableTotals totals = reversi::SolveObfTable(
      {*p, wrong}, 1, solver, {}, [&](const std::string& line) { lines.push_back(line); });
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[1].find("+18 g8"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].find('!'), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find('!'), std::string::npos) << lines[2];
  EXPECT_EQ(lines[3].rfind("total: 2 positions", 0), 0u) << lines[3];
  EXPECT_EQ(totals.wrong, 1);
  EXPECT_GT(totals.nodes, 0);
}

TEST(Reversi, LevelsUseTheSolverNearTheEnd) {
  const std::vector<Difficulty> levels = Reversi::Levels();
  const Difficulty* hard = FindLevel(levels, "hard");
  ASSERT_NE(hard, nullptr);
  EXPECT_TRUE(hard->perfect);
  ASSERT_NE(FindLevel(levels, "perfect"), nullptr);
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8:+18; H1:+12;");
  ASSERT_TRUE(p.ok());
  auto r = Reversi::Solve(p->game, {.time_ms = 1000});
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->has_move);
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->score, 18);
  EXPECT_EQ(p->game.MoveToText(r->best_move), "g8");
  // Far from the end the solver declines and the search plays.
  Reversi start = Make();
  EXPECT_FALSE(Reversi::Solve(start, {.time_ms = 1000}).has_value());
}

// Win/loss/draw solves agree in sign with the exact scores of the FFO positions, a draw comes out
// exact, the move of a win keeps the win, and all of it costs fewer nodes than the exact solves.
TEST(Reversi, WinLossDrawSolveFindsTheSignWithFewerNodes) {
  std::vector<reversi::ObfPosition> positions;
  const char* const kLines[] = {
      // FFO #40, 20 empties: a win.
      "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38;",
      // fforum #35, 21 empties: a draw.
      "--XXX-----XXXX-OOOXXOOOOOOOOOOXO-OOXXXXO-OOOXXXO---XOXX---X----- O; C7:+0;",
  };
  for (const char* line : kLines) {
    absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(line);
    ASSERT_TRUE(p.ok()) << p.status();
    positions.push_back(*p);
  }
  // FFO #1-#19 (tests/data/reversi/ffo-1-19.txt) add losses (#18: -2) and more wins.
  const std::string path = test_data::Path("reversi/ffo-1-19.txt");
  auto more = reversi::ReadObfFile(path);
  ASSERT_TRUE(more.ok()) << "test data missing or malformed: " << more.status();
  ASSERT_EQ(more->size(), 19u) << path;
  positions.insert(positions.end(), more->begin(), more->end());
  reversi::EndgameSolver solver(16);
  int64_t exact_nodes = 0, wld_nodes = 0;
  int losses = 0;
  for (const reversi::ObfPosition& p : positions) {
    solver.Clear();
    const reversi::EndgameResult wld = solver.Solve(p.game, {}, reversi::SolveKind::kWinLossDraw);
    ASSERT_TRUE(wld.solved);
    wld_nodes += wld.nodes;
    const int sign = (p.best_score > 0) - (p.best_score < 0);
    EXPECT_EQ((wld.score > 0) - (wld.score < 0), sign) << p.game.Render();
    EXPECT_EQ(wld.win_loss_draw, sign != 0) << p.game.Render();
    if (sign == 0) {
      EXPECT_EQ(wld.score, 0);
    }
    if (sign > 0) {
      EXPECT_LE(wld.score, p.best_score);
      // The move found keeps the win: the opponent loses after it.
      Reversi child = p.game;
      Reversi::UndoInfo undo;
      child.Make(wld.best_move, undo);
      solver.Clear();
      const reversi::EndgameResult after = solver.Solve(child);
      ASSERT_TRUE(after.solved);
      EXPECT_LT(after.score, 0) << p.game.MoveToText(wld.best_move);
    }
    if (sign < 0) {
      ++losses;
      EXPECT_GE(wld.score, p.best_score);
    }
    solver.Clear();
    const reversi::EndgameResult exact = solver.Solve(p.game);
    ASSERT_TRUE(exact.solved);
    EXPECT_FALSE(exact.win_loss_draw);
    EXPECT_EQ(exact.score, p.best_score);
    exact_nodes += exact.nodes;
  }
  EXPECT_GT(losses, 0);
  EXPECT_LT(wld_nodes * 2, exact_nodes);
}

// Reversi's levels `a` and `b`, pointing into a list kept for the whole test program; the
// calling test stops (through ASSERT_NO_FATAL_FAILURE) when either is missing.
void FindTwoLevels(std::string_view a, std::string_view b, const Difficulty*& first,
                   const Difficulty*& second) {
  static const std::vector<Difficulty> levels = Reversi::Levels();
  first = FindLevel(levels, a);
  second = FindLevel(levels, b);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
}

// The text the ladder's levels fingerprint takes from each level (registry/ladder_data.h): the
// solve plan at the budget, so a change of the thresholds shows up as a stale ladder file.
TEST(Reversi, BudgetPlanTextIsTheSolvePlanOfLevelsThatSolve) {
  const Difficulty* hard = nullptr;
  const Difficulty* medium = nullptr;
  ASSERT_NO_FATAL_FAILURE(FindTwoLevels("hard", "medium", hard, medium));
  EXPECT_EQ(Reversi::BudgetPlanText(*hard, hard->time_ms * 100, 0), "exact<=11 wld<=13");
  EXPECT_EQ(Reversi::BudgetPlanText(*hard, 0, hard->time_ms), "exact<=17 wld<=18");
  for (int64_t nodes : {1'000, 30'000, 1'000'000, 100'000'000}) {
    const Reversi::SolvePlan plan = Reversi::PlanSolve({.max_nodes = nodes}, true);
    EXPECT_EQ(Reversi::BudgetPlanText(*hard, nodes, 0),
              absl::StrFormat("exact<=%d wld<=%d", plan.exact_empties, plan.win_loss_draw_empties));
  }
  EXPECT_EQ(Reversi::BudgetPlanText(*medium, hard->time_ms * 100, 0), "");
}

// How far the solver reaches in each level's budget (the measured node counts of endgame.cc):
// pinned so that a change of the table or of the budget rule is made on purpose.
TEST(Reversi, SolverReachGrowsWithTheBudget) {
  const Difficulty* hard = nullptr;
  const Difficulty* perfect = nullptr;
  ASSERT_NO_FATAL_FAILURE(FindTwoLevels("hard", "perfect", hard, perfect));
  const Reversi::SolvePlan hard_plan = Reversi::PlanSolve({.time_ms = hard->time_ms}, true);
  EXPECT_EQ(hard_plan.exact_empties, 17);
  EXPECT_EQ(hard_plan.win_loss_draw_empties, 18);
  EXPECT_EQ(hard_plan.time_ms, hard->time_ms * 3 / 5);
  const Reversi::SolvePlan perfect_plan = Reversi::PlanSolve({.time_ms = perfect->time_ms}, true);
  EXPECT_EQ(perfect_plan.exact_empties, 20);
  EXPECT_EQ(perfect_plan.win_loss_draw_empties, 21);
  // The rating ladder's node budgets (100 nodes a millisecond).
  const Reversi::SolvePlan ladder_hard =
      Reversi::PlanSolve({.max_nodes = hard->time_ms * 100}, true);
  EXPECT_EQ(ladder_hard.max_nodes, hard->time_ms * 100 * 3 / 5);
  EXPECT_EQ(ladder_hard.exact_empties, 11);
  const Reversi::SolvePlan ladder_perfect =
      Reversi::PlanSolve({.max_nodes = perfect->time_ms * 100}, true);
  EXPECT_EQ(ladder_perfect.exact_empties, 15);
  // The tighter of a node and a clock budget rules; no budget reaches the table's end.
  EXPECT_EQ(
      Reversi::PlanSolve({.max_nodes = hard->time_ms * 100, .time_ms = perfect->time_ms}, true)
          .exact_empties,
      11);
  const Reversi::SolvePlan unlimited = Reversi::PlanSolve({}, true);
  EXPECT_GE(unlimited.exact_empties, perfect_plan.exact_empties);
  EXPECT_EQ(unlimited.max_nodes, 0);
  EXPECT_EQ(unlimited.time_ms, 0);
  // Every budget reaches further for win/loss/draw than exactly, never less.
  for (int64_t nodes = 1000; nodes < 1'000'000'000; nodes *= 3) {
    const Reversi::SolvePlan plan = Reversi::PlanSolve({.max_nodes = nodes}, true);
    EXPECT_GE(plan.win_loss_draw_empties, plan.exact_empties) << nodes;
    EXPECT_LE(plan.exact_empties, Reversi::PlanSolve({.max_nodes = nodes * 3}, true).exact_empties);
  }
}

// `hard` at a known FFO position within its reach returns the exact result through the bot's
// own path (the adapter, as ply-bot calls it), within its node budget.
TEST(Reversi, HardSolvesAnFfoPositionExactlyWithinItsNodeBudget) {
  // fforum #13, 16 empties.
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "--XXXXX--OOOXX---OOOXXXX-OXOXOXXOXXXOXXX--XOXOXX--OXOOO--OOOOO-- X; B7:+14;");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<Difficulty> levels = Reversi::Levels();
  const Difficulty hard = *FindLevel(levels, "hard");
  // Its clock and a node budget of 10,000 a millisecond on top, so that the count is checked.
  const int64_t budget = hard.time_ms * 10'000;
  ASSERT_LE(p->game.Empties(),
            Reversi::PlanSolve({.max_nodes = budget, .time_ms = hard.time_ms}, true).exact_empties);
  GameAdapter<Reversi> game(p->game, FindGame("reversi"));
  absl::StatusOr<SearchReport> report =
      game.ChooseMove({.level = hard, .max_nodes = budget}, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->exact);
  EXPECT_EQ(report->score, p->best_score);
  EXPECT_NE(std::find(p->best_moves.begin(), p->best_moves.end(), report->move),
            p->best_moves.end())
      << report->move;
  EXPECT_LE(report->nodes, budget);
}

// A win proven by the win/loss/draw solve (a budget that reaches 20 empties for the outcome but
// not for the margin) is reported as a proven win, not as an exact "+1": FFO #40 wins by 38.
TEST(Reversi, AWinLossDrawWinIsReportedAsAProvenOutcomeNotAMargin) {
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38;");
  ASSERT_TRUE(p.ok()) << p.status();
  const int64_t budget = 40'000'000;
  const Reversi::SolvePlan plan = Reversi::PlanSolve({.max_nodes = budget}, true);
  ASSERT_LT(plan.exact_empties, p->game.Empties());
  ASSERT_GE(plan.win_loss_draw_empties, p->game.Empties());
  Difficulty perfect = *FindLevel(Reversi::Levels(), "perfect");
  perfect.time_ms = 0;
  GameAdapter<Reversi> game(p->game, FindGame("reversi"));
  absl::StatusOr<SearchReport> report =
      game.ChooseMove({.level = perfect, .max_nodes = budget}, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->exact);
  EXPECT_TRUE(report->outcome_only);
  EXPECT_EQ(report->score, 1);
  EXPECT_EQ(report->ScoreText(), "win (proven)");
  // The move keeps the win.
  ASSERT_TRUE(game.Play(report->move).ok());
  reversi::EndgameSolver solver(16);
  EXPECT_LT(solver.Solve(game.game()).score, 0) << report->move;
  // The exact solve of the same position keeps its margin.
  GameAdapter<Reversi> exact(p->game, FindGame("reversi"));
  report = exact.ChooseMove({.level = perfect}, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->exact);
  EXPECT_FALSE(report->outcome_only);
  EXPECT_EQ(report->ScoreText(), "win by 38");
}

// A solve that cannot finish gives the move back to the search cleanly: stopped before it
// starts, Reversi::Solve returns no move but what it spent, and the level still answers with a
// legal move from the search.
TEST(Reversi, UnfinishedSolveFallsBackToTheSearch) {
  absl::StatusOr<reversi::ObfPosition> p = reversi::ParseObfLine(
      "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38;");
  ASSERT_TRUE(p.ok()) << p.status();
  std::atomic<bool> stop{true};
  auto r = Reversi::Solve(p->game, {.stop = &stop});
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_move);
  EXPECT_TRUE(r->stopped);
  EXPECT_LE(r->nodes, 100);  // the stop is seen at the first deep node

  const std::vector<Difficulty> levels = Reversi::Levels();
  Difficulty perfect = *FindLevel(levels, "perfect");
  perfect.time_ms = 0;
  GameAdapter<Reversi> game(p->game, FindGame("reversi"));
  absl::StatusOr<SearchReport> report =
      game.ChooseMove({.level = perfect, .max_nodes = 1'000'000, .stop = &stop}, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->exact);
  const std::vector<std::string> legal = game.LegalMoves();
  EXPECT_NE(std::find(legal.begin(), legal.end(), report->move), legal.end()) << report->move;

  // A node budget the table says is too small for this position: the solver is not tried and
  // the search plays within the budget.
  ASSERT_GT(p->game.Empties(),
            Reversi::PlanSolve({.max_nodes = 20'000}, true).win_loss_draw_empties);
  EXPECT_FALSE(Reversi::Solve(p->game, {.max_nodes = 20'000}).has_value());
  GameAdapter<Reversi> small(p->game, FindGame("reversi"));
  report = small.ChooseMove({.level = perfect, .max_nodes = 20'000}, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->exact);
  EXPECT_LE(report->nodes, 20'000);
}

}  // namespace
}  // namespace ply
