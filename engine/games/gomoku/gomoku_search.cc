// What the alpha-beta search asks of a Gomoku position: its candidate moves (narrowed by the
// threats on the board, less the root moves SearchRoot proved lost), its evaluation and its
// move order. The board is in gomoku.cc and its tables in gomoku_tables.cc, the threat searches in
// gomoku_threats.cc and the root's checks in gomoku_root.cc.
#include <algorithm>

#include "engine/games/gomoku/gomoku.h"
#include "engine/games/gomoku/gomoku_tables.h"

namespace ply {
namespace {

// Move order: what a cell does for the side to move, and what it takes away from the opponent.
constexpr int kAttackRank[Gomoku::kClassCount] = {0, 2000, 3000, 5000, 20000, 100000, 2000000};
constexpr int kDefenceRank[Gomoku::kClassCount] = {0, 1500, 2000, 4000, 15000, 50000, 1000000};
// The same with the class's part of the cell's value (its bonus) folded in: the attacker's
// value counts once, the defender's 1.1 times (exactly: the bonuses are multiples of ten).
struct ClassOrder {
  constexpr ClassOrder() {
    for (int c = 0; c < Gomoku::kClassCount; ++c) {
      attack[c] = kAttackRank[c] + gomoku_tables::kClassBonus[c];
      defence[c] = kDefenceRank[c] + gomoku_tables::kClassBonus[c] * 11 / 10;
    }
  }
  int attack[Gomoku::kClassCount] = {};
  int defence[Gomoku::kClassCount] = {};
};
constexpr ClassOrder kClassOrder;
// A cell of no class for either side has no shape above a three in any direction, so its order
// (QuietOrderScore) stays below that of every cell of a class (GenerateCandidates relies on it).
static_assert([] {
  int most = 0;
  for (int shape = Gomoku::kDead; shape < Gomoku::kOpenThree; ++shape) {
    most = std::max<int>(most, gomoku_tables::kShapeValue[shape]);
  }
  return 4 * most + 4 * most * 11 / 10 < std::min(kAttackRank[1], kDefenceRank[1]);
}());
static_assert([] {
  for (int bonus : gomoku_tables::kClassBonus) {
    if (bonus % 10 != 0) return false;
  }
  return true;
}());

// Leaf scores for positions decided by the threats on the board (all below kMaxEval).
constexpr Score kWinNow = 15000;
constexpr Score kWinningFour = 13000;
constexpr Score kVcfWin = 12000;
constexpr Score kFourThree = 3000;
constexpr Score kDoubleThree = 800;
constexpr Score kEvalCap = 10000;

// The AI's VCF look-up at the leaves, where it stands in for the forcing moves the depth cut off
// (the one at every searched node is Gomoku::kVcfNodes).
constexpr int kLeafVcfNodes = 40;
// Candidates kept in a quiet position (no four or open three to answer).
constexpr int kMaxQuietMoves = 10;
// The stones' ranks (gomoku_tables.h) in evaluation points. Against AIWine at 300 ms a move, 60
// games at each of seeds 53 and 55 (docs/gomoku-engine.md, "Gomoku's evaluation"): the ranks times
// 4, 52.5 of 120; times 8, 23 of 60 (seed 53 only); times 2 plus the old evaluation (the empty
// cells' values, the side to move's less 0.7 of the opponent's), 25 of 60 (seed 53); the old one
// alone, 49 of 120. All within the noise of such matches.
constexpr int kStoneWeight = 4;

// The evaluation of a position with no forced line on the board: its threat bonus and the
// stones' ranks.
inline Score StoneEval(int threat, int32_t mine, int32_t theirs) {
  const int score = threat + kStoneWeight * (mine - theirs);
  return static_cast<Score>(std::clamp(score, -kEvalCap, kEvalCap));
}

}  // namespace

void Gomoku::ExcludeAtRoot(const MoveList<Move, kMaxMoves>& moves) {
  ClearRootExclusions();
  for (Move m : moves) SetBit(excluded_, m);
  excluded_stones_ = stones_;
  excluded_hash_ = hash_;
}

void Gomoku::GenerateSearchMoves(MoveList<Move, kMaxMoves>& moves) const {
  GenerateCandidates(moves);
  if (excluded_stones_ != stones_ || excluded_hash_ != hash_) return;
  int kept = 0;
  for (Move m : moves) {
    if (!HasBit(excluded_, m)) moves[kept++] = m;
  }
  // Never none: when every candidate is lost the search still picks among them.
  if (kept > 0) moves.truncate(kept);
}

void Gomoku::GenerateCandidates(MoveList<Move, kMaxMoves>& moves) const {
  if (stones_ == 0) {
    moves.push_back(CellAt(size_ / 2, size_ / 2));
    return;
  }
  const int me = SideToMove(), op = 1 - me;
  auto push = [&](Move c) { moves.push_back(c); };
  // A five wins at once; one is enough.
  if (class_count_[me][kMakesFive] > 0) {
    moves.push_back(FirstOfClass(me, kMakesFive));
    return;
  }
  // The opponent's five must be blocked.
  if (class_count_[op][kMakesFive] > 0) {
    ForEachCell(class_bits_[op][kMakesFive], push);
    return;
  }
  if (class_count_[me][kMakesWinningFour] > 0) {
    moves.push_back(FirstOfClass(me, kMakesWinningFour));
    return;
  }
  // Our cells that make a four (no five or winning four is left to make at this point).
  uint64_t fours[kWords];
  for (int w = 0; w < kWords; ++w) {
    fours[w] = class_bits_[me][kMakesFour][w] | class_bits_[me][kMakesFourThree][w];
  }
  const bool i_have_fours = HasFours(me);
  const bool they_have_fours = HasFours(op);
  Move path[kMaxVcfPath];
  if (i_have_fours) {
    int len = 0;
    if (ProbeVcf(me, kVcfNodes, path, len)) {
      moves.push_back(path[0]);
      return;
    }
  }
  // Against an open three (or a double four in the making) only a block or a four of our own
  // keeps the game going.
  if (class_count_[op][kMakesWinningFour] > 0) {
    uint64_t wanted[kWords];
    for (int w = 0; w < kWords; ++w) {
      wanted[w] = fours[w] | class_bits_[op][kMakesFour][w] | class_bits_[op][kMakesFourThree][w] |
                  class_bits_[op][kMakesWinningFour][w];
    }
    ForEachCell(wanted, push);
    return;
  }
  // If the opponent, on move, would win by continuous fours, answer on the cells of that line
  // or with a four of our own.
  if (they_have_fours) {
    int len = 0;
    if (ProbeVcf(op, kVcfNodes, path, len)) {
      uint64_t wanted[kWords];
      std::copy(fours, fours + kWords, wanted);
      for (int i = 0; i < len; ++i) SetBit(wanted, path[i]);
      ForEachCell(wanted, push);
      if (!moves.empty()) return;
    }
  }
  // A quiet position: the cells near the stones, the best kMaxQuietMoves of them by move order
  // (attack plus defence value). The rest are rarely good, and cutting them buys depth. Each
  // cell's order and index make one key, distinct for every cell (equal orders go to the higher
  // index), so the choice does not depend on how it is made: a sorted list of the best keys so
  // far, which most cells do not enter, costs a few compares a cell where a partial sort of all
  // of them cost a heap.
  static_assert(kCells <= (1 << 16));
  uint64_t best[kMaxQuietMoves];
  int kept = 0;
  auto consider = [&](uint64_t key) {
    if (kept == kMaxQuietMoves && key <= best[kept - 1]) return;
    int i = kept < kMaxQuietMoves ? kept++ : kept - 1;
    for (; i > 0 && best[i - 1] < key; --i) best[i] = best[i - 1];
    best[i] = key;
  };
  // Those of a class for either side first: their class ranks put them above every cell of
  // none (QuietOrderScore), which are most of the cells and need only their line sums, and none
  // of which can displace them once ten are kept.
  uint64_t classed[kWords] = {};
  for (int c = kMakesOpenThree; c < kClassCount; ++c) {
    for (int w = 0; w < kWords; ++w) classed[w] |= class_bits_[me][c][w] | class_bits_[op][c][w];
  }
  for (int w = 0; w < kWords; ++w) classed[w] &= near_bits_[w];
  ForEachCell(classed,
              [&](Move c) { consider(static_cast<uint64_t>(MoveOrderScore(c)) << 16 | c); });
  if (kept < kMaxQuietMoves) {
    uint64_t quiet[kWords];
    for (int w = 0; w < kWords; ++w) quiet[w] = near_bits_[w] & ~classed[w];
    ForEachCell(quiet,
                [&](Move c) { consider(static_cast<uint64_t>(QuietOrderScore(c)) << 16 | c); });
  }
  for (int i = 0; i < kept; ++i) moves.push_back(static_cast<Move>(best[i] & 0xffff));
}

// EvaluateAfter (below) makes the same decisions from the counts after a move: a change here
// is a change there (EvaluateAfterMatchesPlayingTheMove compares them).
Score Gomoku::Evaluate() const {
  const int me = SideToMove(), op = 1 - me;
  if (class_count_[me][kMakesFive] > 0) return kWinNow;
  if (class_count_[op][kMakesFive] >= 2) return -kWinNow;
  Move path[kMaxVcfPath];
  Score threat = 0;
  if (class_count_[op][kMakesFive] == 0) {
    if (class_count_[me][kMakesWinningFour] > 0) return kWinningFour;
    if (HasFours(me)) {
      int len = 0;
      if (ProbeVcf(me, kLeafVcfNodes, path, len)) return kVcfWin;
    }
    if (class_count_[me][kMakesFourThree] > 0) {
      threat = kFourThree;
    } else if (class_count_[me][kMakesDoubleThree] > 0 && !HasFours(op)) {
      threat = kDoubleThree;
    }
  } else if (HasFours(op) || class_count_[op][kMakesWinningFour] > 0) {
    // The block is forced; a line of fours the opponent has after it is lost at the horizon
    // (when the block is a four of ours, that line starts by blocking it with a four).
    const Move block = FirstOfClass(op, kMakesFive);
    // Played and taken back on this game, as ProbeVcf does.
    Gomoku& self = const_cast<Gomoku&>(*this);
    self.PlaceThreat(block, me);
    int len = 0;
    const bool lost = ProbeVcf(op, kLeafVcfNodes, path, len);
    self.RemoveThreat(block, me);
    if (lost) return -kVcfWin;
  }
  return StoneEval(threat, stone_score_[me], stone_score_[op]);
}

bool Gomoku::EvaluateAfter(Move m, Score& eval) const {
  const int p = SideToMove(), me = 1 - p;
  // The leaves that end the game, or where `p` has a five cell to block (a VCF probe after the
  // block), are played: `p` has a five cell after `m` only when it had one or `m` makes a four.
  const uint8_t mine = class_[p][m];
  if (stones_ + 1 == size_ * size_ || class_count_[p][kMakesFive] > 0 || mine == kMakesFour ||
      mine >= kMakesFourThree) {
    return false;
  }
  LeafCounts after;
  PeekLines(m, p, after);
  // What Evaluate reads, in its order, where `p` has no five cell to block (which the test
  // above rules out; checked again rather than trusted). Its VCF probe is answered from the
  // memo, or the leaf is played.
  const auto& count = after.count;
  if (count[p][kMakesFive] > 0) return false;
  if (count[me][kMakesFive] > 0) {
    eval = kWinNow;
    return true;
  }
  if (count[me][kMakesWinningFour] > 0) {
    eval = kWinningFour;
    return true;
  }
  if (count[me][kMakesFour] + count[me][kMakesFourThree] > 0) {
    bool won = false;
    if (!RecallVcf(HashAfter(m), me, kLeafVcfNodes, won)) return false;
    if (won) {
      eval = kVcfWin;
      return true;
    }
  }
  int threat = 0;
  if (count[me][kMakesFourThree] > 0) {
    threat = kFourThree;
  } else if (count[me][kMakesDoubleThree] > 0 &&
             count[p][kMakesFour] + count[p][kMakesFourThree] == 0) {
    threat = kDoubleThree;
  }
  eval = StoneEval(threat, after.stone_score[me], after.stone_score[p]);
  return true;
}

inline int Gomoku::QuietOrderScore(Move cell) const {
  // A cell's value for a player is its shapes' values (the upper half of its line sum) plus its
  // class's bonus (in kClassOrder, MoveOrderScore's part); the defender's counts 1.1 times.
  const int me = SideToMove(), op = 1 - me;
  const uint64_t sum = line_sum_[cell];
  const int shapes_me = static_cast<int>(sum >> (32 * me + 16) & 0xffff);
  const int shapes_op = static_cast<int>(sum >> (32 * op + 16) & 0xffff);
  return 100000 + shapes_me + shapes_op * 11 / 10;
}

int Gomoku::MoveOrderScore(Move cell) const {
  const int me = SideToMove(), op = 1 - me;
  return QuietOrderScore(cell) + kClassOrder.attack[class_[me][cell]] +
         kClassOrder.defence[class_[op][cell]];
}

}  // namespace ply
