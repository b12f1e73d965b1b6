#include "lobby-server/analysis/kept_verdicts.h"

#include <algorithm>
#include <utility>

#include "engine/analysis/analysis.h"

namespace ply::lobby {

int KeptVerdicts::Take(int64_t match_id, const std::vector<std::string>& moves,
                       std::vector<int>& positions,
                       std::vector<std::optional<SearchReport>>& judgements,
                       std::vector<std::optional<SearchReport>>& played) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kept_.find(match_id);
  if (it == kept_.end()) return 0;
  Kept& kept = it->second;
  kept.used = ++clock_;
  // A position is the same when the moves before it are.
  size_t same = 0;
  while (same < kept.line.size() && same < moves.size() && kept.line[same] == moves[same]) ++same;
  judgements.resize(moves.size() + 1);
  played.resize(moves.size());
  int taken = 0;
  std::vector<int> left;
  for (const int p : positions) {
    const size_t i = static_cast<size_t>(p);
    bool have = i <= same && i < kept.verdicts.size() && kept.verdicts[i].judgement.has_value();
    // Where a move was played, its value must be the one of that move. A position judged when it
    // was the last (no move played yet) holds too where the move played since needs no value of
    // its own: the judge's best, or any move of an exact verdict (as a fresh judge would answer).
    bool needs_no_value = false;
    if (have && i < moves.size() && kept.verdicts[i].move != moves[i]) {
      have = kept.verdicts[i].move.empty() &&
             !NeedsMoveJudgement(*kept.verdicts[i].judgement, moves[i]);
      needs_no_value = have;
    }
    if (!have) {
      left.push_back(p);
      continue;
    }
    judgements[i] = kept.verdicts[i].judgement;
    if (i < moves.size() && !needs_no_value) played[i] = kept.verdicts[i].played;
    ++taken;
  }
  positions = std::move(left);
  return taken;
}

void KeptVerdicts::Keep(int64_t match_id, const std::vector<std::string>& moves, int position,
                        Verdict verdict) {
  if (max_matches_ <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  Kept& kept = kept_[match_id];
  // A match's moves never change: a line that differs from the kept one replaces it.
  const size_t n = std::min(kept.line.size(), moves.size());
  if (!std::equal(kept.line.begin(), kept.line.begin() + static_cast<std::ptrdiff_t>(n),
                  moves.begin())) {
    kept = Kept{};
  }
  if (moves.size() > kept.line.size()) kept.line = moves;
  if (kept.verdicts.size() <= static_cast<size_t>(position)) kept.verdicts.resize(position + 1);
  kept.verdicts[position] = std::move(verdict);
  kept.used = ++clock_;
  while (kept_.size() > static_cast<size_t>(max_matches_)) {
    auto oldest = std::min_element(kept_.begin(), kept_.end(), [](const auto& a, const auto& b) {
      return a.second.used < b.second.used;
    });
    kept_.erase(oldest);
  }
}

void KeptVerdicts::Drop(int64_t match_id) {
  std::lock_guard<std::mutex> lock(mu_);
  kept_.erase(match_id);
}

}  // namespace ply::lobby
