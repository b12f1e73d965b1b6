#include "engine/analysis/analysis.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"

namespace ply {
namespace {

// A score seen one ply later, from the mover's side now: negated when the turn passed to the
// other side, and a proven result one ply further away.
Score FromMover(Score later, bool same_side) {
  if (IsMateScore(later)) {
    int plies = MatePlies(later);
    bool mover_wins = (plies > 0) == same_side;
    int distance = std::abs(plies) + 1;
    return mover_wins ? WinIn(distance) : LossIn(distance);
  }
  return same_side ? later : -later;
}

// A score one ply earlier seen one ply later, from the side to move then: the inverse of
// FromMover.
Score ToLater(Score earlier, bool same_side) {
  if (IsMateScore(earlier)) {
    int plies = MatePlies(earlier);
    bool later_wins = (plies > 0) == same_side;
    int distance = std::max(1, std::abs(plies) - 1);
    return later_wins ? WinIn(distance) : LossIn(distance);
  }
  return same_side ? earlier : -earlier;
}

Mark MarkForDrop(double drop) {
  if (drop >= kBlunderDrop) return Mark::kBlunder;
  if (drop >= kMistakeDrop) return Mark::kMistake;
  if (drop >= kInaccuracyDrop) return Mark::kInaccuracy;
  return Mark::kNone;
}

}  // namespace

Difficulty AnalysisLevel(int64_t time_ms, int max_depth) {
  return Difficulty{.name = "analysis",
                    .max_depth = max_depth,
                    .random_move_chance = 0,
                    .eval_noise = 0,
                    .time_ms = static_cast<int>(std::clamp<int64_t>(time_ms, 0, 1 << 30)),
                    .perfect = true,
                    .description = "judges positions for post-game analysis"};
}

absl::StatusOr<SearchReport> JudgePosition(AnyGame& game, const AnalysisLimits& limits,
                                           SearchCache* cache) {
  SearchRequest request;
  request.level = AnalysisLevel(limits.time_ms, limits.max_depth);
  request.max_nodes = limits.max_nodes;
  request.stop = limits.stop;
  return game.ChooseMove(request, cache);
}

bool NeedsMoveJudgement(const SearchReport& judgement, std::string_view move) {
  return !judgement.exact && judgement.move != move;
}

absl::StatusOr<SearchReport> JudgeMove(AnyGame& game, std::string_view move,
                                       const SearchReport& judgement, const AnalysisLimits& limits,
                                       SearchCache* cache) {
  const Player mover = game.SideToMove();
  if (absl::Status s = game.Play(move); !s.ok()) return s;
  SearchReport out;
  const GameStatus status = game.Status();
  if (status.over) {
    out.score = status.winner < 0 ? 0 : status.winner == mover ? WinIn(1) : LossIn(1);
    out.exact = true;
  } else {
    AnalysisLimits child = limits;
    // The judge's root searched this move to one ply less than its own depth.
    const int depth = std::max(1, judgement.depth - 1);
    child.max_depth = limits.max_depth > 0 ? std::min(limits.max_depth, depth) : depth;
    absl::StatusOr<SearchReport> r = JudgePosition(game, child, cache);
    if (!r.ok()) {
      (void)game.Undo();
      return r.status();
    }
    out = *std::move(r);
    out.score = FromMover(out.score, game.SideToMove() == mover);
  }
  if (absl::Status s = game.Undo(); !s.ok()) return s;
  return out;
}

std::vector<double> SwingWeights(const std::vector<double>& chances) {
  std::vector<double> weights;
  if (chances.size() < 2) return weights;
  const size_t moves = chances.size() - 1;
  const size_t window = std::clamp<size_t>(chances.size() / 10, 2, 8);
  weights.reserve(moves);
  for (size_t i = 0; i < moves; ++i) {
    // The window ends at the position after move i (early moves share the first window).
    const size_t end = std::max(i + 2, std::min(window, chances.size()));
    const size_t begin = end > window ? end - window : 0;
    double mean = 0;
    for (size_t k = begin; k < end; ++k) mean += 100 * chances[k];
    mean /= static_cast<double>(end - begin);
    double var = 0;
    for (size_t k = begin; k < end; ++k)
      var += (100 * chances[k] - mean) * (100 * chances[k] - mean);
    var /= static_cast<double>(end - begin);
    weights.push_back(std::clamp(std::sqrt(var), 0.5, 12.0));
  }
  return weights;
}

double GameAccuracy(const std::vector<double>& accuracies, const std::vector<double>& weights) {
  if (accuracies.empty()) return 0;
  double weighted = 0, weight_sum = 0, inverse_sum = 0;
  for (size_t i = 0; i < accuracies.size(); ++i) {
    const double w = i < weights.size() ? weights[i] : 1.0;
    weighted += w * accuracies[i];
    weight_sum += w;
    inverse_sum += 1 / std::max(accuracies[i], 1.0);
  }
  const double harmonic = static_cast<double>(accuracies.size()) / inverse_sum;
  return std::clamp((weighted / weight_sum + harmonic) / 2, 0.0, 100.0);
}

std::string_view MarkSymbol(Mark mark) {
  switch (mark) {
    case Mark::kNone:
      return "";
    case Mark::kInaccuracy:
      return "?!";
    case Mark::kMistake:
      return "?";
    case Mark::kBlunder:
      return "??";
  }
  return "";
}

std::string_view MarkName(Mark mark) {
  switch (mark) {
    case Mark::kNone:
      return "none";
    case Mark::kInaccuracy:
      return "inaccuracy";
    case Mark::kMistake:
      return "mistake";
    case Mark::kBlunder:
      return "blunder";
  }
  return "none";
}

double MoveAccuracy(double win_chance_drop) {
  // The formula gives 99.9999 for no drop: a move that loses nothing is simply exact.
  if (win_chance_drop <= 0) return 100;
  double d = win_chance_drop * 100.0;
  return std::clamp(103.1668 * std::exp(-0.04354 * d) - 3.1669, 0.0, 100.0);
}

absl::StatusOr<std::vector<bool>> PositionsToJudge(std::string_view game,
                                                   const GameOptions& options,
                                                   const std::vector<std::string>& moves) {
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame(game, options);
  if (!g.ok()) return g.status();
  std::vector<bool> out;
  out.reserve(moves.size() + 1);
  for (size_t i = 0; i <= moves.size(); ++i) {
    out.push_back(!(*g)->Status().over);
    if (i == moves.size()) break;
    absl::Status s = (*g)->Play(moves[i]);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("move ", i + 1, " '", moves[i], "': ", s.message()));
    }
  }
  return out;
}

absl::StatusOr<GameAnalysis> AssembleAnalysis(
    std::string_view game, const GameOptions& options, const std::vector<std::string>& moves,
    const std::vector<std::optional<SearchReport>>& judgements,
    const std::vector<std::optional<SearchReport>>& played) {
  if (judgements.size() != moves.size() + 1) {
    return absl::InvalidArgumentError(absl::StrCat("need ", moves.size() + 1, " judgements for ",
                                                   moves.size(), " moves, got ",
                                                   judgements.size()));
  }
  if (!played.empty() && played.size() != moves.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("need ", moves.size(), " values of played moves, got ", played.size()));
  }
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame(game, options);
  if (!g.ok()) return g.status();
  const WinChanceCurve curve = WinChanceCurveFor(game);
  GameAnalysis analysis;
  analysis.game = std::string(game);
  // Proven values travel along the solver's own moves: a position reached by the best move from
  // a proven one is proven too, whatever its own (budget-bound) judgement says.
  std::vector<std::optional<SearchReport>> judged = judgements;
  for (size_t i = 0; i < moves.size(); ++i) {
    if ((*g)->Status().over || !judged[i].has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("position before move ", i + 1, " is over or has no judgement"));
    }
    const SearchReport& j = *judged[i];
    MoveVerdict v;
    v.ply = static_cast<int>(i);
    v.player = (*g)->SideToMove();
    v.move = moves[i];
    v.before = j.score;
    v.before_exact = j.exact;
    v.before_text = j.ScoreText();
    v.best_move = j.move;
    v.best_line = j.pv;
    absl::Status done = (*g)->Play(moves[i]);
    if (!done.ok()) {
      return absl::Status(done.code(),
                          absl::StrCat("move ", i + 1, " '", moves[i], "': ", done.message()));
    }
    v.move = (*g)->History().back();
    const bool best = v.move == v.best_move;
    const SearchReport* own = !played.empty() && played[i].has_value() ? &*played[i] : nullptr;
    GameStatus status = (*g)->Status();
    if (!status.over && j.exact && best && judged[i + 1].has_value() && !judged[i + 1]->exact) {
      SearchReport& next = *judged[i + 1];
      next.score = ToLater(j.score, (*g)->SideToMove() == v.player);
      next.exact = true;
      next.outcome_only = j.outcome_only;
      if (j.pv.size() > 1) {
        next.move = j.pv[1];
        next.pv.assign(j.pv.begin() + 1, j.pv.end());
      }
    }
    if (status.over) {
      if (judged[i + 1].has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the game is over after move ", i + 1, " but has a judgement there"));
      }
      // A game decided by a count ends with its margin, in the units its solver's proven
      // scores before the move used ("win by 64", then "win in 1", read as two different
      // things).
      v.after = status.points[0] >= 0       ? (v.player == 0 ? status.margin : -status.margin)
                : status.winner < 0         ? 0
                : status.winner == v.player ? WinIn(1)
                                            : LossIn(1);
      v.after_exact = true;
      v.after_text = SearchReport{.score = v.after, .exact = true}.ScoreText();
    } else if (!judged[i + 1].has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("no judgement of the position after move ", i + 1));
    } else if (judged[i + 1]->exact) {
      // The position after the move is proven: the truth beats any estimate of the move.
      const SearchReport& next = *judged[i + 1];
      v.after = FromMover(next.score, (*g)->SideToMove() == v.player);
      v.after_exact = true;
      v.after_text =
          SearchReport{.score = v.after, .exact = true, .outcome_only = next.outcome_only}
              .ScoreText();
    } else if (!j.exact && best) {
      // The judge's own value of its best move.
      v.after = j.score;
      v.after_exact = false;
      v.after_text = v.before_text;
      v.same_judge = true;
    } else if (!j.exact && own != nullptr) {
      v.after = own->score;
      v.after_exact = own->exact;
      v.after_text = own->ScoreText();
      v.same_judge = true;
    } else {
      const SearchReport& next = *judged[i + 1];
      v.after = FromMover(next.score, (*g)->SideToMove() == v.player);
      v.after_exact = next.exact;
      v.after_text =
          SearchReport{.score = v.after, .exact = next.exact, .outcome_only = next.outcome_only}
              .ScoreText();
    }
    v.win_before = WinChance(curve, v.before, v.before_exact);
    v.win_after = WinChance(curve, v.after, v.after_exact);
    v.exact_verdict = v.before_exact && v.after_exact;
    if (v.exact_verdict) {
      int was = ExactOutcome(v.before), now = ExactOutcome(v.after);
      v.mark = now >= was ? Mark::kNone : now < 0 ? Mark::kBlunder : Mark::kMistake;
    } else if (v.same_judge && !v.before_exact && !v.after_exact && v.after > v.before) {
      // The judge's search of this move found more than its best: the position was worth at
      // least that, and the move lost nothing.
      v.before = v.after;
      v.before_text = v.after_text;
      v.win_before = v.win_after;
    }
    double drop = best && !v.exact_verdict ? 0.0 : std::max(0.0, v.win_before - v.win_after);
    if (!v.exact_verdict && !best) v.mark = MarkForDrop(drop);
    v.accuracy = MoveAccuracy(drop);
    analysis.moves.push_back(std::move(v));
  }
  // The first player's win chance before each move and after the last, for the swing weights.
  std::vector<double> chances;
  for (const MoveVerdict& v : analysis.moves) {
    chances.push_back(v.player == 0 ? v.win_before : 1 - v.win_before);
  }
  if (!analysis.moves.empty()) {
    const MoveVerdict& last = analysis.moves.back();
    chances.push_back(last.player == 0 ? last.win_after : 1 - last.win_after);
  }
  const std::vector<double> weights = SwingWeights(chances);
  for (int p = 0; p < 2; ++p) {
    std::vector<double> accuracies, their_weights;
    PlayerSummary& s = analysis.players[p];
    for (size_t i = 0; i < analysis.moves.size(); ++i) {
      const MoveVerdict& v = analysis.moves[i];
      if ((v.player & 1) != p) continue;
      ++s.moves;
      accuracies.push_back(v.accuracy);
      their_weights.push_back(weights[i]);
      if (v.mark == Mark::kInaccuracy) ++s.inaccuracies;
      if (v.mark == Mark::kMistake) ++s.mistakes;
      if (v.mark == Mark::kBlunder) ++s.blunders;
    }
    s.accuracy = GameAccuracy(accuracies, their_weights);
  }
  return analysis;
}

absl::StatusOr<GameAnalysis> AnalyzeGame(std::string_view game, const GameOptions& options,
                                         const std::vector<std::string>& moves,
                                         const AnalysisLimits& limits, SearchCache* cache,
                                         const std::function<void(int, int)>& progress) {
  absl::StatusOr<std::vector<bool>> todo = PositionsToJudge(game, options, moves);
  if (!todo.ok()) return todo.status();
  const int total = static_cast<int>(std::count(todo->begin(), todo->end(), true));
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame(game, options);
  if (!g.ok()) return g.status();
  std::vector<std::optional<SearchReport>> judgements(moves.size() + 1);
  std::vector<std::optional<SearchReport>> played(moves.size());
  int done = 0;
  for (size_t i = 0; i <= moves.size(); ++i) {
    if ((*todo)[i]) {
      absl::StatusOr<SearchReport> r = JudgePosition(**g, limits, cache);
      if (!r.ok()) return r.status();
      if (i < moves.size() && NeedsMoveJudgement(*r, moves[i])) {
        absl::StatusOr<SearchReport> m = JudgeMove(**g, moves[i], *r, limits, cache);
        if (!m.ok()) return m.status();
        played[i] = *std::move(m);
      }
      judgements[i] = *std::move(r);
      if (progress) progress(++done, total);
    }
    if (i < moves.size()) {
      if (absl::Status s = (*g)->Play(moves[i]); !s.ok()) return s;
    }
  }
  return AssembleAnalysis(game, options, moves, judgements, played);
}

}  // namespace ply
