// The verdicts of positions the analyzer has judged, kept in memory per match so that asking
// again (a spectator following a bot match, or the analysis once it is over) judges only the
// positions played since. A position's verdict holds while the moves before it are the same; the
// played move's value also needs the same move there. The matches used least recently are
// dropped beyond a bound. Thread-safe.
#ifndef PLY_LOBBY_SERVER_ANALYSIS_KEPT_VERDICTS_H_
#define PLY_LOBBY_SERVER_ANALYSIS_KEPT_VERDICTS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/registry/any_game.h"

namespace ply::lobby {

class KeptVerdicts {
 public:
  // A position's verdict as judged: the judge's report and, when the judge was asked about
  // `move` (the move played there), that move's value.
  struct Verdict {
    std::optional<SearchReport> judgement;
    std::optional<SearchReport> played;
    std::string move;
  };

  // Keeps at most `max_matches` matches (0: none).
  explicit KeptVerdicts(int max_matches) : max_matches_(max_matches) {}

  // For match `match_id` along `moves`: fills `judgements` (moves.size() + 1) and `played`
  // (moves.size()) where a kept verdict holds, removes those positions from `positions`, and
  // returns how many it filled.
  int Take(int64_t match_id, const std::vector<std::string>& moves, std::vector<int>& positions,
           std::vector<std::optional<SearchReport>>& judgements,
           std::vector<std::optional<SearchReport>>& played);
  // Keeps the verdict of `position` of match `match_id` along `moves`.
  void Keep(int64_t match_id, const std::vector<std::string>& moves, int position, Verdict verdict);
  // The match's analysis is stored: its verdicts are no longer needed.
  void Drop(int64_t match_id);

 private:
  // The verdicts of one match's positions (index: moves played before), along `line`.
  struct Kept {
    std::vector<std::string> line;
    std::vector<Verdict> verdicts;
    uint64_t used = 0;
  };

  const int max_matches_;
  std::mutex mu_;
  std::map<int64_t, Kept> kept_;
  uint64_t clock_ = 0;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_ANALYSIS_KEPT_VERDICTS_H_
