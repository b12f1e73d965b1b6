// GameAdapter<G> puts a concrete game behind AnyGame: it keeps the move history (with undo
// records) and the canonical move texts, and runs Searcher<G> for ChooseMove. A game that can
// solve positions exactly offers `static std::optional<SearchResult<Move>> Solve(G&, const
// SearchLimits&)`; the `perfect` level tries it first and falls back to the search (a result
// without a move is a solve that did not finish: its nodes and time come off the budget). A game
// with checks of its own around the search at the root offers `static SearchResult<Move>
// SearchRoot(G&, const SearchLimits&, FunctionRef<SearchResult<Move>(const SearchLimits&)>)`:
// it is called in place of the search, runs the search through the callback on the limits it
// chooses, and keeps its checks' nodes and time within the limits it was given (Gomoku's
// threat solvers). A game that spends a clock budget its own way offers `static void
// SetTimeUse(SearchLimits&)`, called on the search's limits before either (Gomoku's, so that
// its levels here and in pbrain-ply search alike).
#ifndef PLY_ENGINE_REGISTRY_GAME_ADAPTER_H_
#define PLY_ENGINE_REGISTRY_GAME_ADAPTER_H_

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/registry/any_game.h"
#include "engine/search/perft.h"
#include "engine/search/search.h"

namespace ply {

template <Game G>
class GameAdapter final : public AnyGame {
 public:
  using Move = typename G::Move;

  GameAdapter(G game, const GameInfo* info) : game_(std::move(game)), info_(info) {}

  const GameInfo& Info() const override { return *info_; }
  GameOptions Options() const override { return game_.EffectiveOptions(); }
  std::unique_ptr<AnyGame> Clone() const override { return std::make_unique<GameAdapter>(*this); }
  Player SideToMove() const override { return game_.SideToMove(); }
  GameStatus Status() const override { return game_.Status(); }
  const std::vector<std::string>& History() const override { return texts_; }

  std::vector<std::string> LegalMoves() const override {
    std::vector<std::string> out;
    if (game_.GetOutcome() != Outcome::kOngoing) return out;
    MoveListOf<G> moves;
    game_.GenerateMoves(moves);
    for (Move m : moves) out.push_back(game_.MoveToText(m));
    return out;
  }

  absl::Status Play(std::string_view text) override {
    if (game_.GetOutcome() != Outcome::kOngoing) {
      return absl::FailedPreconditionError(
          absl::StrCat("the game is over (", game_.Status().reason, ")"));
    }
    absl::StatusOr<Move> move = game_.ParseMove(text);
    if (!move.ok()) return move.status();
    PlayMove(*move);
    return absl::OkStatus();
  }

  absl::Status Undo() override {
    if (moves_.empty()) return absl::FailedPreconditionError("no move to take back");
    game_.Unmake(moves_.back().first, moves_.back().second);
    moves_.pop_back();
    texts_.pop_back();
    return absl::OkStatus();
  }

  std::string Render() const override { return game_.Render(); }
  uint64_t Hash() const override { return game_.Hash(); }
  uint64_t Perft(int depth) override { return ply::Perft(game_, depth); }

  absl::StatusOr<SearchReport> ChooseMove(const SearchRequest& request,
                                          SearchCache* cache) override {
    if (game_.GetOutcome() != Outcome::kOngoing) {
      return absl::FailedPreconditionError(
          absl::StrCat("the game is over (", game_.Status().reason, ")"));
    }
    // Every millisecond from here counts against the budget: the deadline is the caller's,
    // whatever the worker does before its search starts.
    const auto start = std::chrono::steady_clock::now();
    SearchLimits limits = ToLimits(request);
    std::optional<SearchResult<Move>> result;
    if (!request.level.policy.empty()) {
      if constexpr (requires { G::PlayPolicy(game_, request.level.policy, limits); }) {
        result = G::PlayPolicy(game_, request.level.policy, limits);
      }
      if (!result) {
        return absl::InvalidArgumentError(absl::StrCat("level '", request.level.name,
                                                       "' asks for an unknown player '",
                                                       request.level.policy, "'"));
      }
      return ToReport(*result);
    }
    // A solve that found no move: its nodes, counted against the budget and in the report.
    int64_t solver_nodes = 0;
    if constexpr (requires { G::Solve(game_, limits); }) {
      if (request.level.perfect) {
        result = G::Solve(game_, limits);
        if (result && !result->has_move) {
          solver_nodes = result->nodes;
          if (limits.max_nodes > 0) {
            limits.max_nodes = std::max<int64_t>(1, limits.max_nodes - solver_nodes);
          }
          result.reset();
        }
      }
    }
    if (!result) {
      // Without a cache the tables live for this call only.
      std::unique_ptr<SearcherSlot> local;
      if (cache == nullptr) local = std::make_unique<SearcherSlot>(kDefaultTTMegabytes);
      SearcherSlot& slot = cache != nullptr ? cache->Get<SearcherSlot>([cache] {
        return std::make_unique<SearcherSlot>(cache->tt_megabytes());
      })
                                            : *local;
      // The time before the search (a solve that found no move, this game's tables made on a
      // worker that last served other games) comes off its budget and goes into the report. With
      // nothing left, the search has 1 ms: it answers with the first move of its order, as for a
      // 1 ms budget; a stop flag raised meanwhile stops it at its first node.
      const double before_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (limits.time_ms > 0) {
        limits.time_ms = std::max<int64_t>(1, limits.time_ms - static_cast<int64_t>(before_ms));
      }
      typename Searcher<G>::IterationCallback callback;
      if (request.on_iteration) {
        callback = [&](const SearchResult<Move>& r) { request.on_iteration(ToReport(r)); };
      }
      auto search = [&](const SearchLimits& l) {
        return slot.searcher->Search(game_, l, callback);
      };
      if constexpr (requires { G::SetTimeUse(limits); }) G::SetTimeUse(limits);
      if constexpr (requires { G::SearchRoot(game_, limits, search); }) {
        result = G::SearchRoot(game_, limits, search);
      } else {
        result = search(limits);
      }
      result->nodes += solver_nodes;
      result->elapsed_ms += before_ms;
    }
    return ToReport(*result);
  }

  // Plays a move known to be legal (used by replays and tests).
  void PlayMove(Move m) {
    texts_.push_back(game_.MoveToText(m));
    moves_.emplace_back(m, typename G::UndoInfo{});
    game_.Make(m, moves_.back().second);
  }

  const G& game() const { return game_; }

 private:
  static constexpr size_t kDefaultTTMegabytes = 16;

  struct SearcherSlot : SearchCache::Slot {
    explicit SearcherSlot(size_t mb) : searcher(std::make_unique<Searcher<G>>(mb)) {}
    void Touch() override { searcher->Clear(); }
    std::unique_ptr<Searcher<G>> searcher;
  };

  static SearchLimits ToLimits(const SearchRequest& request) {
    SearchLimits limits;
    limits.max_depth = request.level.max_depth;
    if (request.max_depth > 0) {
      limits.max_depth =
          limits.max_depth > 0 ? std::min(limits.max_depth, request.max_depth) : request.max_depth;
    }
    limits.time_ms = request.level.time_ms;
    if (request.time_ms > 0) {
      limits.time_ms =
          limits.time_ms > 0 ? std::min<int64_t>(limits.time_ms, request.time_ms) : request.time_ms;
    }
    limits.max_nodes = request.max_nodes;
    limits.stop = request.stop;
    limits.eval_noise = request.level.eval_noise;
    limits.random_move_chance = request.level.random_move_chance;
    limits.seed = request.seed;
    return limits;
  }

  SearchReport ToReport(const SearchResult<Move>& r) const {
    SearchReport report;
    if (r.has_move) report.move = game_.MoveToText(r.best_move);
    report.score = r.score;
    report.depth = r.depth;
    report.nodes = r.nodes;
    report.elapsed_ms = r.elapsed_ms;
    report.nodes_per_second = r.nodes_per_second();
    report.exact = r.exact;
    report.outcome_only = r.exact && r.outcome_only;
    report.random_move = r.random_move;
    report.stopped = r.stopped;
    // The PV is printed by replaying it on a copy, since move text can depend on the position.
    G copy = game_;
    for (Move m : r.pv) {
      if (copy.GetOutcome() != Outcome::kOngoing) break;
      MoveListOf<G> legal;
      copy.GenerateMoves(legal);
      if (!legal.contains(m)) break;
      report.pv.push_back(copy.MoveToText(m));
      typename G::UndoInfo undo;
      copy.Make(m, undo);
    }
    return report;
  }

  G game_;
  const GameInfo* info_;
  std::vector<std::pair<Move, typename G::UndoInfo>> moves_;
  std::vector<std::string> texts_;
};

}  // namespace ply

#endif  // PLY_ENGINE_REGISTRY_GAME_ADAPTER_H_
