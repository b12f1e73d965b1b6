// The bot levels' ratings as they ship: every game's ladder file (games/GAME/ladder.txt) parses,
// rates every level of the game, was written by a load-independent command, and spaces the
// levels at least 100 points apart; the ladder itself, on node budgets, plays the same games
// twice over.
#include "engine/tool/ladder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/registry/ladder_data.h"
#include "engine/registry/registry.h"

namespace ply {
namespace {

TEST(LadderData, ParsesWhatItFormats) {
  const LadderData data{
      .command = "build/engine/ply-engine ladder tictactoe --games 4",
      .ratings = {{.name = "random", .rating = 400, .error = 0, .games = 8},
                  {.name = "hard", .rating = 1234.56, .error = 98.7, .games = 16}}};
  absl::StatusOr<LadderData> back = ParseLadder(FormatLadder(data, "tictactoe"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->command, data.command);
  EXPECT_EQ(back->levels, data.levels);
  ASSERT_EQ(back->ratings.size(), 2u);
  EXPECT_EQ(back->ratings[1].name, "hard");
  EXPECT_NEAR(back->ratings[1].rating, 1234.56, 0.05);
  EXPECT_NEAR(back->ratings[1].error, 98.7, 0.05);
  EXPECT_EQ(back->ratings[1].games, 16);
  ASSERT_NE(back->Find("random"), nullptr);
  EXPECT_EQ(back->Find("perfect"), nullptr);
}

TEST(LadderData, RefusesAFileItCannotRead) {
  const std::string command = "command: ply-engine ladder x\n";
  for (const std::string& bad : {std::string("random 400 0 40\n"),  // no command
                                 command,                           // nobody rated
                                 command + "hard 1500 100\n",       // a column short
                                 command + "hard 15x0 100 20\n",    // not a number
                                 command + "hard 1500 -1 20\n",     // a negative error
                                 command + "hard 1500 90 20\nhard 1600 90 20\n"}) {  // rated twice
    EXPECT_FALSE(ParseLadder(bad).ok()) << bad;
  }
  absl::StatusOr<LadderData> commented =
      ParseLadder("# about\n" + command + "hard 1500 90 20  # the top\n\n");
  ASSERT_TRUE(commented.ok()) << commented.status();
  EXPECT_EQ(commented->ratings.size(), 1u);
}

TEST(LadderData, TheFingerprintChangesWithAnyDialOfAnyLevel) {
  const std::vector<Difficulty> levels = DefaultLevels();
  const std::string base = LevelsFingerprint(levels);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(LevelsFingerprint(DefaultLevels()), base);
  for (int dial = 0; dial < 6; ++dial) {
    std::vector<Difficulty> changed = levels;
    Difficulty& d = changed[1];
    if (dial == 0) d.max_depth += 1;
    if (dial == 1) d.random_move_chance += 0.05;
    if (dial == 2) d.eval_noise += 10;
    if (dial == 3) d.time_ms /= 2;
    if (dial == 4) d.perfect = !d.perfect;
    if (dial == 5) d.policy = "greedy";
    EXPECT_NE(LevelsFingerprint(changed), base) << dial;
  }
}

TEST(LadderData, TheFingerprintFoldsInTheGamesBudgetPlansOnlyWhereThereAreAny) {
  const std::vector<Difficulty> levels = DefaultLevels();
  const std::string base = LevelsFingerprint(levels);
  // No plans, or none for any level: the fingerprint of the dials alone.
  EXPECT_EQ(LevelsFingerprint(
                levels, [](const Difficulty&, int64_t, int64_t) { return ""; }, 100),
            base);
  // A plan, and any change of it at the ladder's budget, changes it.
  auto plan_at = [](int64_t threshold) {
    return [threshold](const Difficulty& d, int64_t max_nodes, int64_t) -> std::string {
      return d.name == "hard" ? absl::StrCat(max_nodes >= threshold ? "deep" : "shallow") : "";
    };
  };
  const Difficulty* hard = FindLevel(levels, "hard");
  ASSERT_NE(hard, nullptr);
  const int64_t ladder_nodes = hard->time_ms * 100;
  const std::string shallow = LevelsFingerprint(levels, plan_at(ladder_nodes + 1), 100);
  const std::string deep = LevelsFingerprint(levels, plan_at(ladder_nodes), 100);
  EXPECT_NE(shallow, base);
  EXPECT_NE(deep, base);
  EXPECT_NE(shallow, deep);
  // The plan is taken at the ladder's budget: the same thresholds on another budget differ.
  EXPECT_NE(LevelsFingerprint(levels, plan_at(ladder_nodes), 50), deep);
}

TEST(LadderData, ReadsTheNodeBudgetOfItsCommand) {
  EXPECT_EQ(LadderNodesPerMs("build/engine/ply-engine ladder reversi --games 20 --nodes-per-ms "
                             "100 --ladder-out engine/games/reversi/ladder.txt"),
            100);
  EXPECT_EQ(LadderNodesPerMs("build/engine/ply-engine ladder reversi --time-ms 100"), 0);
  EXPECT_EQ(LadderNodesPerMs("ply-engine ladder x --nodes-per-ms"), 0);
}

TEST(ShippedLadders, OnlyGamesWithBudgetPlansFoldThemIn) {
  for (const GameInfo& info : ListGames()) {
    SCOPED_TRACE(info.name);
    const int64_t nodes_per_ms = LadderNodesPerMs(info.ladder.command);
    const std::string with = LevelsFingerprint(info.levels, info.budget_plans, nodes_per_ms);
    if (info.name == "reversi") {
      // Reversi's hard and perfect levels solve the endgame as far as their budget reaches:
      // PlanSolve's thresholds are part of what its ladder was played with.
      ASSERT_TRUE(info.budget_plans);
      EXPECT_NE(with, LevelsFingerprint(info.levels));
      const Difficulty* hard = FindLevel(info.levels, "hard");
      ASSERT_NE(hard, nullptr);
      EXPECT_FALSE(info.budget_plans(*hard, hard->time_ms * nodes_per_ms, 0).empty());
      const Difficulty* easy = FindLevel(info.levels, "easy");
      ASSERT_NE(easy, nullptr);
      EXPECT_EQ(info.budget_plans(*easy, easy->time_ms * nodes_per_ms, 0), "");
    } else {
      EXPECT_EQ(with, LevelsFingerprint(info.levels));
    }
  }
}

TEST(ShippedLadders, RateEveryLevelOfEveryGameWithTheCommandThatMadeThem) {
  for (const GameInfo& info : ListGames()) {
    SCOPED_TRACE(info.name);
    ASSERT_TRUE(ShippedLadderError(info.name).ok()) << ShippedLadderError(info.name);
    const LadderData& ladder = info.ladder;
    // Node budgets, not a clock: the file is what its command gives on any machine.
    EXPECT_TRUE(absl::StartsWith(ladder.command,
                                 absl::StrCat("build/engine/ply-engine ladder ", info.name, " ")))
        << ladder.command;
    EXPECT_TRUE(absl::StrContains(ladder.command, "--nodes-per-ms")) << ladder.command;
    EXPECT_TRUE(absl::StrContains(
        ladder.command, absl::StrCat("--ladder-out engine/games/", info.name, "/ladder.txt")))
        << ladder.command;
    // Written for the levels as they are, the game's budget plans included: a level retuned
    // since needs the ladder rerun.
    EXPECT_EQ(ladder.levels,
              LevelsFingerprint(info.levels, info.budget_plans, LadderNodesPerMs(ladder.command)))
        << "rerun " << ladder.command;
    const LadderRating* random = ladder.Find("random");
    ASSERT_NE(random, nullptr) << "the anchor";
    EXPECT_EQ(random->rating, kRandomAnchor);
    for (const Difficulty& level : info.levels) {
      const LadderRating* r = ladder.Find(level.name);
      ASSERT_NE(r, nullptr) << level.name << " has no rating: rerun " << ladder.command;
      EXPECT_GT(r->games, 0) << level.name;
      EXPECT_GT(r->error, 0) << level.name;
      EXPECT_GT(r->rating, kRandomAnchor) << level.name << " is no better than random moves";
    }
  }
}

// Adjacent levels that play alike, so that no tuning keeps both characters and puts 100 points
// between them. The test holds them to being close, so that an entry goes once it is not true.
struct SamePlay {
  std::string_view game, lower, upper, why;
};
constexpr SamePlay kSamePlay[] = {
    {"tictactoe", "hard", "perfect",
     "hard searches the 9-cell game to the end: it plays perfectly already, so the two draw or "
     "win exactly the same games"},
};

const SamePlay* FindSamePlay(std::string_view game, std::string_view lower,
                             std::string_view upper) {
  for (const SamePlay& s : kSamePlay) {
    if (s.game == game && s.lower == lower && s.upper == upper) return &s;
  }
  return nullptr;
}

TEST(ShippedLadders, SpaceAdjacentLevelsAtLeastAHundredPointsApart) {
  for (const GameInfo& info : ListGames()) {
    SCOPED_TRACE(info.name);
    // The searching levels in the table's order, weakest first (a level that names a player of
    // its own, like Gomoku's greedy baseline, stands outside that order).
    const LadderRating* below = nullptr;
    for (const Difficulty& level : info.levels) {
      if (!level.policy.empty()) continue;
      const LadderRating* r = info.ladder.Find(level.name);
      ASSERT_NE(r, nullptr) << level.name;
      if (below != nullptr) {
        if (const SamePlay* same = FindSamePlay(info.name, below->name, r->name)) {
          EXPECT_LT(std::abs(r->rating - below->rating), 100) << same->why;
        } else {
          EXPECT_GE(r->rating - below->rating, 100)
              << below->name << " " << below->rating << " -> " << r->name << " " << r->rating;
        }
      }
      below = r;
    }
  }
}

TEST(Ladder, OnNodeBudgetsPlaysTheSameGamesTwice) {
  const LadderConfig config{.game = "tictactoe", .games = 4, .seed = 3, .nodes_per_ms = 20};
  std::vector<PairResult> first, second;
  auto record = [](std::vector<PairResult>& into) {
    return
        [&into](const std::string&, const std::string&, const PairResult& r) { into.push_back(r); };
  };
  absl::StatusOr<std::vector<LadderRating>> a = RunLadder(config, record(first));
  absl::StatusOr<std::vector<LadderRating>> b = RunLadder(config, record(second));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].wins, second[i].wins) << i;
    EXPECT_EQ(first[i].draws, second[i].draws) << i;
  }
  for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].rating, (*b)[i].rating);
}

}  // namespace
}  // namespace ply
