// Gomoku::SearchRoot: the threat searches (gomoku_threats.cc) around the alpha-beta search at
// the root of every level's search. A win of the side to move by fours or threats is played
// at once; the candidates after which the opponent wins by them are left out of the search; the
// move the search chose gives way to another candidate if the checks find it lost. Every check
// comes out of the caller's budget (nodes and clock).
#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/games/gomoku/gomoku.h"

namespace ply {

namespace {

int64_t MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// The budget SearchRoot's threat checks share with its search: the positions they visit count as
// nodes, and the time runs from the call's start.
class RootChecks {
 public:
  using Move = Gomoku::Move;
  using Candidates = MoveList<Move, Gomoku::kMaxMoves>;

  RootChecks(Gomoku& game, const SearchLimits& limits)
      : game_(game),
        limits_(limits),
        max_nodes_(limits.max_nodes),
        time_ms_(limits.time_ms),
        vct_depth_(Gomoku::RootVctDepth(limits)),
        start_(std::chrono::steady_clock::now()) {
    // The solvers' size: what pbrain-ply gave them (40 positions a millisecond, 2000..400000),
    // and no more than a tenth of a node budget.
    vcf_nodes_ = 400000;
    if (time_ms_ > 0) vcf_nodes_ = std::clamp<int64_t>(time_ms_ * 40, 2000, vcf_nodes_);
    if (max_nodes_ > 0) vcf_nodes_ = std::clamp<int64_t>(max_nodes_ / 10, 1, vcf_nodes_);
    // A node of the threats search answers a three with every reply on its lines: a smaller one.
    vct_nodes_ = std::max<int64_t>(1, vcf_nodes_ / 4);
  }

  int vct_depth() const { return vct_depth_; }
  int64_t vcf_nodes() const { return vcf_nodes_; }
  int64_t vct_nodes() const { return vct_nodes_; }
  int64_t used() const { return used_; }
  void Spent(int64_t nodes) { used_ += nodes; }
  int64_t ElapsedMs() const { return MsSince(start_); }
  bool OutOfBudget() const {
    return (max_nodes_ > 0 && used_ >= max_nodes_) || (time_ms_ > 0 && ElapsedMs() >= time_ms_) ||
           (limits_.stop != nullptr && limits_.stop->load(std::memory_order_relaxed));
  }

  // Whether the opponent wins by fours (up to kMaxVcfDepth attacks) or by threats once `m` is
  // played: each search at most `size` positions and what is left of a node budget (the threats
  // search, which looks for fours first, gets half, as it may spend twice that), the threats
  // only while 95% of the time is not spent; false when no budget is left.
  bool OpponentWinsAfter(Move m, int64_t size) {
    Gomoku::UndoInfo undo;
    game_.Make(m, undo);
    int64_t n = 0;
    bool won = game_.GetOutcome() == Outcome::kOngoing &&
               game_.FindVcf(Gomoku::kMaxVcfDepth, Share(size), &n) != Gomoku::kNoMove;
    used_ += n;
    const int threats_size = Share(size) / 2;
    if (!won && threats_size > 0 && !OutOfBudget() &&
        (time_ms_ <= 0 || ElapsedMs() < time_ms_ * 95 / 100) &&
        game_.GetOutcome() == Outcome::kOngoing) {
      // The fours were searched just above, deeper and with at least as many positions.
      won = game_.FindVct(vct_depth_, threats_size, &n, /*fours_searched=*/true) != Gomoku::kNoMove;
      used_ += n;
    }
    game_.Unmake(m, undo);
    return won;
  }

  // Before the search: checks the candidates in passes, each twice the size of the one before,
  // over those not yet proved lost (most lost ones fall in the first, small pass; some take tens
  // of thousands of positions), until one is left or kRootFilterPercent of the budget is spent.
  // `lost` receives the proved-lost ones, `safe` those that came through a check at least as
  // large as the one after the search (which they then skip).
  void Filter(const Candidates& candidates, Candidates& lost, Candidates& safe) {
    Candidates open = candidates;
    for (int64_t size = Gomoku::kRootFilterFirstNodes;
         open.size() > 1 && size <= Gomoku::kMaxRootFilterNodes; size *= 2) {
      Candidates survivors;
      bool complete = true;
      for (Move c : open) {
        // A check may take twice its size in positions, at about kVctNodesPerMs a millisecond.
        const int64_t room = std::min(FilterLeftNodes(), FilterLeftMs() * Gomoku::kVctNodesPerMs);
        if (!complete || room < 2 * size || OutOfBudget()) {
          complete = false;
          survivors.push_back(c);
        } else if (OpponentWinsAfter(c, size)) {
          lost.push_back(c);
        } else {
          survivors.push_back(c);
          if (size >= vct_nodes_ && !safe.contains(c)) safe.push_back(c);
        }
      }
      open = survivors;
      if (!complete) break;
    }
  }

  // After the search: when its move (not found safe before it) lets the opponent win by fours or
  // threats, the first other candidate in move order, among at most kRootAlternatives not proved
  // lost, that does not; kNoMove when none does or the budget runs out first.
  Move Replacement(Move chosen, const Candidates& candidates, const Candidates& lost,
                   const Candidates& safe) {
    // Every candidate proved lost: none of the others would do better.
    if (safe.contains(chosen) || lost.contains(chosen) || OutOfBudget() ||
        !OpponentWinsAfter(chosen, vct_nodes_)) {
      return Gomoku::kNoMove;
    }
    std::array<std::pair<int, Move>, Gomoku::kMaxMoves> ranked;
    int count = 0;
    for (Move c : candidates) {
      if (c != chosen && !lost.contains(c)) ranked[count++] = {game_.MoveOrderScore(c), c};
    }
    std::sort(ranked.begin(), ranked.begin() + count,
              [](const auto& a, const auto& b) { return a > b; });
    for (int i = 0; i < count && i < Gomoku::kRootAlternatives; ++i) {
      if (OutOfBudget()) break;
      const Move m = ranked[i].second;
      if (safe.contains(m) || !OpponentWinsAfter(m, vct_nodes_)) return m;
    }
    return Gomoku::kNoMove;
  }

 private:
  int Share(int64_t want) const {
    return static_cast<int>(
        max_nodes_ > 0 ? std::max<int64_t>(0, std::min(want, max_nodes_ - used_)) : want);
  }
  int64_t FilterLeftNodes() const {
    return max_nodes_ > 0 ? max_nodes_ * Gomoku::kRootFilterPercent / 100 - used_
                          : int64_t{1} << 40;
  }
  int64_t FilterLeftMs() const {
    return time_ms_ > 0 ? time_ms_ * Gomoku::kRootFilterPercent / 100 - ElapsedMs()
                        : int64_t{1} << 30;
  }

  Gomoku& game_;
  const SearchLimits& limits_;
  const int64_t max_nodes_;  // 0: none
  const int64_t time_ms_;    // 0: none
  const int vct_depth_;      // the level's reach (RootVctDepth)
  const std::chrono::steady_clock::time_point start_;
  int64_t vcf_nodes_ = 0;
  int64_t vct_nodes_ = 0;
  int64_t used_ = 0;
};

}  // namespace

SearchResult<Gomoku::Move> Gomoku::SearchRoot(Gomoku& game, const SearchLimits& limits,
                                              RootSearch search, std::string* note) {
  if (note) note->clear();
  // A move the level plays at random is the search's roll alone: no check overrides it.
  if (game.GetOutcome() != Outcome::kOngoing || PlaysRandomMove(limits, game.Hash())) {
    return search(limits);
  }
  RootChecks checks(game, limits);
  auto finish = [&](SearchResult<Move> r) {
    r.nodes = checks.used();
    r.elapsed_ms = static_cast<double>(checks.ElapsedMs());
    return r;
  };
  auto solved = [&](Move m, const char* how) {
    SearchResult<Move> r;
    r.best_move = m;
    r.has_move = true;
    r.pv = {m};
    // A win by fours or threats is proven. A five now is a win in 1; a longer line's length is
    // not known here, only that it wins, so the result is the outcome alone (outcome_only:
    // "win (proven)"). Reported as the bare kMateThreshold, it read "win in 1000" and was not
    // exact, so post-game analysis showed the position a ply before as a raw -28999.
    r.exact = true;
    if (game.ClassAt(game.SideToMove(), m) == kMakesFive) {
      r.score = WinIn(1);
    } else {
      r.score = 1;
      r.outcome_only = true;
    }
    if (note) *note = absl::StrCat(game.MoveToText(m), " wins by continuous ", how);
    return finish(std::move(r));
  };

  int64_t n = 0;
  const Move vcf = game.FindVcf(kMaxVcfDepth, static_cast<int>(checks.vcf_nodes()), &n);
  checks.Spent(n);
  if (vcf != kNoMove) return solved(vcf, "fours");
  // The fours were searched just above, deeper and with more positions.
  const Move vct = game.FindVct(checks.vct_depth(), static_cast<int>(checks.vct_nodes()), &n,
                                /*fours_searched=*/true);
  checks.Spent(n);
  if (vct != kNoMove) return solved(vct, "threats");

  // The candidates after which the opponent wins by fours or threats are left out of the search
  // (unless all are): it spends its time on moves not already lost, and the line it likes best
  // is not one the threat searches refute beyond its horizon.
  RootChecks::Candidates candidates, lost, safe;
  game.GenerateSearchMoves(candidates);
  if (candidates.size() > 1) checks.Filter(candidates, lost, safe);
  const bool excluding = !lost.empty() && lost.size() < candidates.size();
  if (excluding) game.ExcludeAtRoot(lost);
  struct Unexclude {
    Gomoku& game;
    ~Unexclude() { game.ClearRootExclusions(); }
  } unexclude{game};

  // The search runs on what is left, less a tenth kept for the checks after it.
  SearchLimits inner = limits;
  const int64_t spent = checks.ElapsedMs();
  if (limits.time_ms > 0) inner.time_ms = std::max<int64_t>(1, limits.time_ms * 9 / 10 - spent);
  if (inner.soft_time_ms > 0) inner.soft_time_ms = std::max<int64_t>(1, inner.soft_time_ms - spent);
  if (limits.max_nodes > 0) {
    inner.max_nodes =
        std::max<int64_t>(1, limits.max_nodes - limits.max_nodes / 10 - checks.used());
  }
  SearchResult<Move> result = search(inner);
  checks.Spent(result.nodes);
  if (note && excluding) {
    *note = absl::StrCat(lost.size(), " of ", candidates.size(),
                         " candidates lose to a forced line and were not searched");
  } else if (note && !lost.empty()) {
    *note = absl::StrCat("all ", candidates.size(), " candidates lose to a forced line");
  }
  if (!result.has_move || result.exact) return finish(std::move(result));
  const Move replacement = checks.Replacement(result.best_move, candidates, lost, safe);
  if (replacement != kNoMove) {
    if (note) {
      *note = absl::StrCat(game.MoveToText(result.best_move), " loses to a forced line; ",
                           game.MoveToText(replacement), " does not");
    }
    result.best_move = replacement;
    result.pv = {replacement};
  }
  return finish(std::move(result));
}

}  // namespace ply
