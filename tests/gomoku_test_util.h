// Positions and checks the Gomoku tests share: gomoku_test.cc (rules, evaluation, search, levels,
// the pbrain programs), gomoku_incremental_test.cc (the incremental line state and the leaves
// evaluated unplayed), gomoku_threats_test.cc (the threat searches: FindVcf and FindVct) and
// gomoku_root_test.cc (the checks SearchRoot makes around the search at the hard level's root).
#ifndef PLY_TESTS_GOMOKU_TEST_UTIL_H_
#define PLY_TESTS_GOMOKU_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "tests/play_moves.h"

namespace ply::gomoku_test {

inline Gomoku Make(const GameOptions& options = {}) { return *Gomoku::Create(options); }

using testing_util::PlayMoves;

// Plays one of the AI's candidate moves, picked by `rng`: games that look like the search's own.
inline void PlayRandomSearchMove(Gomoku& g, Rng& rng) {
  MoveList<Gomoku::Move, Gomoku::kMaxMoves> moves;
  g.GenerateSearchMoves(moves);
  Gomoku::UndoInfo u;
  g.Make(moves[static_cast<int>(rng.Below(moves.size()))], u);
}

// Positions from random games among the AI's candidates (so that fours and threes abound) on a
// `size` board, under the free-style rule and then the exact one: `games` games per rule, drawn
// from `seed` afresh for each rule, each up to 40 plies; `visit(g)` sees every position from ply
// `first_ply` on and must leave it as it found it.
template <class Visit>
void ForEachRandomPosition(int size, uint64_t seed, int games, int first_ply, Visit&& visit) {
  const std::string board = std::to_string(size);
  for (const GameOptions& options :
       std::vector<GameOptions>{{{"size", board}}, {{"size", board}, {"rule", "exact"}}}) {
    Rng rng(seed);
    for (int game = 0; game < games; ++game) {
      Gomoku g = Make(options);
      for (int ply = 0; ply < 40 && g.GetOutcome() == Outcome::kOngoing; ++ply) {
        if (ply >= first_ply) visit(g);
        // An ASSERT in `visit` ends only the visit: the walk stops here instead.
        if (::testing::Test::HasFatalFailure()) return;
        PlayRandomSearchMove(g, rng);
      }
    }
  }
}

// `visit(after)` for the position after each four (a four-three too) the side to move could make
// in `g`: there the other side must block, and any win of its own goes through the block.
template <class Visit>
void ForEachFourPlayed(const Gomoku& g, Visit&& visit) {
  MoveList<Gomoku::Move, Gomoku::kMaxMoves> all;
  g.GenerateMoves(all);
  for (Gomoku::Move m : all) {
    const Gomoku::CellClass c = g.ClassAt(g.SideToMove(), m);
    if (c != Gomoku::kMakesFour && c != Gomoku::kMakesFourThree) continue;
    Gomoku after = g;
    Gomoku::UndoInfo u;
    after.Make(m, u);
    visit(after);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

inline Gomoku Position(std::initializer_list<const char*> moves, const GameOptions& options = {}) {
  Gomoku g = Make(options);
  PlayMoves(g, moves);
  return g;
}

// A game from its moves in notation (every one legal).
inline Gomoku FromMoves(const std::vector<std::string>& moves, const GameOptions& options = {}) {
  Gomoku g = Make(options);
  for (const std::string& text : moves) {
    Gomoku::UndoInfo u;
    g.Make(*g.ParseMove(text), u);
  }
  return g;
}

// Black to move wins with seven fours in a row from i12 (a position from a game between noisy
// greedy players; the last four is an open one).
inline const std::vector<std::string>& SevenFoursMoves() {
  static const std::vector<std::string> moves = {
      "h8",  "f8",  "h9",  "g8",  "j10", "i7",  "g7",  "i9",  "i10", "h10", "j8",  "j5",
      "i6",  "e10", "j11", "j9",  "e12", "k12", "h7",  "h6",  "e7",  "e14", "f7",  "d7",
      "c6",  "f4",  "g5",  "f6",  "g10", "f11", "c8",  "c5",  "g12", "k14", "i14", "f12",
      "g11", "f10", "f9",  "g14", "f14", "g9",  "a10", "d12", "e8",  "l3"};
  return moves;
}

inline Gomoku SevenFoursPosition() { return FromMoves(SevenFoursMoves()); }

// Black to move with two open twos that cross at k8: playing there makes two open threes (no
// four anywhere, so no win by fours), and White, its stones in the corners, has no threat.
inline Gomoku DoubleThreePosition() {
  return Position({"h8", "a1", "i8", "o1", "k10", "a15", "k9", "o15"});
}

// Whether the side to move wins by the threats FindVct finds, checked against every reply and
// not only those FindVct tried: the attacker plays what FindVct gives, the defender every empty
// cell (counter-fours too), down to a win by fours (FindVcf, itself checked against a plain
// search in gomoku_threats_test) within `levels` threats. On a failure `line` receives the moves
// that refute it.
inline bool ThreatWinHolds(Gomoku& g, int levels, std::string* line) {
  if (g.FindVcf(Gomoku::kMaxVcfDepth, 1 << 16) != Gomoku::kNoMove) return true;
  if (levels == 0) return false;
  const Gomoku::Move win = g.FindVct(levels, 1 << 16);
  if (win == Gomoku::kNoMove) return false;
  Gomoku::UndoInfo u;
  g.Make(win, u);
  bool holds = true;
  if (g.GetOutcome() == Outcome::kOngoing) {
    MoveList<Gomoku::Move, Gomoku::kMaxMoves> all;
    g.GenerateMoves(all);
    for (Gomoku::Move reply : all) {
      g.Make(reply, u);
      // A counter-four is answered by the forced block at no cost in levels (the threat it
      // answered may still stand); there are only so many of them.
      bool counter_four = false;
      for (Gomoku::Move c : all) {
        counter_four |= g.IsEmpty(c) && g.ClassAt(1 - g.SideToMove(), c) == Gomoku::kMakesFive;
      }
      holds = g.GetOutcome() == Outcome::kOngoing &&
              ThreatWinHolds(g, counter_four ? levels : levels - 1, line);
      g.Unmake(reply, u);
      if (!holds) {
        *line = absl::StrCat(g.MoveToText(reply), " ", *line);
        break;
      }
    }
  }
  g.Unmake(win, u);
  if (!holds) *line = absl::StrCat(g.MoveToText(win), " ", *line);
  return holds;
}

}  // namespace ply::gomoku_test

#endif  // PLY_TESTS_GOMOKU_TEST_UTIL_H_
