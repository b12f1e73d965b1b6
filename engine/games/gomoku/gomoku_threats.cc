// Gomoku's threat searches: wins by continuous fours (VCF: FindVcf, and the cheap probe the
// search's move generation and evaluation run at every node) and by continuous threats (VCT:
// FindVct). SearchRoot, which runs both around the alpha-beta search at the root, is in
// gomoku_root.cc; the board and its incremental tables are in gomoku.cc, the search's move
// generation and evaluation in gomoku_search.cc.
#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/games/gomoku/gomoku_tables.h"

namespace ply {

bool Gomoku::VcfSearch(int attacker, int depth, int& nodes_left, Move* path, int& len) {
  const int defender = 1 - attacker;
  const bool five = class_count_[attacker][kMakesFive] > 0;
  if (five ||
      (class_count_[attacker][kMakesWinningFour] > 0 && class_count_[defender][kMakesFive] == 0)) {
    path[len++] = FirstOfClass(attacker, five ? kMakesFive : kMakesWinningFour);
    return true;
  }
  if (depth == 0) return false;
  Move fours[kMaxMoves];
  int n = 0;
  const bool forced = class_count_[defender][kMakesFive] > 0;
  if (forced) {
    // The defender's block made a four: the attacker must take its five cell, and the line goes
    // on only if that block is a four of the attacker's own (an open four or double four there
    // is caught above only when the defender has no five, so it is played here too).
    if (class_count_[defender][kMakesFive] >= 2) return false;
    const Move counter = FirstOfClass(defender, kMakesFive);
    if (class_[attacker][counter] < kMakesFour || class_[attacker][counter] == kMakesDoubleThree) {
      return false;
    }
    fours[n++] = counter;
  } else {
    // Four-threes first: they are the usual last blow.
    for (uint8_t wanted : {kMakesFourThree, kMakesFour}) {
      ForEachCell(class_bits_[attacker][wanted], [&](Move c) { fours[n++] = c; });
    }
  }
  for (int i = 0; i < n; ++i) {
    if (--nodes_left < 0) return false;
    const Move attack = fours[i];
    // What playing it and its block would show, read off the lines instead (most fours the
    // probes try are such: a closed three's two cells).
    if (!forced && FourLeadsNowhere(attack, attacker)) continue;
    PlaceLines<false>(attack, attacker);
    // The one cell where the new four becomes five: the defender must take it.
    const Move block = FiveCellNear(attack, attacker);
    bool won = false;
    // Without another four (or open four) left after this one, nor a second five cell (a double
    // four), the line ends here: the block only takes shapes away from the attacker, so the
    // search below would find nothing to play and return false at no cost in nodes. Skipping it
    // saves the block's placing.
    const bool more = HasFours(attacker) || class_count_[attacker][kMakesWinningFour] > 0 ||
                      class_count_[attacker][kMakesFive] >= 2;
    if (block != kNoMove && more) {
      PlaceLines<false>(block, defender);
      path[len] = attack;
      path[len + 1] = block;
      int end = len + 2;
      won = VcfSearch(attacker, depth - 1, nodes_left, path, end);
      RemoveLines(block, defender);
      if (won) len = end;
    }
    RemoveLines(attack, attacker);
    if (won) return true;
  }
  return false;
}

bool Gomoku::FourLeadsNowhere(Move cell, int attacker) const {
  // Every other cell where the attacker has a four to make must be the block's (checked below):
  // one at most.
  const int others =
      class_count_[attacker][kMakesFour] + class_count_[attacker][kMakesFourThree] - 1;
  if (exact_ || others > 1) return false;
  // The four's direction; in the others the stone makes at most an open two, so no cell on
  // those lines makes a four with it (a four there would be a three through `cell`).
  int dir = -1;
  for (int d = 0; d < 4; ++d) {
    const uint8_t shape = ShapeOf(cell, d, attacker);
    if (shape == kFour && dir < 0) {
      dir = d;
    } else if (shape > kOpenTwo) {
      return false;
    }
  }
  if (dir < 0) return false;
  // The line through it, offsets -4..4 (index 4 the stone): 0 empty, 1 the attacker's, 2 the
  // defender's or off the board. Only the windows of five through the stone change with it.
  int line[9];
  line[4] = 1;
  for (int off = -4; off <= 4; ++off) {
    if (off == 0) continue;
    const uint32_t v = key_[cell][dir] >> (2 * gomoku_tables::PairDigit(off, 4)) & 3;
    line[off + 4] = v == 0 ? 0 : v == static_cast<uint32_t>(attacker + 1) ? 1 : 2;
  }
  // The windows of five through the stone (cells start..start + 4): the attacker's stones in
  // each, and whether it is open (nothing of the defender's, no edge).
  int own[5];
  bool open[5];
  for (int start = 0; start < 5; ++start) {
    own[start] = 0;
    open[start] = true;
    for (int i = start; i < start + 5; ++i) {
      own[start] += line[i] == 1;
      open[start] = open[start] && line[i] != 2;
    }
  }
  // One five cell (the empty cell of every open window holding four), blocked...
  int five = -1;
  for (int start = 0; start < 5; ++start) {
    if (!open[start] || own[start] != 4) continue;
    int empty = start;
    while (line[empty] != 0) ++empty;
    if (five >= 0 && five != empty) return false;
    five = empty;
  }
  if (five < 0) return false;
  // ... leaves no open window of three, whose two empty cells would each make a four.
  for (int start = 0; start < 5; ++start) {
    if (open[start] && own[start] == 3 && (five < start || five > start + 4)) return false;
  }
  // The block makes no four for the defender, and the other cell where the attacker had a four
  // to make, if any, is the block's.
  const int block = cell + (five - 4) * kDirections[dir];
  for (int d = 0; d < 4; ++d) {
    if (ShapeOf(block, d, 1 - attacker) >= kFour) return false;
  }
  return others == 0 || (others == 1 && (class_[attacker][block] == kMakesFour ||
                                         class_[attacker][block] == kMakesFourThree));
}

std::string Gomoku::CheckFourDeadEnds(int* dead_ends) const {
  for (int attacker = 0; attacker < 2; ++attacker) {
    const int defender = 1 - attacker;
    if (class_count_[attacker][kMakesFive] > 0 || class_count_[attacker][kMakesWinningFour] > 0 ||
        class_count_[defender][kMakesFive] > 0) {
      continue;
    }
    std::string wrong;
    ForEachCell(class_bits_[attacker][kMakesFour], [&](Move cell) {
      if (!wrong.empty() || !FourLeadsNowhere(cell, attacker)) return;
      ++*dead_ends;
      Gomoku copy = *this;
      copy.PlaceLines<false>(cell, attacker);
      const Move block = copy.FiveCellNear(cell, attacker);
      if (block != kNoMove) copy.PlaceLines<false>(block, defender);
      if (block == kNoMove || copy.class_count_[attacker][kMakesFive] > 0 ||
          copy.class_count_[attacker][kMakesWinningFour] > 0 || copy.HasFours(attacker) ||
          copy.class_count_[defender][kMakesFive] > 0) {
        wrong = absl::StrCat(MoveToText(cell), " is no dead end for player ", attacker);
      }
    });
    if (!wrong.empty()) return wrong;
  }
  return "";
}

namespace {
// What ProbeVcf found in a position: the search asks the same question of the same position
// again and again (a leaf's evaluation, the same node's move generation an iteration later, the
// same line reached by another move order), and the answer depends only on the stones, the
// attacker and the budget. Direct-mapped, one per thread, allocated on its first use. Most
// answers are "no", so what every probe reads is a compact array of tagged keys (2 MB, bit 0 of
// a tag: found; with a quarter of that the bench's fixed-depth searches took 3-4% longer), and the
// lines found (about one answer in a hundred) sit apart in a smaller table, read only on a hit that
// found one: a line lost there to another position's is searched again.
struct VcfMemo {
  static constexpr int kBits = 18;
  static constexpr size_t kSize = size_t{1} << kBits;
  static constexpr size_t kPaths = size_t{1} << 14;
  struct Path {
    uint64_t key;
    uint8_t len;
    Gomoku::Move moves[Gomoku::kMaxVcfPath];
  };
  VcfMemo() {
    tags.fill(0);
    for (Path& p : paths) p.key = 0;  // no tag is 0 (bit 1 is always set)
  }
  std::array<uint64_t, kSize> tags;  // 0: empty
  std::array<Path, kPaths> paths;
};

VcfMemo& Memo() {
  thread_local std::unique_ptr<VcfMemo> memo;
  if (!memo) memo = std::unique_ptr<VcfMemo>(new VcfMemo);
  return *memo;
}

// The memo's key for a probe of the position whose hash is `hash`: bit 1 set, so no tag is 0;
// bit 0 of a tag holds the answer.
uint64_t VcfMemoKey(uint64_t hash, int attacker, int max_nodes, uint64_t salt) {
  return (hash ^ Mix64(static_cast<uint64_t>(max_nodes) << 1 | static_cast<uint64_t>(attacker)) ^
          salt) |
         2;
}
}  // namespace

bool Gomoku::RecallVcf(uint64_t hash, int attacker, int max_nodes, bool& won) const {
  const uint64_t key = VcfMemoKey(hash, attacker, max_nodes, salt_);
  const VcfMemo& memo = Memo();
  const size_t slot = (key >> 2) & (VcfMemo::kSize - 1);
  const uint64_t tag = memo.tags[slot];
  if ((tag | 1) != (key | 1)) return false;
  won = (tag & 1) != 0;
  // A win counts as remembered only with its line, as ProbeVcf reads it.
  return !won || memo.paths[slot & (VcfMemo::kPaths - 1)].key == key;
}

bool Gomoku::ProbeVcf(int attacker, int max_nodes, Move* path, int& len) const {
  const uint64_t key = VcfMemoKey(hash_, attacker, max_nodes, salt_);
  VcfMemo& memo = Memo();
  const size_t slot = (key >> 2) & (VcfMemo::kSize - 1);
  uint64_t& tag = memo.tags[slot];
  VcfMemo::Path& line = memo.paths[slot & (VcfMemo::kPaths - 1)];
  if ((tag | 1) == (key | 1)) {
    if ((tag & 1) == 0) return false;
    if (line.key == key) {
      std::copy(line.moves, line.moves + line.len, path + len);
      len += line.len;
      return true;
    }
  }
  // The search plays its lines on this game and takes every stone back, leaving it exactly as
  // it was. Gomoku objects the engine searches are never const objects, only const views, so
  // the const move generator and evaluation may borrow the game rather than copy 20 KB a node.
  int nodes = max_nodes;
  const int start = len;
  const bool found = const_cast<Gomoku*>(this)->VcfSearch(attacker, kVcfDepth, nodes, path, len);
  tag = (key & ~uint64_t{1}) | (found ? 1 : 0);
  if (found) {
    line.key = key;
    line.len = static_cast<uint8_t>(len - start);
    std::copy(path + start, path + len, line.moves);
  }
  return found;
}

Gomoku::Move Gomoku::FiveCellNear(int cell, int p) const {
  for (int d = 0; d < 4; ++d) {
    for (int k = -4; k <= 4; ++k) {
      const int c = cell + k * kDirections[d];
      if (c > 0 && c < kCells && board_[c] == kEmptyCell && class_[p][c] == kMakesFive) {
        return static_cast<Move>(c);
      }
    }
  }
  return kNoMove;
}

namespace {
// What VctAttack proved in a position: lines of threats reach the same position by many move
// orders (threats on different lines commute), and a proof found once holds for every order.
// Keyed by the stones, the attacker and the depth left; only definite answers are kept (a win,
// or a failure the node budget did not cut short). Each FindVct starts a new generation and
// reads only its own entries, so that what it finds does not depend on the searches before it
// (a level on a node budget plays the same game every time). Direct-mapped, one per thread,
// allocated on its first use.
struct VctMemo {
  static constexpr int kBits = 16;
  struct Entry {
    uint64_t key = 0;
    uint32_t generation = 0;  // 0: empty
    Gomoku::Move first = Gomoku::kNoMove;
    bool won = false;
  };
  uint32_t generation = 0;
  std::array<Entry, size_t{1} << kBits> entries;
};

VctMemo& ThreadVctMemo() {
  thread_local std::unique_ptr<VctMemo> memo;
  if (!memo) memo = std::make_unique<VctMemo>();
  return *memo;
}

void NewVctGeneration() {
  VctMemo& memo = ThreadVctMemo();
  if (++memo.generation == 0) {  // wrapped: forget every entry
    memo.entries.fill({});
    memo.generation = 1;
  }
}

VctMemo::Entry* FindVctEntry(uint64_t key) {
  VctMemo& memo = ThreadVctMemo();
  VctMemo::Entry& e = memo.entries[key & ((size_t{1} << VctMemo::kBits) - 1)];
  return e.generation == memo.generation && e.key == key ? &e : nullptr;
}

void StoreVctEntry(uint64_t key, bool won, Gomoku::Move first) {
  VctMemo& memo = ThreadVctMemo();
  memo.entries[key & ((size_t{1} << VctMemo::kBits) - 1)] = {
      .key = key, .generation = memo.generation, .first = first, .won = won};
}
}  // namespace

bool Gomoku::VctAttack(int attacker, int depth, int& nodes_left, Move* first, Move near) {
  const int defender = 1 - attacker;
  if (class_count_[attacker][kMakesFive] > 0) {
    if (first) *first = FirstOfClass(attacker, kMakesFive);
    return true;
  }
  if (class_count_[defender][kMakesFive] > 0) {
    // The defender has a four: the attacker must block it, and the line goes on only if it
    // still threatens something once the block is in: a winning four (a double four, say) made
    // by the block wins, a four or an open three (the block's own or one standing before) is a
    // threat the defender must answer again.
    if (class_count_[defender][kMakesFive] >= 2) return false;
    const Move block = FirstOfClass(defender, kMakesFive);
    const bool wins = class_[attacker][block] == kMakesWinningFour;
    if (!wins && (depth <= 0 || --nodes_left < 0)) return false;
    bool won = wins;
    if (!wins) {
      PlaceThreat(block, attacker);
      won = VctDefend(attacker, depth, nodes_left, near);
      RemoveThreat(block, attacker);
    }
    if (won && first) *first = block;
    return won;
  }
  if (class_count_[attacker][kMakesWinningFour] > 0) {
    if (first) *first = FirstOfClass(attacker, kMakesWinningFour);
    return true;
  }
  if (depth <= 0) return false;
  // The answer depends on the last threat too (the plain threats that may follow it).
  const uint64_t key = hash_ ^
                       Mix64(0x7654'0000ULL | (uint64_t{near} + 1) << 32 |
                             static_cast<uint64_t>(depth) << 1 | static_cast<uint64_t>(attacker)) ^
                       salt_;
  if (const VctMemo::Entry* known = FindVctEntry(key)) {
    if (known->won && first) *first = known->first;
    return known->won;
  }
  Move winning = kNoMove;
  const bool won = VctAttackMoves(attacker, depth, nodes_left, &winning, near);
  // A failure with the budget spent may be no failure at all: not kept.
  if (won || nodes_left > 0) StoreVctEntry(key, won, winning);
  if (won && first) *first = winning;
  return won;
}

bool Gomoku::VctAttackMoves(int attacker, int depth, int& nodes_left, Move* first, Move near) {
  const int defender = 1 - attacker;
  // A short win by fours is looked for first, as the search's probes do: it is found far
  // sooner than by trying the threes in between.
  if (HasFours(attacker)) {
    Move path[kMaxVcfPath];
    int len = 0;
    const int budget = std::min(nodes_left, kVcfNodes);
    int vcf_nodes = budget;
    const bool found = VcfSearch(attacker, kVcfDepth, vcf_nodes, path, len);
    nodes_left -= budget - std::max(vcf_nodes, 0);
    if (found) {
      if (first) *first = path[0];
      return true;
    }
  }
  // Fours first (the defender has one answer), then double threes and threes. After the first
  // threat, a plain four or three only on the lines of the last one, within four of it (a
  // four-three or a double three anywhere): lines of threats build on their own stones, and the
  // plain threats elsewhere multiply the positions. On the positions of 40 games against AIWine
  // this proves 15-23% more wins at every budget (docs/gomoku-engine.md, "Threats near the last
  // one"), though a line whose next plain threat is elsewhere is no longer found.
  uint64_t around[kWords];
  const bool local = near != kNoMove;
  if (local) NearThreatCells(near, around);
  Move attacks[kMaxMoves];
  int n = 0;
  for (uint8_t wanted : {kMakesFourThree, kMakesFour, kMakesDoubleThree, kMakesOpenThree}) {
    if (local && (wanted == kMakesFour || wanted == kMakesOpenThree)) {
      uint64_t kept[kWords];
      for (int w = 0; w < kWords; ++w) kept[w] = class_bits_[attacker][wanted][w] & around[w];
      ForEachCell(kept, [&](Move c) { attacks[n++] = c; });
    } else {
      ForEachCell(class_bits_[attacker][wanted], [&](Move c) { attacks[n++] = c; });
    }
  }
  for (int i = 0; i < n; ++i) {
    if (--nodes_left < 0) return false;
    const Move attack = attacks[i];
    const bool four =
        class_[attacker][attack] >= kMakesFour && class_[attacker][attack] != kMakesDoubleThree;
    PlaceThreat(attack, attacker);
    bool won = false;
    if (four) {
      const Move block = FiveCellNear(attack, attacker);
      if (block != kNoMove) {
        PlaceThreat(block, defender);
        won = VctAttack(attacker, depth - 1, nodes_left, nullptr, attack);
        RemoveThreat(block, defender);
      }
    } else {
      won = VctDefend(attacker, depth, nodes_left, attack);
    }
    RemoveThreat(attack, attacker);
    if (won) {
      if (first) *first = attack;
      return true;
    }
  }
  return false;
}

bool Gomoku::VctDefend(int attacker, int depth, int& nodes_left, Move near) {
  const int defender = 1 - attacker;
  if (class_count_[defender][kMakesFive] > 0) return false;
  if (class_count_[attacker][kMakesFive] >= 2) return true;
  if (class_count_[attacker][kMakesFive] == 1) {
    // A four made on the way (a forced block that was also a four): it must be blocked first.
    const Move block = FirstOfClass(attacker, kMakesFive);
    PlaceThreat(block, defender);
    const bool won = VctAttack(attacker, depth - 1, nodes_left, nullptr, near);
    RemoveThreat(block, defender);
    return won;
  }
  // Nothing left to threaten (a counter-four broke the three, or a block made none): the
  // defender has a free move, and the line is no forced win.
  if (class_count_[attacker][kMakesWinningFour] == 0) return false;
  // An open four of the defender's own outruns the three; so does a win by fours.
  if (class_count_[defender][kMakesWinningFour] > 0) return false;
  if (HasFours(defender)) {
    Move path[kMaxVcfPath];
    int len = 0;
    // A fixed size, not what is left of the budget: the answer must not depend on the budget,
    // since VctAttack keeps the wins it finds. What it used still comes off the budget (a budget
    // it overdraws is a cut: the loop below stops at once and nothing is remembered).
    constexpr int kCounterVcfNodes = 200;
    int vcf_nodes = kCounterVcfNodes;
    const bool counter = VcfSearch(defender, kVcfDepth, vcf_nodes, path, len);
    nodes_left -= kCounterVcfNodes - std::max(vcf_nodes, 0);
    if (counter) return false;
  }
  // The replies that can stop the threat: every cell where the attacker would make a winning
  // four, and the empty cells within reach on the lines that make it so where the attacker would
  // make a four (a stone anywhere else leaves that winning four as it is: each cell that would
  // complete its five is one where the attacker makes a four now, the five's other cells are
  // stones or the winning cell), and every four of the defender's, which the attacker must
  // answer before going on.
  uint64_t replies[kWords] = {};
  ForEachCell(class_bits_[attacker][kMakesWinningFour], [&](Move x) {
    SetBit(replies, x);
    for (int d = 0; d < 4; ++d) {
      if (ShapeAt(attacker, x, d) < kFour) continue;
      // Each way up to the first wall: a fixed reach of 5 would wrap round a 20-wide row.
      for (const int step : {-kDirections[d], kDirections[d]}) {
        int c = x;
        for (int k = 1; k <= reach_; ++k) {
          c += step;
          if (board_[c] == kWall) break;
          if (board_[c] == kEmptyCell) SetBit(replies, c);
        }
      }
    }
  });
  for (int w = 0; w < kWords; ++w) {
    const uint64_t fours = class_bits_[attacker][kMakesFour][w] |
                           class_bits_[attacker][kMakesFourThree][w] |
                           class_bits_[attacker][kMakesWinningFour][w];
    replies[w] = (replies[w] & fours) | class_bits_[defender][kMakesFour][w] |
                 class_bits_[defender][kMakesFourThree][w];
  }
  bool refuted = false;
  ForEachCell(replies, [&](Move reply) {
    if (refuted) return;
    if (--nodes_left < 0) {
      refuted = true;
      return;
    }
    PlaceThreat(reply, defender);
    bool won;
    if (class_count_[defender][kMakesFive] > 0) {
      // A counter-four: the attacker blocks it (or has a five first), then the defender is
      // to move again against what is left of the threat.
      if (class_count_[attacker][kMakesFive] > 0) {
        won = true;
      } else if (class_count_[defender][kMakesFive] >= 2) {
        won = false;
      } else {
        const Move block = FirstOfClass(defender, kMakesFive);
        PlaceThreat(block, attacker);
        won = VctDefend(attacker, depth - 1, nodes_left, near);
        RemoveThreat(block, attacker);
      }
    } else {
      won = VctAttack(attacker, depth - 1, nodes_left, nullptr, near);
    }
    RemoveThreat(reply, defender);
    refuted = !won;
  });
  return !refuted;
}

Gomoku::Move Gomoku::FindVct(int max_depth, int max_nodes, int64_t* nodes_used,
                             bool fours_searched) {
  // A win by fours first, then the threats search, each with the whole budget.
  if (nodes_used) *nodes_used = 0;
  if (GetOutcome() != Outcome::kOngoing) return kNoMove;
  if (!fours_searched) {
    const Move vcf = FindVcf(max_depth, max_nodes, nodes_used);
    if (vcf != kNoMove) return vcf;
  }
  int nodes_left = max_nodes;
  NewVctGeneration();
  Move first = kNoMove;
  bool vct = false;
  // Deepening one attack a pass, on what the passes before left: searched to its full depth at
  // once, the search follows its first long lines to the end and may spend the budget before it
  // tries a short win (at depth 10 and 10,000 positions it missed two-attack wins that a pass
  // at depth 2 proves in 30-160). What a pass proved stays in the memo for the next.
  const int depth_cap = std::min(max_depth, kMaxVcfDepth);
  for (int depth = 1; depth <= depth_cap && !vct && nodes_left > 0; ++depth) {
    vct = VctAttack(SideToMove(), depth, nodes_left, &first, kNoMove);
  }
  if (nodes_used) *nodes_used += max_nodes - std::max(nodes_left, 0);
  return vct ? first : kNoMove;
}

void Gomoku::NearThreatCells(Move near, uint64_t* cells) const {
  std::fill(cells, cells + kWords, 0);
  for (int d = 0; d < 4; ++d) {
    for (const int step : {-kDirections[d], kDirections[d]}) {
      int c = near;
      for (int k = 1; k <= 4; ++k) {
        c += step;
        if (board_[c] == kWall) break;
        SetBit(cells, c);
      }
    }
  }
}

Gomoku::Move Gomoku::FindVcf(int max_depth, int max_nodes, int64_t* nodes_used) {
  if (nodes_used) *nodes_used = 0;
  if (GetOutcome() != Outcome::kOngoing) return kNoMove;
  Move path[kMaxVcfPath];
  int len = 0;
  int nodes_left = max_nodes;
  const bool won =
      VcfSearch(SideToMove(), std::min(max_depth, kMaxVcfDepth), nodes_left, path, len);
  if (nodes_used) *nodes_used = max_nodes - std::max(nodes_left, 0);
  return won ? path[0] : kNoMove;
}

}  // namespace ply
