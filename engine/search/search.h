// Alpha-beta search over any `Game`: negamax with principal-variation search, iterative
// deepening that keeps only completed iterations, a transposition table, and move ordering by
// TT move, killer moves, the history heuristic and the game's own order.
//
// Budgets: a depth cap, a node budget (never exceeded), a time budget (the clock is read every
// 1024 nodes) and an external stop flag (read at every node). An iteration that is stopped
// midway is thrown away and its partial results are never stored.
//
// Exactness: every node also reports whether its score depends on a heuristic evaluation at the
// horizon. A root score that does not (or a proven win/loss score) is the true game value.
//
// The searcher owns its tables and can be reused for many searches of the same game type; it is
// not thread-safe (one per worker thread). Nothing in Search() allocates except the result.
#ifndef PLY_ENGINE_SEARCH_SEARCH_H_
#define PLY_ENGINE_SEARCH_SEARCH_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "engine/core/random.h"
#include "engine/core/types.h"
#include "engine/search/budget.h"
#include "engine/search/game_concept.h"
#include "engine/search/tt.h"

namespace ply {

template <class Move>
struct SearchResult {
  Move best_move{};
  bool has_move = false;
  Score score = 0;
  // Deepest completed iteration (0 when none completed or the move was random).
  int depth = 0;
  int64_t nodes = 0;
  double elapsed_ms = 0;
  std::vector<Move> pv;
  // The score is the game's true value (proven win, loss or draw).
  bool exact = false;
  // With `exact`: only the outcome is proven, not its margin (a win/loss/draw solve); the score
  // is then its sign, +1, 0 or -1, and no more than a bound on the true margin.
  bool outcome_only = false;
  // The move was chosen at random by the difficulty's random-move chance.
  bool random_move = false;
  // The search ended on a budget or the stop flag rather than by finishing its last iteration.
  bool stopped = false;

  double nodes_per_second() const {
    return elapsed_ms > 0 ? static_cast<double>(nodes) * 1000.0 / elapsed_ms : 0.0;
  }
};

// The difficulty's random-move roll for the position whose hash is `hash`: the generator it
// draws from (which goes on to pick the move) and whether the move is random. Searcher::Search
// rolls it first; code around a search (Gomoku's root checks) rolls the same to know beforehand.
inline Rng RandomMoveRng(const SearchLimits& limits, uint64_t hash) {
  return Rng(Mix64(limits.seed ^ hash));
}
inline bool RollsRandomMove(const SearchLimits& limits, Rng& rng) {
  return limits.random_move_chance > 0 && rng.Unit() < limits.random_move_chance;
}
inline bool PlaysRandomMove(const SearchLimits& limits, uint64_t hash) {
  Rng rng = RandomMoveRng(limits, hash);
  return RollsRandomMove(limits, rng);
}

template <Game G>
class Searcher {
 public:
  using Move = typename G::Move;
  using Result = SearchResult<Move>;
  // Called after each completed iteration with the result so far.
  using IterationCallback = std::function<void(const Result&)>;

  explicit Searcher(size_t tt_megabytes = 16) : tt_(tt_megabytes) {}

  // Forget everything learned (new opponent, new game).
  void Clear() {
    tt_.Clear();
    std::fill(&history_[0][0], &history_[0][0] + 2 * G::kHistorySize, 0);
  }

  // Searches `game` and leaves it as it was.
  Result Search(G& game, const SearchLimits& limits, const IterationCallback& on_iteration = {}) {
    budget_ = Budget(limits);
    limits_ = limits;
    nodes_ = 0;
    stopped_ = false;
    key_salt_ =
        limits.eval_noise != 0
            ? Mix64(limits.seed ^ (uint64_t{1} << 63) ^ static_cast<uint64_t>(limits.eval_noise))
            : 0;
    noise_seed_ = Mix64(limits.seed + 0x51);
    tt_.NewSearch();
    for (auto& k : killers_) k[0] = k[1] = G::kNoMove;
    AgeHistory();

    Result result;
    MoveListOf<G> root_moves;
    if (game.GetOutcome() != Outcome::kOngoing) return Finish(result);
    GenerateSearchMoves(game, root_moves);
    if (root_moves.empty()) return Finish(result);

    Rng rng = RandomMoveRng(limits, game.Hash());
    if (RollsRandomMove(limits, rng)) {
      result.best_move = root_moves[static_cast<int>(rng.Below(root_moves.size()))];
      result.has_move = true;
      result.random_move = true;
      result.pv = {result.best_move};
      return Finish(result);
    }

    // Until depth 1 completes, the answer is the first move in the game's order.
    OrderMoves(game, root_moves, G::kNoMove, 0);
    PickNext(root_moves, 0, 0);
    result.best_move = root_moves[0];
    result.has_move = true;
    result.pv = {result.best_move};

    int max_depth =
        limits.max_depth > 0 ? std::min(limits.max_depth, kMaxSearchPly - 1) : kMaxSearchPly - 1;
    for (int depth = 1; depth <= max_depth; ++depth) {
      bool heuristic = false;
      root_partial_move_ = G::kNoMove;
      Score score = Negamax(game, depth, 0, -kInfinity, kInfinity, heuristic);
      if (stopped_) {
        if (limits.keep_partial_iteration && result.depth > 0 && root_partial_move_ != G::kNoMove &&
            root_partial_move_ != result.best_move) {
          result.best_move = root_partial_move_;
          result.pv = {root_partial_move_};
        }
        break;
      }
      result.depth = depth;
      result.score = score;
      result.exact = !heuristic || IsMateScore(score);
      result.best_move = root_best_;
      if (pv_length_[0] > 0 && pv_[0][0] == root_best_) {
        result.pv.assign(pv_[0], pv_[0] + pv_length_[0]);
      } else {
        result.pv = {root_best_};
      }
      result.nodes = nodes_;
      result.elapsed_ms = ElapsedMs();
      if (on_iteration) on_iteration(result);
      // A proven value cannot change with more depth.
      if (result.exact) break;
      // Each iteration costs several times the one before: do not start one that cannot end.
      if (limits.soft_time_ms > 0) {
        if (ElapsedMs() > static_cast<double>(limits.soft_time_ms)) break;
      } else if (limits.time_ms > 0 && ElapsedMs() * 2.5 > static_cast<double>(limits.time_ms)) {
        break;
      }
      if (limits.max_nodes > 0 && nodes_ >= limits.max_nodes) break;
    }
    result.stopped = stopped_;
    return Finish(result);
  }

  int64_t nodes() const { return nodes_; }

 private:
  static constexpr int kHistoryMax = 1 << 16;

  Result Finish(Result& result) {
    result.nodes = nodes_;
    result.elapsed_ms = ElapsedMs();
    return std::move(result);
  }

  double ElapsedMs() const { return budget_.ElapsedMs(); }

  // True when the search must stop now. The flag and the node budget are read at every node
  // (the budget is never exceeded), the clock every 1024.
  bool ShouldStop() {
    if (stopped_) return true;
    if (budget_.NodesSpent(nodes_) || budget_.StopRaised() ||
        ((nodes_ & 1023) == 0 && budget_.TimeUp())) {
      stopped_ = true;
    }
    return stopped_;
  }

  void AgeHistory() {
    for (auto& side : history_) {
      for (int& h : side) h /= 8;
    }
  }

  Score Noise(uint64_t key) const {
    int n = limits_.eval_noise;
    return static_cast<Score>(Mix64(key ^ noise_seed_) % static_cast<uint64_t>(2 * n + 1)) - n;
  }

  // The moves the search considers: all legal moves, unless the game narrows them for the AI
  // (Gomoku's candidate cells near the stones) with GenerateSearchMoves.
  static void GenerateSearchMoves(const G& game, MoveListOf<G>& moves) {
    if constexpr (requires { game.GenerateSearchMoves(moves); }) {
      game.GenerateSearchMoves(moves);
    } else {
      game.GenerateMoves(moves);
    }
  }

  // Scores the moves for ordering into `keys_[ply]`; the best move is picked lazily.
  void OrderMoves(const G& game, MoveListOf<G>& moves, Move tt_move, int ply) {
    int side = game.SideToMove();
    int* keys = keys_[ply];
    for (int i = 0; i < moves.size(); ++i) {
      Move m = moves[i];
      int key;
      if (m == tt_move) {
        key = 1 << 30;
      } else if (m == killers_[ply][0]) {
        key = (1 << 29) + 1;
      } else if (m == killers_[ply][1]) {
        key = 1 << 29;
      } else {
        key = game.MoveOrderScore(m) + history_[side][G::HistoryIndex(m)];
      }
      keys[i] = key;
    }
  }

  // Moves the best-keyed remaining move to position i.
  void PickNext(MoveListOf<G>& moves, int i, int ply) {
    int* keys = keys_[ply];
    int best = i;
    for (int j = i + 1; j < moves.size(); ++j) {
      if (keys[j] > keys[best]) best = j;
    }
    if (best != i) {
      std::swap(moves[i], moves[best]);
      std::swap(keys[i], keys[best]);
    }
  }

  // Optional hooks a game may offer the search (game_concept.h says what each promises).
  static constexpr bool kTableMoveFirst = requires(const G& g, Move m) { g.IsSearchMove(m); };
  static constexpr bool kLeavesUnplayed = requires(const G& g, Move m, Score& s) {
    g.EvaluateAfter(m, s);
  };

  // What every node does on entry: no line yet, the stop check, the node count. False when the
  // search has stopped.
  bool EnterNode(int ply) {
    pv_length_[ply] = 0;
    if (ShouldStop()) return false;
    ++nodes_;
    return true;
  }

  // No line from a node at `ply` can end sooner than the next ply: the window narrowed to what
  // is still reachable. True when nothing is left of it.
  static bool NarrowToReachable(int ply, Score& alpha, Score& beta) {
    alpha = std::max(alpha, LossIn(ply + 1));
    beta = std::min(beta, WinIn(ply + 1));
    return alpha >= beta;
  }

  // A leaf's score: its evaluation, moved by the noise of its key.
  Score LeafScore(Score eval, uint64_t key, bool& heuristic) const {
    heuristic = true;
    return limits_.eval_noise != 0 ? eval + Noise(key) : eval;
  }

  // Negamax at depth 0 of the position `m` leads to, for a game whose EvaluateAfter gave its
  // evaluation `eval` without playing it (and so promises the move does not end the game): the
  // same steps as Negamax's, so the search is the same either way.
  Score LeafAfter(const G& game, Move m, Score eval, int ply, Score alpha, Score beta,
                  bool& heuristic) {
    if (!EnterNode(ply)) return 0;
    if (NarrowToReachable(ply, alpha, beta)) return alpha;
    return LeafScore(eval, game.HashAfter(m), heuristic);
  }

  Score Negamax(G& game, int depth, int ply, Score alpha, Score beta, bool& heuristic) {
    if (!EnterNode(ply)) return 0;

    switch (game.GetOutcome()) {
      case Outcome::kOngoing:
        break;
      case Outcome::kWin:
        return WinIn(ply);
      case Outcome::kLoss:
        return LossIn(ply);
      case Outcome::kDraw:
        return 0;
    }

    if (NarrowToReachable(ply, alpha, beta)) return alpha;

    if (depth <= 0 || ply >= kMaxSearchPly - 1)
      return LeafScore(game.Evaluate(), game.Hash(), heuristic);

    const uint64_t key = game.Hash() ^ key_salt_;
    Move tt_move = G::kNoMove;
    if (const auto* entry = tt_.Probe(key)) {
      tt_move = entry->move;
      if (ply > 0 && entry->depth >= depth) {
        Score s = TranspositionTable<Move>::ScoreFromTT(entry->score, ply);
        Bound b = entry->bound();
        if (b == Bound::kExact || (b == Bound::kLower && s >= beta) ||
            (b == Bound::kUpper && s <= alpha)) {
          heuristic = entry->heuristic();
          return s;
        }
      }
    }

    const Score alpha_orig = alpha;
    Score best = -kInfinity;
    Move best_move = G::kNoMove;
    bool any_heuristic = false;
    bool cutoff_heuristic = false;
    int searched = 0;
    typename G::UndoInfo undo;
    // Searches one move; true when the node is done (a cut-off, or the search stopped).
    auto search_move = [&](Move m) {
      // A game that knows the position's key before the move is made lets the table's bucket
      // load while Make runs; the child probes it only above the leaves.
      if constexpr (requires { game.HashAfter(m); }) {
        if (depth > 1) tt_.Prefetch(game.HashAfter(m) ^ key_salt_);
      }
      bool child_heuristic = false;
      Score score;
      // A leaf the game can evaluate unplayed is scored as Negamax would score it once played.
      Score leaf_eval = 0;
      bool leaf = false;
      if constexpr (kLeavesUnplayed) leaf = depth == 1 && game.EvaluateAfter(m, leaf_eval);
      // The child's score within the window (a, b), from this node's side.
      auto child = [&](Score a, Score b) -> Score {
        if constexpr (kLeavesUnplayed) {
          if (leaf) return -LeafAfter(game, m, leaf_eval, ply + 1, -b, -a, child_heuristic);
        }
        return -Negamax(game, depth - 1, ply + 1, -b, -a, child_heuristic);
      };
      if (!leaf) game.Make(m, undo);
      if (searched++ == 0) {
        score = child(alpha, beta);
      } else {
        score = child(alpha, alpha + 1);
        if (score > alpha && score < beta && !stopped_) {
          child_heuristic = false;
          score = child(alpha, beta);
        }
      }
      if (!leaf) game.Unmake(m, undo);
      if (stopped_) return true;
      any_heuristic |= child_heuristic;

      if (score > best) {
        best = score;
        best_move = m;
        if (score > alpha) {
          alpha = score;
          // Searched to the end with a full window: the best root move of this iteration so far.
          if (ply == 0) root_partial_move_ = m;
          pv_[ply][0] = m;
          for (int j = 0; j < pv_length_[ply + 1]; ++j) pv_[ply][j + 1] = pv_[ply + 1][j];
          pv_length_[ply] = pv_length_[ply + 1] + 1;
          if (alpha >= beta) {
            // A lower bound rests on the refuting move alone.
            cutoff_heuristic = child_heuristic;
            if (m != killers_[ply][0]) {
              killers_[ply][1] = killers_[ply][0];
              killers_[ply][0] = m;
            }
            int& h = history_[game.SideToMove()][G::HistoryIndex(m)];
            h = std::min(h + depth * depth, kHistoryMax);
            return true;
          }
        }
      }
      return false;
    };

    // A game whose move list costs more than a move (Gomoku's candidates) says whether the
    // table's move can be played here; it is searched before the list is made, which a cut-off
    // on it then saves. The list holds it (the same position makes the same list; where a
    // memo's answer differs it is simply one move more) and gives the rest the order it would
    // have, read after that move's subtree updated the history. Not at the root, whose list the
    // root's exclusions narrow.
    bool tt_move_first = false;
    if constexpr (kTableMoveFirst) {
      tt_move_first = ply > 0 && tt_move != G::kNoMove && game.IsSearchMove(tt_move);
    }
    bool done = tt_move_first && search_move(tt_move);
    if (!done) {
      MoveListOf<G> moves;
      GenerateSearchMoves(game, moves);
      OrderMoves(game, moves, tt_move, ply);
      int first = 0;
      if (tt_move_first && !moves.empty()) {
        PickNext(moves, 0, ply);
        if (moves[0] == tt_move) first = 1;
      }
      for (int i = first; i < moves.size(); ++i) {
        PickNext(moves, i, ply);
        if (search_move(moves[i])) break;
      }
    }
    if (stopped_) return 0;

    Bound bound = best >= beta ? Bound::kLower : best > alpha_orig ? Bound::kExact : Bound::kUpper;
    heuristic = bound == Bound::kLower ? cutoff_heuristic : any_heuristic;
    tt_.Store(key, best_move, best, ply, depth, bound, heuristic, G::kNoMove);
    if (ply == 0) root_best_ = best_move;
    return best;
  }

  TranspositionTable<Move> tt_;
  SearchLimits limits_;
  Budget budget_;
  int64_t nodes_ = 0;
  bool stopped_ = false;
  uint64_t key_salt_ = 0;
  uint64_t noise_seed_ = 0;
  Move root_best_{};
  Move root_partial_move_{};
  Move killers_[kMaxSearchPly][2];
  int history_[2][G::kHistorySize] = {};
  int keys_[kMaxSearchPly][G::kMaxMoves];
  Move pv_[kMaxSearchPly][kMaxSearchPly];
  int pv_length_[kMaxSearchPly] = {};
};

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_SEARCH_H_
