// KeptVerdicts on its own: what a later request takes from the verdicts kept for a match (only
// positions whose moves before them are the same, and only with the value of the move played
// there),
// a differing line, the bound on matches kept (least recently used go first), and Drop.
#include "lobby-server/analysis/kept_verdicts.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace ply::lobby {
namespace {

using Reports = std::vector<std::optional<SearchReport>>;

SearchReport Report(int score) {
  SearchReport r;
  r.score = score;
  return r;
}

// Keeps a verdict for every position of `moves` (the judgement scored 100 + position, the
// played move's value 200 + position).
void KeepAll(KeptVerdicts& kept, int64_t match, const std::vector<std::string>& moves) {
  for (size_t i = 0; i <= moves.size(); ++i) {
    KeptVerdicts::Verdict v{.judgement = Report(100 + static_cast<int>(i))};
    if (i < moves.size()) {
      v.played = Report(200 + static_cast<int>(i));
      v.move = moves[i];
    }
    kept.Keep(match, moves, static_cast<int>(i), v);
  }
}

// What Take fills for every position of `moves`: the positions it left, the judgements' scores
// (-1 where none).
struct Taken {
  int count = 0;
  std::vector<int> left;
  std::vector<int> judged;
  std::vector<int> played;
};
Taken TakeAll(KeptVerdicts& kept, int64_t match, const std::vector<std::string>& moves) {
  Taken t;
  for (int i = 0; i <= static_cast<int>(moves.size()); ++i) t.left.push_back(i);
  Reports judgements, played;
  t.count = kept.Take(match, moves, t.left, judgements, played);
  for (const auto& j : judgements) t.judged.push_back(j ? j->score : -1);
  for (const auto& p : played) t.played.push_back(p ? p->score : -1);
  return t;
}

TEST(KeptVerdicts, ALaterRequestTakesEveryKeptPositionAndJudgesOnlyTheNewOnes) {
  KeptVerdicts kept(4);
  KeepAll(kept, 1, {"a", "b"});
  // Two more moves were played since. Positions 0 and 1 are kept with their moves' values;
  // position 2 was the last then, with no move to value: now "c" was played there, which is not
  // the judge's best (the kept report names none), and its value is wanted too, so it is judged
  // again with 3 and 4 (a judge is asked for both at once).
  const Taken t = TakeAll(kept, 1, {"a", "b", "c", "d"});
  EXPECT_EQ(t.count, 2);
  EXPECT_EQ(t.left, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(t.judged, (std::vector<int>{100, 101, -1, -1, -1}));
  EXPECT_EQ(t.played, (std::vector<int>{200, 201, -1, -1}));
  // The same moves again: everything is kept, nothing left to judge.
  const Taken again = TakeAll(kept, 1, {"a", "b"});
  EXPECT_EQ(again.count, 3);
  EXPECT_TRUE(again.left.empty());
  EXPECT_EQ(again.judged, (std::vector<int>{100, 101, 102}));
}

// The last position of a match followed live is kept before its move is played. Once the move
// is there, the verdict still answers where the move needs no value of its own, as a fresh judge
// would answer: it is the judge's best, or the verdict is exact (every move's value follows from
// the next position's). Any other move is judged again.
TEST(KeptVerdicts, TheLastPositionKeptHoldsOnceTheJudgesBestMoveIsPlayedThere) {
  KeptVerdicts kept(4);
  SearchReport best = Report(50);
  best.move = "c";
  kept.Keep(1, {"a", "b"}, 2, {.judgement = best});
  SearchReport exact = Report(60);
  exact.move = "y";
  exact.exact = true;
  kept.Keep(2, {"a", "b"}, 2, {.judgement = exact});
  kept.Keep(3, {"a", "b"}, 2, {.judgement = best});
  // Match 1: "c", the judge's best, was played: taken, with no value of its own.
  const Taken played_best = TakeAll(kept, 1, {"a", "b", "c"});
  EXPECT_EQ(played_best.count, 1);
  EXPECT_EQ(played_best.left, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(played_best.judged, (std::vector<int>{-1, -1, 50, -1}));
  EXPECT_EQ(played_best.played, (std::vector<int>{-1, -1, -1}));
  // Match 2: an exact verdict holds whatever was played there.
  const Taken after_exact = TakeAll(kept, 2, {"a", "b", "x"});
  EXPECT_EQ(after_exact.count, 1);
  EXPECT_EQ(after_exact.judged, (std::vector<int>{-1, -1, 60, -1}));
  // Match 3: "x" was played, not the judge's best: its value is wanted, so the position is
  // judged again.
  const Taken other = TakeAll(kept, 3, {"a", "b", "x"});
  EXPECT_EQ(other.count, 0);
  EXPECT_EQ(other.left, (std::vector<int>{0, 1, 2, 3}));
}

TEST(KeptVerdicts, APositionWhoseMovesBeforeItDifferIsJudgedAfresh) {
  KeptVerdicts kept(4);
  KeepAll(kept, 1, {"a", "b", "c"});
  // The line differs from the second move on: positions 0 and 1 are the same, but at 1 another
  // move was played, so its verdict (which values "b") does not hold; 2 and 3 are other positions.
  const Taken t = TakeAll(kept, 1, {"a", "x", "c"});
  EXPECT_EQ(t.count, 1);
  EXPECT_EQ(t.left, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(t.judged, (std::vector<int>{100, -1, -1, -1}));
  EXPECT_EQ(t.played, (std::vector<int>{200, -1, -1}));
  // Keeping along the differing line replaces the old one altogether.
  kept.Keep(1, {"a", "x", "c"}, 3, {.judgement = Report(7)});
  const Taken after = TakeAll(kept, 1, {"a", "x", "c"});
  EXPECT_EQ(after.count, 1);
  EXPECT_EQ(after.judged, (std::vector<int>{-1, -1, -1, 7}));
}

TEST(KeptVerdicts, KeepsAtMostItsBoundOfMatchesDroppingTheLeastRecentlyUsed) {
  KeptVerdicts kept(2);
  KeepAll(kept, 1, {"a"});
  KeepAll(kept, 2, {"a"});
  // Match 1 is asked about again: match 2 is now the least recently used.
  EXPECT_EQ(TakeAll(kept, 1, {"a"}).count, 2);
  KeepAll(kept, 3, {"a"});
  EXPECT_EQ(TakeAll(kept, 1, {"a"}).count, 2);
  EXPECT_EQ(TakeAll(kept, 2, {"a"}).count, 0);
  EXPECT_EQ(TakeAll(kept, 3, {"a"}).count, 2);
  // Another match's verdicts never answer for this one.
  EXPECT_EQ(TakeAll(kept, 4, {"a"}).count, 0);
}

TEST(KeptVerdicts, DropForgetsAMatchAndABoundOfZeroKeepsNothing) {
  KeptVerdicts kept(2);
  KeepAll(kept, 1, {"a", "b"});
  kept.Drop(1);
  const Taken t = TakeAll(kept, 1, {"a", "b"});
  EXPECT_EQ(t.count, 0);
  EXPECT_EQ(t.left, (std::vector<int>{0, 1, 2}));
  KeptVerdicts none(0);
  KeepAll(none, 1, {"a"});
  EXPECT_EQ(TakeAll(none, 1, {"a"}).count, 0);
}

}  // namespace
}  // namespace ply::lobby
