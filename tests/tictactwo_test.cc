#include "engine/games/tictactwo/tictactwo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <vector>

#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "tests/conformance.h"
#include "tests/play_moves.h"

namespace ply {
namespace {

TicTacTwo MakeGame(const GameOptions& options = {}) { return *TicTacTwo::Create(options); }

using testing_util::PlayMoves;

std::vector<std::string> LegalTexts(const TicTacTwo& g) {
  MoveListOf<TicTacTwo> moves;
  g.GenerateMoves(moves);
  std::vector<std::string> out;
  for (auto m : moves) out.push_back(g.MoveToText(m));
  std::sort(out.begin(), out.end());
  return out;
}

// Plays quiet moves (the first generated one that neither ends the game nor repeats a position)
// until ply `until`, and returns their texts.
std::vector<std::string> QuietLine(TicTacTwo& g, int until) {
  std::vector<std::string> texts;
  std::set<uint64_t> seen = {g.Hash()};
  while (g.ply() < until) {
    MoveListOf<TicTacTwo> moves;
    g.GenerateMoves(moves);
    bool played = false;
    for (auto m : moves) {
      TicTacTwo::UndoInfo u;
      g.Make(m, u);
      if (g.GetOutcome() == Outcome::kOngoing && seen.insert(g.Hash()).second) {
        texts.push_back(g.MoveToText(m));
        played = true;
        break;
      }
      g.Unmake(m, u);
    }
    EXPECT_TRUE(played) << g.Render();
    if (!played) break;
  }
  return texts;
}

// A deliberately plain second implementation of the same rules: a grid of characters, every
// rule checked from scratch, moves as text and the whole history of positions as strings. It
// shares no code with the engine, so agreeing perft counts pin down both.
class NaiveTicTacTwo {
 public:
  NaiveTicTacTwo(int board, int grid, int line, int pieces, int unlock, int max_plies)
      : n_(board), g_(grid), line_(line), pieces_(pieces), unlock_(unlock), max_plies_(max_plies) {
    cells_.assign(n_ * n_, '.');
    row_ = col_ = (n_ - g_) / 2;
    history_.push_back(Key());
  }

  std::vector<std::string> Moves() const {
    std::vector<std::string> out;
    if (over_) return out;
    const char me = Mark();
    std::vector<std::string> empty_in_grid;
    for (int r = row_; r < row_ + g_; ++r) {
      for (int c = col_; c < col_ + g_; ++c) {
        if (At(r, c) == '.') empty_in_grid.push_back(Cell(r, c));
      }
    }
    if (Count(me) < pieces_) out = empty_in_grid;
    if (Count('X') >= unlock_ && Count('O') >= unlock_) {
      for (int r = 0; r < n_; ++r) {
        for (int c = 0; c < n_; ++c) {
          if (At(r, c) != me) continue;
          for (const std::string& to : empty_in_grid) out.push_back(Cell(r, c) + "-" + to);
        }
      }
      const char* names[8] = {"n", "ne", "e", "se", "s", "sw", "w", "nw"};
      const int dr[8] = {-1, -1, 0, 1, 1, 1, 0, -1};
      const int dc[8] = {0, 1, 1, 1, 0, -1, -1, -1};
      for (int d = 0; d < 8; ++d) {
        int r = row_ + dr[d], c = col_ + dc[d];
        if (r >= 0 && c >= 0 && r + g_ <= n_ && c + g_ <= n_)
          out.push_back(std::string("g:") + names[d]);
      }
    }
    return out;
  }

  NaiveTicTacTwo After(const std::string& move) const {
    NaiveTicTacTwo next = *this;
    const char me = Mark();
    bool grid_move = false;
    if (move.rfind("g:", 0) == 0) {
      grid_move = true;
      std::string d = move.substr(2);
      if (d.find('n') != std::string::npos) --next.row_;
      if (d.find('s') != std::string::npos) ++next.row_;
      if (d.find('e') != std::string::npos) ++next.col_;
      if (d.find('w') != std::string::npos) --next.col_;
    } else if (move.size() == 5) {
      next.Set(move.substr(0, 2), '.');
      next.Set(move.substr(3, 2), me);
    } else {
      next.Set(move, me);
      next.history_.clear();  // a placement can never be undone
    }
    ++next.ply_;
    next.history_.push_back(next.Key());
    const char them = me == 'X' ? 'O' : 'X';
    if (next.HasLine(me)) {
      next.over_ = true;
      next.winner_ = me;
    } else if (grid_move && next.HasLine(them)) {
      next.over_ = true;
      next.winner_ = them;
    } else if (std::count(next.history_.begin(), next.history_.end(), next.Key()) >= 3 ||
               next.ply_ >= max_plies_) {
      next.over_ = true;
    }
    return next;
  }

  uint64_t Perft(int depth) const {
    if (over_ || depth == 0) return over_ && depth > 0 ? 0 : 1;
    // Every move leads to one position, finished or not.
    if (depth == 1) return Moves().size();
    uint64_t total = 0;
    for (const std::string& m : Moves()) total += After(m).Perft(depth - 1);
    return total;
  }

  bool over() const { return over_; }
  char winner() const { return winner_; }

 private:
  char Mark() const { return ply_ % 2 == 0 ? 'X' : 'O'; }
  char At(int r, int c) const { return cells_[r * n_ + c]; }
  void Set(const std::string& cell, char v) { cells_[(cell[1] - '1') * n_ + cell[0] - 'a'] = v; }
  static std::string Cell(int r, int c) {
    return {static_cast<char>('a' + c), static_cast<char>('1' + r)};
  }
  int Count(char p) const { return static_cast<int>(std::count(cells_.begin(), cells_.end(), p)); }
  std::string Key() const {
    return cells_ + "/" + std::to_string(row_) + "," + std::to_string(col_) + "/" + Mark();
  }
  bool HasLine(char p) const {
    const int dr[4] = {0, 1, 1, 1};
    const int dc[4] = {1, 0, 1, -1};
    for (int r = row_; r < row_ + g_; ++r) {
      for (int c = col_; c < col_ + g_; ++c) {
        for (int d = 0; d < 4; ++d) {
          int k = 0;
          while (k < line_) {
            int rr = r + dr[d] * k, cc = c + dc[d] * k;
            if (rr < row_ || rr >= row_ + g_ || cc < col_ || cc >= col_ + g_) break;
            if (At(rr, cc) != p) break;
            ++k;
          }
          if (k == line_) return true;
        }
      }
    }
    return false;
  }

  int n_, g_, line_, pieces_, unlock_, max_plies_;
  std::string cells_;
  int row_, col_;
  int ply_ = 0;
  bool over_ = false;
  char winner_ = '-';
  std::vector<std::string> history_;
};

NaiveTicTacTwo NaiveAfter(NaiveTicTacTwo g, const std::vector<std::string>& moves) {
  for (const std::string& m : moves) {
    std::vector<std::string> legal = g.Moves();
    EXPECT_NE(std::find(legal.begin(), legal.end(), m), legal.end()) << m;
    g = g.After(m);
  }
  return g;
}

struct PerftCase {
  const char* name;
  GameOptions options;
  int naive_args[6];
  std::vector<std::string> prefix;
  uint64_t expected[4];
  // After the prefix, quiet moves up to this ply (see QuietLine).
  int quiet_until = 0;
};

const std::vector<PerftCase>& PerftCases() {
  static const auto* cases = new std::vector<PerftCase>{
      {"classic start", {}, {5, 3, 3, 4, 2, 100}, {}, {9, 72, 504, 3024}},
      {"big start", {{"preset", "big"}}, {7, 4, 4, 6, 2, 100}, {}, {16, 240, 3360, 43680}},
      {"classic after the unlock",
       {},
       {5, 3, 3, 4, 2, 100},
       {"c3", "b2", "d4", "c2"},
       {23, 521, 11695, 256387}},
      {"classic, position seen twice",
       {},
       {5, 3, 3, 4, 2, 100},
       {"c3", "b2", "d4", "c2", "g:e", "g:w"},
       // Lower than above from depth 3 on: g:e g:w would repeat the position a third time.
       {23, 521, 11511, 252127}},
      {"classic near the move limit",
       {{"max_plies", "20"}},
       {5, 3, 3, 4, 2, 20},
       {"c3", "b2", "d4", "c2"},
       // Depth 4 would pass ply 20: every line has ended in a draw by then.
       {17, 320, 5870, 0},
       /*quiet_until=*/17},
      {"big after the unlock",
       {{"preset", "big"}},
       {7, 4, 4, 6, 2, 100},
       {"c3", "d4", "e5", "c4", "g:n"},
       {44, 1895, 84686, 3728352}},
  };
  return *cases;
}

TEST(TicTacTwo, PerftAgreesWithANaiveImplementation) {
  for (const PerftCase& c : PerftCases()) {
    TicTacTwo g = MakeGame(c.options);
    PlayMoves(g, c.prefix);
    std::vector<std::string> line = c.prefix;
    for (const std::string& m : QuietLine(g, c.quiet_until)) line.push_back(m);
    const int* a = c.naive_args;
    NaiveTicTacTwo naive = NaiveAfter(NaiveTicTacTwo(a[0], a[1], a[2], a[3], a[4], a[5]), line);
    std::vector<std::string> naive_moves = naive.Moves();
    std::sort(naive_moves.begin(), naive_moves.end());
    EXPECT_EQ(LegalTexts(g), naive_moves) << c.name;
    for (int d = 1; d <= 4; ++d) {
      uint64_t count = Perft(g, d);
      EXPECT_EQ(count, naive.Perft(d)) << c.name << ", depth " << d;
      EXPECT_EQ(count, c.expected[d - 1]) << c.name << ", depth " << d;
    }
  }
}

TEST(TicTacTwo, PassesConformanceOnEveryPreset) {
  testing::RunConformance(MakeGame(), 200, 1);
  testing::RunConformance(MakeGame({{"preset", "big"}}), 100, 2);
  testing::RunConformance(MakeGame({{"max_plies", "20"}}), 100, 3);
  testing::RunConformance(MakeGame({{"board", "4"}, {"unlock", "1"}}), 100, 4);
  testing::RunConformance(
      MakeGame({{"board", "8"}, {"grid", "5"}, {"line", "3"}, {"pieces", "12"}}), 30, 5);
}

TEST(TicTacTwo, PresetsAndOptions) {
  TicTacTwo classic = MakeGame();
  EXPECT_EQ(classic.board(), 5);
  EXPECT_EQ(classic.grid(), 3);
  TicTacTwo big = MakeGame({{"preset", "big"}});
  EXPECT_EQ(big.board(), 7);
  EXPECT_EQ(big.grid(), 4);
  EXPECT_EQ(big.EffectiveOptions().at("line"), "4");
  EXPECT_EQ(big.EffectiveOptions().at("pieces"), "6");
  EXPECT_TRUE(MakeGame(big.EffectiveOptions()) == big);
  EXPECT_EQ(MakeGame({{"preset", "big"}, {"board", "6"}}).board(), 6);
  EXPECT_FALSE(TicTacTwo::Create({{"preset", "huge"}}).ok());
  EXPECT_FALSE(TicTacTwo::Create({{"board", "9"}}).ok());
  EXPECT_FALSE(TicTacTwo::Create({{"board", "4"}, {"grid", "5"}}).ok());
  EXPECT_FALSE(TicTacTwo::Create({{"line", "4"}}).ok());
  EXPECT_FALSE(TicTacTwo::Create({{"pieces", "5"}}).ok());
  EXPECT_FALSE(TicTacTwo::Create({{"unlock", "0"}}).ok());
  EXPECT_FALSE(TicTacTwo::Create({{"max_plies", "1000"}}).ok());
}

TEST(TicTacTwo, NotationRoundTripsAndRejectsBadText) {
  TicTacTwo g = MakeGame();
  PlayMoves(g, {"c3", "b2", "d4", "c2"});
  EXPECT_EQ(g.MoveToText(*g.ParseMove("b3")), "b3");
  EXPECT_EQ(g.MoveToText(*g.ParseMove("c3-d2")), "c3-d2");
  EXPECT_EQ(g.MoveToText(*g.ParseMove("g:ne")), "g:ne");
  EXPECT_EQ(*g.ParseMove(" GRID:NE "), *g.ParseMove("g:ne"));
  EXPECT_EQ(*g.ParseMove("C3 - D2"), *g.ParseMove("c3-d2"));
  for (const char* bad : {"", "f1", "a6", "z", "b2-", "-b2", "b2-c3-d4", "g:up", "g:", "grid"}) {
    EXPECT_EQ(g.ParseMove(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  // Well formed but illegal here.
  for (const char* illegal : {"a1", "c3", "b2-d2", "e5-d2", "c3-e3", "c3-b2"}) {
    auto m = g.ParseMove(illegal);
    EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition) << illegal;
    EXPECT_FALSE(m.status().message().empty());
  }
}

TEST(TicTacTwo, OnlyPlacementsBeforeTheUnlock) {
  TicTacTwo g = MakeGame();
  for (const char* text : {"c3", "b2", "d4"}) {
    for (const std::string& m : LegalTexts(g)) EXPECT_EQ(m.size(), 2u) << m;
    EXPECT_EQ(g.ParseMove("g:n").status().code(), absl::StatusCode::kFailedPrecondition);
    PlayMoves(g, {text});
  }
  EXPECT_EQ(g.ParseMove("b2-c2").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(g.Unlocked());
  PlayMoves(g, {"c2"});
  EXPECT_TRUE(g.Unlocked());
  EXPECT_TRUE(g.ParseMove("g:n").ok());
  EXPECT_TRUE(g.ParseMove("c3-b3").ok());
  EXPECT_TRUE(g.ParseMove("b3").ok());
}

TEST(TicTacTwo, PlacementsStopWhenTheHandIsEmpty) {
  TicTacTwo g = MakeGame();
  // Quiet play places first, so by ply 8 both hands are empty.
  QuietLine(g, 8);
  ASSERT_EQ(std::popcount(g.pieces(0)), 4);
  ASSERT_EQ(std::popcount(g.pieces(1)), 4);
  for (const std::string& m : LegalTexts(g)) EXPECT_NE(m.size(), 2u) << m;
  const uint64_t empty = g.grid_mask() & ~(g.pieces(0) | g.pieces(1));
  ASSERT_NE(empty, 0u);
  const int cell = std::countr_zero(empty);
  const std::string text = {static_cast<char>('a' + cell % 5), static_cast<char>('1' + cell / 5)};
  EXPECT_EQ(g.ParseMove(text).status().code(), absl::StatusCode::kFailedPrecondition) << text;
}

TEST(TicTacTwo, TheGridCannotLeaveTheBoard) {
  TicTacTwo g = MakeGame();
  PlayMoves(g, {"c3", "b2", "d4", "c2", "g:nw"});
  EXPECT_EQ(g.grid_row(), 0);
  EXPECT_EQ(g.grid_col(), 0);
  for (const char* dir : {"g:n", "g:nw", "g:w", "g:ne", "g:sw"}) {
    EXPECT_EQ(g.ParseMove(dir).status().code(), absl::StatusCode::kFailedPrecondition) << dir;
  }
  std::vector<std::string> legal = LegalTexts(g);
  std::vector<std::string> grid_moves;
  for (const std::string& m : legal) {
    if (m.starts_with("g:")) grid_moves.push_back(m);
  }
  EXPECT_EQ(grid_moves, (std::vector<std::string>{"g:e", "g:s", "g:se"}));
  EXPECT_NE(g.Render().find("1 [. . .]. ."), std::string::npos) << g.Render();
}

TEST(TicTacTwo, OnlyLinesInsideTheGridCount) {
  TicTacTwo g = MakeGame();
  // X gets a2 b2 c2, but a2 lies outside the grid b2-d4 when c2 completes the row.
  PlayMoves(g, {"b2", "d4", "d3", "d2", "g:w", "c4", "a2", "g:e", "c2"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing) << g.Render();
  // O moves the grid back over X's row: only X has a line, so X wins.
  PlayMoves(g, {"g:w"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kWin);
  EXPECT_EQ(g.Status().winner, 0);
}

TEST(TicTacTwo, AGridMoveThatMakesLinesForBothWinsForTheMover) {
  TicTacTwo g = MakeGame();
  // X ends with a2 b2 c2 d3 and O with a4 b4 c4 d2, the grid on b2-d4 (a2 and a4 outside it).
  PlayMoves(g, {"b2", "b4", "d3", "d2", "g:w", "a4", "a2", "g:e", "c2", "c4"});
  ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing) << g.Render();
  // Moving the grid west puts both rows inside it.
  PlayMoves(g, {"g:w"});
  EXPECT_TRUE(g.HasLine(g.pieces(1), g.grid_row() * g.board() + g.grid_col()));
  EXPECT_EQ(g.GetOutcome(), Outcome::kLoss) << g.Render();
  EXPECT_EQ(g.Status().winner, 0);
}

TEST(TicTacTwo, ThreefoldRepetitionDraws) {
  TicTacTwo g = MakeGame();
  PlayMoves(g, {"c3", "b2", "d4", "c2", "g:e", "g:w", "g:e"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
  PlayMoves(g, {"g:w"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kDraw);
  EXPECT_STREQ(g.Status().reason, "threefold repetition");
}

TEST(TicTacTwo, SearchEscapesALostPositionByRepetition) {
  TicTacTwo g = MakeGame();
  PlayMoves(g, {"c4", "b3", "d4", "c2", "c4-c3", "d2", "b4", "g:n"});
  // The first time here X is lost.
  Searcher<TicTacTwo> s(1);
  auto lost = s.Search(g, {.max_depth = 6});
  EXPECT_LE(lost.score, -kMateThreshold) << g.Render();
  // The second time, g:s brings back the position after b4 for the third time: a draw. The
  // same searcher (and transposition table) must see it.
  PlayMoves(g, {"g:s", "g:n"});
  auto drawn = s.Search(g, {.max_depth = 6});
  EXPECT_EQ(g.MoveToText(drawn.best_move), "g:s");
  EXPECT_EQ(drawn.score, 0);
  EXPECT_TRUE(drawn.exact);
}

TEST(TicTacTwo, TheHashTellsARepeatedPositionApart) {
  // The second time round the same position is one repetition closer to a draw, so the
  // transposition table must not reuse what it learned the first time.
  TicTacTwo g = MakeGame();
  PlayMoves(g, {"c3", "b2", "d4", "c2"});
  const uint64_t first = g.Hash();
  PlayMoves(g, {"g:e", "g:w"});
  const uint64_t second = g.Hash();
  EXPECT_NE(first, second);
  TicTacTwo fresh = MakeGame();
  PlayMoves(fresh, {"d4", "c2", "c3", "b2"});
  EXPECT_EQ(fresh.Hash(), first) << "the same first occurrence by another move order";
  // A placement can never be undone, so it starts the count afresh.
  PlayMoves(g, {"b3", "d3"});
  TicTacTwo other = MakeGame();
  PlayMoves(other, {"c3", "b2", "d4", "c2", "b3", "d3"});
  EXPECT_EQ(g.Hash(), other.Hash());
}

TEST(TicTacTwo, TheMoveLimitEndsEveryGame) {
  TicTacTwo g = MakeGame({{"max_plies", "20"}});
  // Quiet moves to new positions, so that only the limit can end the game.
  QuietLine(g, 19);
  ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing);
  MoveListOf<TicTacTwo> moves;
  g.GenerateMoves(moves);
  TicTacTwo::UndoInfo u;
  g.Make(moves[0], u);
  EXPECT_EQ(g.ply(), 20);
  EXPECT_EQ(g.GetOutcome(), Outcome::kDraw);
  EXPECT_STREQ(g.Status().reason, "move limit");
}

TEST(TicTacTwo, SearchTakesAWinInOneAndBlocks) {
  Searcher<TicTacTwo> s(1);
  // X: b2 c2, O: b4 d4; X to move completes row 2 at d2.
  TicTacTwo win = MakeGame();
  PlayMoves(win, {"b2", "b4", "c2", "d4"});
  auto r = s.Search(win, {.max_depth = 4});
  EXPECT_EQ(win.MoveToText(r.best_move), "d2");
  EXPECT_EQ(r.score, WinIn(1));
  // X: b2 c2, O: d4; O has one piece placed, so only placements: it must block at d2.
  TicTacTwo block = MakeGame();
  PlayMoves(block, {"b2", "d4", "c2"});
  auto r2 = s.Search(block, {.max_depth = 4});
  EXPECT_EQ(block.MoveToText(r2.best_move), "d2");
}

}  // namespace
}  // namespace ply
