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
    const std::vector<std::optional<SearchReport>>& judgements) {
  if (judgements.size() != moves.size() + 1) {
    return absl::InvalidArgumentError(absl::StrCat("need ", moves.size() + 1, " judgements for ",
                                                   moves.size(), " moves, got ",
                                                   judgements.size()));
  }
  absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame(game, options);
  if (!g.ok()) return g.status();
  const WinChanceCurve curve = WinChanceCurveFor(game);
  GameAnalysis analysis;
  analysis.game = std::string(game);
  double accuracy_sum[2] = {0, 0};
  for (size_t i = 0; i < moves.size(); ++i) {
    if ((*g)->Status().over || !judgements[i].has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("position before move ", i + 1, " is over or has no judgement"));
    }
    const SearchReport& j = *judgements[i];
    MoveVerdict v;
    v.ply = static_cast<int>(i);
    v.player = (*g)->SideToMove();
    v.move = moves[i];
    v.before = j.score;
    v.before_exact = j.exact;
    v.before_text = j.ScoreText();
    v.best_move = j.move;
    v.best_line = j.pv;
    absl::Status played = (*g)->Play(moves[i]);
    if (!played.ok()) {
      return absl::Status(played.code(),
                          absl::StrCat("move ", i + 1, " '", moves[i], "': ", played.message()));
    }
    v.move = (*g)->History().back();
    GameStatus status = (*g)->Status();
    if (status.over) {
      if (judgements[i + 1].has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the game is over after move ", i + 1, " but has a judgement there"));
      }
      v.after = status.winner < 0 ? 0 : status.winner == v.player ? WinIn(1) : LossIn(1);
      v.after_exact = true;
      v.after_text = SearchReport{.score = v.after, .exact = true}.ScoreText();
    } else {
      if (!judgements[i + 1].has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("no judgement of the position after move ", i + 1));
      }
      const SearchReport& next = *judgements[i + 1];
      v.after = FromMover(next.score, (*g)->SideToMove() == v.player);
      v.after_exact = next.exact;
      v.after_text =
          SearchReport{.score = v.after, .exact = next.exact, .outcome_only = next.outcome_only}
              .ScoreText();
    }
    v.win_before = WinChance(curve, v.before, v.before_exact);
    v.win_after = WinChance(curve, v.after, v.after_exact);
    v.exact_verdict = v.before_exact && v.after_exact;
    const bool best = v.move == v.best_move;
    double drop = best ? 0.0 : std::max(0.0, v.win_before - v.win_after);
    if (v.exact_verdict) {
      int was = ExactOutcome(v.before), now = ExactOutcome(v.after);
      v.mark = now >= was ? Mark::kNone : now < 0 ? Mark::kBlunder : Mark::kMistake;
      drop = std::max(0.0, v.win_before - v.win_after);
    } else if (!best) {
      v.mark = MarkForDrop(drop);
    }
    v.accuracy = MoveAccuracy(drop);
    PlayerSummary& p = analysis.players[v.player & 1];
    ++p.moves;
    accuracy_sum[v.player & 1] += v.accuracy;
    if (v.mark == Mark::kInaccuracy) ++p.inaccuracies;
    if (v.mark == Mark::kMistake) ++p.mistakes;
    if (v.mark == Mark::kBlunder) ++p.blunders;
    analysis.moves.push_back(std::move(v));
  }
  for (int p = 0; p < 2; ++p) {
    PlayerSummary& s = analysis.players[p];
    s.accuracy = s.moves > 0 ? accuracy_sum[p] / s.moves : 0;
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
  int done = 0;
  for (size_t i = 0; i <= moves.size(); ++i) {
    if ((*todo)[i]) {
      absl::StatusOr<SearchReport> r = JudgePosition(**g, limits, cache);
      if (!r.ok()) return r.status();
      judgements[i] = *std::move(r);
      if (progress) progress(++done, total);
    }
    if (i < moves.size()) {
      if (absl::Status s = (*g)->Play(moves[i]); !s.ok()) return s;
    }
  }
  return AssembleAnalysis(game, options, moves, judgements);
}

}  // namespace ply
