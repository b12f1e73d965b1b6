// Gomoku's threat searches: wins by continuous fours (VCF: FindVcf, and the cheap probe the
// search's move generation and evaluation run at every node) and by continuous threats (VCT:
// FindVct), and SearchRoot, which runs both around the alpha-beta search at the root. The board,
// its incremental tables and the search's move generation are in gomoku.cc.
#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"

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
  if (class_count_[defender][kMakesFive] > 0) {
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
    PlaceLines(attack, attacker);
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
      PlaceLines(block, defender);
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

namespace {
// What ProbeVcf found in a position: the search asks the same question of the same position
// again and again (a leaf's evaluation, the same node's move generation an iteration later, the
// same line reached by another move order), and the answer depends only on the stones, the
// attacker and the budget. Direct-mapped, one per thread, allocated on its first use. Most
// answers are "no", so what every probe reads is a compact array of tagged keys (512 KB, bit 0
// of a tag: found), and the lines found sit apart, read only on a hit that found one.
struct VcfMemo {
  static constexpr int kBits = 16;
  static constexpr size_t kSize = size_t{1} << kBits;
  struct Path {
    uint8_t len;
    Gomoku::Move moves[Gomoku::kMaxVcfPath];
  };
  VcfMemo() { tags.fill(0); }        // the paths stay unwritten until a line is found
  std::array<uint64_t, kSize> tags;  // 0: empty
  std::array<Path, kSize> paths;
};

VcfMemo& Memo() {
  thread_local std::unique_ptr<VcfMemo> memo;
  if (!memo) memo = std::unique_ptr<VcfMemo>(new VcfMemo);
  return *memo;
}
}  // namespace

bool Gomoku::ProbeVcf(int attacker, int max_nodes, Move* path, int& len) const {
  // Bit 1 set, so no tag is 0; bit 0 holds the answer.
  const uint64_t key =
      (hash_ ^ Mix64(static_cast<uint64_t>(max_nodes) << 1 | static_cast<uint64_t>(attacker)) ^
       salt_) |
      2;
  VcfMemo& memo = Memo();
  const size_t slot = (key >> 2) & (VcfMemo::kSize - 1);
  uint64_t& tag = memo.tags[slot];
  if ((tag | 1) == (key | 1)) {
    if ((tag & 1) == 0) return false;
    const VcfMemo::Path& found = memo.paths[slot];
    std::copy(found.moves, found.moves + found.len, path + len);
    len += found.len;
    return true;
  }
  // The search plays its lines on this game and takes every stone back, leaving it exactly as
  // it was. Gomoku objects the engine searches are never const objects, only const views, so
  // the const move generator and evaluation may borrow the game rather than copy 20 KB a node.
  int nodes = max_nodes;
  const int start = len;
  const bool found = const_cast<Gomoku*>(this)->VcfSearch(attacker, kVcfDepth, nodes, path, len);
  tag = (key & ~uint64_t{1}) | (found ? 1 : 0);
  if (found) {
    VcfMemo::Path& stored = memo.paths[slot];
    stored.len = static_cast<uint8_t>(len - start);
    std::copy(path + start, path + len, stored.moves);
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

bool Gomoku::VctAttack(int attacker, int depth, int& nodes_left, Move* first) {
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
      Place(block, attacker);
      won = VctDefend(attacker, depth, nodes_left);
      Remove(block, attacker);
    }
    if (won && first) *first = block;
    return won;
  }
  if (class_count_[attacker][kMakesWinningFour] > 0) {
    if (first) *first = FirstOfClass(attacker, kMakesWinningFour);
    return true;
  }
  if (depth <= 0) return false;
  const uint64_t key =
      hash_ ^
      Mix64(0x7654'0000ULL | static_cast<uint64_t>(depth) << 1 | static_cast<uint64_t>(attacker)) ^
      salt_;
  if (const VctMemo::Entry* known = FindVctEntry(key)) {
    if (known->won && first) *first = known->first;
    return known->won;
  }
  Move winning = kNoMove;
  const bool won = VctAttackMoves(attacker, depth, nodes_left, &winning);
  // A failure with the budget spent may be no failure at all: not kept.
  if (won || nodes_left > 0) StoreVctEntry(key, won, winning);
  if (won && first) *first = winning;
  return won;
}

bool Gomoku::VctAttackMoves(int attacker, int depth, int& nodes_left, Move* first) {
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
  // Fours first (the defender has one answer), then double threes and threes.
  Move attacks[kMaxMoves];
  int n = 0;
  for (uint8_t wanted : {kMakesFourThree, kMakesFour, kMakesDoubleThree, kMakesOpenThree}) {
    ForEachCell(class_bits_[attacker][wanted], [&](Move c) { attacks[n++] = c; });
  }
  for (int i = 0; i < n; ++i) {
    if (--nodes_left < 0) return false;
    const Move attack = attacks[i];
    const bool four =
        class_[attacker][attack] >= kMakesFour && class_[attacker][attack] != kMakesDoubleThree;
    Place(attack, attacker);
    bool won = false;
    if (four) {
      const Move block = FiveCellNear(attack, attacker);
      if (block != kNoMove) {
        Place(block, defender);
        won = VctAttack(attacker, depth - 1, nodes_left, nullptr);
        Remove(block, defender);
      }
    } else {
      won = VctDefend(attacker, depth, nodes_left);
    }
    Remove(attack, attacker);
    if (won) {
      if (first) *first = attack;
      return true;
    }
  }
  return false;
}

bool Gomoku::VctDefend(int attacker, int depth, int& nodes_left) {
  const int defender = 1 - attacker;
  if (class_count_[defender][kMakesFive] > 0) return false;
  if (class_count_[attacker][kMakesFive] >= 2) return true;
  if (class_count_[attacker][kMakesFive] == 1) {
    // A four made on the way (a forced block that was also a four): it must be blocked first.
    const Move block = FirstOfClass(attacker, kMakesFive);
    Place(block, defender);
    const bool won = VctAttack(attacker, depth - 1, nodes_left, nullptr);
    Remove(block, defender);
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
  // four, and the empty cells within reach on the lines that make it so (a stone anywhere else
  // leaves that cell's four shapes as they are, so the attacker plays it and wins), and every
  // four of the defender's, which the attacker must answer before going on.
  uint64_t replies[kWords];
  for (int w = 0; w < kWords; ++w) {
    replies[w] = class_bits_[defender][kMakesFour][w] | class_bits_[defender][kMakesFourThree][w];
  }
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
  bool refuted = false;
  ForEachCell(replies, [&](Move reply) {
    if (refuted) return;
    if (--nodes_left < 0) {
      refuted = true;
      return;
    }
    Place(reply, defender);
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
        Place(block, attacker);
        won = VctDefend(attacker, depth - 1, nodes_left);
        Remove(block, attacker);
      }
    } else {
      won = VctAttack(attacker, depth - 1, nodes_left, nullptr);
    }
    Remove(reply, defender);
    refuted = !won;
  });
  return !refuted;
}

Gomoku::Move Gomoku::FindVct(int max_depth, int max_nodes, int64_t* nodes_used) {
  // A win by fours first, then the threats search, each with the whole budget.
  const Move vcf = FindVcf(max_depth, max_nodes, nodes_used);
  if (vcf != kNoMove || GetOutcome() != Outcome::kOngoing) return vcf;
  int nodes_left = max_nodes;
  NewVctGeneration();
  Move first = kNoMove;
  const bool vct = VctAttack(SideToMove(), std::min(max_depth, kMaxVcfDepth), nodes_left, &first);
  if (nodes_used) *nodes_used += max_nodes - std::max(nodes_left, 0);
  return vct ? first : kNoMove;
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

namespace {

int64_t MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

}  // namespace

SearchResult<Gomoku::Move> Gomoku::SearchRoot(Gomoku& game, const SearchLimits& limits,
                                              RootSearch search, std::string* note) {
  if (note) note->clear();
  if (!WantsRootChecks(limits) || game.GetOutcome() != Outcome::kOngoing) return search(limits);
  const auto start = std::chrono::steady_clock::now();
  const int64_t max_nodes = limits.max_nodes;  // 0: none
  const int64_t time_ms = limits.time_ms;      // 0: none
  // The solvers' size: what pbrain-ply gave them (40 positions a millisecond, 2000..400000),
  // and no more than a tenth of a node budget.
  int64_t vcf_nodes = 400000;
  if (time_ms > 0) vcf_nodes = std::clamp<int64_t>(time_ms * 40, 2000, vcf_nodes);
  if (max_nodes > 0) vcf_nodes = std::clamp<int64_t>(max_nodes / 10, 1, vcf_nodes);
  const int vct_nodes = static_cast<int>(std::max<int64_t>(1, vcf_nodes / 4));
  int64_t used = 0;
  auto finish = [&](SearchResult<Move> r) {
    r.nodes = used;
    r.elapsed_ms = static_cast<double>(MsSince(start));
    return r;
  };
  auto solved = [&](Move m, const char* how) {
    SearchResult<Move> r;
    r.best_move = m;
    r.has_move = true;
    r.pv = {m};
    // A line of threats ends in a five; its length is not known here, only that it wins.
    r.score = kMateThreshold;
    if (note) *note = absl::StrCat(game.MoveToText(m), " wins by continuous ", how);
    return finish(std::move(r));
  };

  int64_t n = 0;
  const Move vcf = game.FindVcf(kMaxVcfDepth, static_cast<int>(vcf_nodes), &n);
  used += n;
  if (vcf != kNoMove) return solved(vcf, "fours");
  // A node of the threats search answers a three with every reply on its lines: a smaller one.
  const Move vct = game.FindVct(kRootVctDepth, vct_nodes, &n);
  used += n;
  if (vct != kNoMove) return solved(vct, "threats");

  // Whether the opponent wins by fours, or by threats, once `m` is played. Each check takes at
  // most what is left of the budget; false when none is left.
  auto out_of_budget = [&] {
    return (max_nodes > 0 && used >= max_nodes) || (time_ms > 0 && MsSince(start) >= time_ms) ||
           (limits.stop != nullptr && limits.stop->load(std::memory_order_relaxed));
  };
  auto share = [&](int64_t want) {
    return static_cast<int>(max_nodes > 0 ? std::min(want, max_nodes - used) : want);
  };
  auto loses = [&](Move m) {
    UndoInfo undo;
    game.Make(m, undo);
    bool lost = game.GetOutcome() == Outcome::kOngoing &&
                game.FindVcf(kMaxVcfDepth, share(vct_nodes), &n) != kNoMove;
    used += n;
    // Threats only until 95% of the time (the checks by fours until all of it).
    if (!lost && !out_of_budget() && (time_ms <= 0 || MsSince(start) < time_ms * 95 / 100) &&
        game.GetOutcome() == Outcome::kOngoing) {
      lost = game.FindVct(kRootVctDepth, share(std::max(1, vct_nodes / 2)), &n) != kNoMove;
      used += n;
    }
    game.Unmake(m, undo);
    return lost;
  };

  // Before the search: every candidate after which the opponent wins by fours or threats is
  // left out of it (unless all are), so the search spends its time on moves not already lost,
  // and the line it likes best is not one the threat searches refute beyond its horizon. The
  // checks run in passes, each twice the size of the one before over the candidates not
  // yet proved lost (most lost ones fall in the first, small pass; some take tens of thousands
  // of positions), until one candidate is left or kRootFilterPercent of the budget is spent.
  // `safe`: candidates that came through a check at least as large as the one after the search.
  MoveList<Move, kMaxMoves> candidates, lost;
  uint64_t safe[kWords] = {};
  game.GenerateSearchMoves(candidates);
  auto filter_left_ms = [&] {
    return time_ms > 0 ? time_ms * kRootFilterPercent / 100 - MsSince(start) : int64_t{1} << 40;
  };
  auto filter_left_nodes = [&] {
    return max_nodes > 0 ? max_nodes * kRootFilterPercent / 100 - used : int64_t{1} << 40;
  };
  auto lost_within = [&](Move m, int64_t size) {
    UndoInfo undo;
    game.Make(m, undo);
    // FindVct looks for a win by fours first (its own size again).
    const bool won = game.GetOutcome() == Outcome::kOngoing &&
                     game.FindVct(kRootVctDepth, static_cast<int>(size), &n) != kNoMove;
    used += n;
    game.Unmake(m, undo);
    return won;
  };
  MoveList<Move, kMaxMoves> open = candidates;
  for (int64_t size = kRootFilterFirstNodes; open.size() > 1 && size <= kMaxRootFilterNodes;
       size *= 2) {
    MoveList<Move, kMaxMoves> survivors;
    bool complete = true;
    for (Move c : open) {
      // A check may take twice its size in positions, at about kVctNodesPerMs a millisecond.
      const int64_t room = std::min(filter_left_nodes() / 2, filter_left_ms() * kVctNodesPerMs / 2);
      if (!complete || room < size || out_of_budget()) {
        complete = false;
        survivors.push_back(c);
        continue;
      }
      if (lost_within(c, size)) {
        lost.push_back(c);
      } else {
        survivors.push_back(c);
        if (size >= vct_nodes) SetBit(safe, c);
      }
    }
    open = survivors;
    if (!complete) break;
  }
  const bool excluding = !lost.empty() && lost.size() < candidates.size();
  if (excluding) game.ExcludeAtRoot(lost);
  struct Unexclude {
    Gomoku& game;
    ~Unexclude() { game.ClearRootExclusions(); }
  } unexclude{game};
  auto known_safe = [&](Move m) { return (safe[m >> 6] >> (m & 63) & 1) != 0; };

  // The search runs on what is left, less a tenth kept for the checks after it.
  SearchLimits inner = limits;
  const int64_t spent = MsSince(start);
  if (time_ms > 0) inner.time_ms = std::max<int64_t>(1, time_ms * 9 / 10 - spent);
  if (inner.soft_time_ms > 0) inner.soft_time_ms = std::max<int64_t>(1, inner.soft_time_ms - spent);
  if (max_nodes > 0) inner.max_nodes = std::max<int64_t>(1, max_nodes - max_nodes / 10 - used);
  SearchResult<Move> result = search(inner);
  used += result.nodes;
  if (note && excluding) {
    *note = absl::StrCat(lost.size(), " of ", candidates.size(),
                         " candidates lose to a forced line and were not searched");
  }
  if (!result.has_move || result.exact) return finish(std::move(result));

  // After the search: when its move (not checked before it) lets the opponent win by fours or
  // threats, the first of the other candidates in move order that does not is played instead;
  // when none does, or the budget runs out first, the search's move stands.
  const Move chosen = result.best_move;
  if (known_safe(chosen) || out_of_budget() || lost.contains(chosen) || !loses(chosen)) {
    return finish(std::move(result));
  }
  std::array<std::pair<int, Move>, kMaxMoves> ranked;
  int count = 0;
  for (Move c : candidates) {
    if (c != chosen && !lost.contains(c)) ranked[count++] = {game.MoveOrderScore(c), c};
  }
  std::sort(ranked.begin(), ranked.begin() + count,
            [](const auto& a, const auto& b) { return a > b; });
  for (int i = 0; i < count && i < kRootAlternatives; ++i) {
    if (out_of_budget()) break;
    if (known_safe(ranked[i].second) || !loses(ranked[i].second)) {
      if (note) {
        *note = absl::StrCat(game.MoveToText(chosen), " loses to a forced line; ",
                             game.MoveToText(ranked[i].second), " does not");
      }
      result.best_move = ranked[i].second;
      result.pv = {result.best_move};
      return finish(std::move(result));
    }
  }
  return finish(std::move(result));
}

}  // namespace ply
