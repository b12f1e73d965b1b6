// Connect Four's opening book: its keys round-trip, it covers every position the perfect level
// can meet on its own first moves, and a sample of its entries agrees with fresh solves.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "engine/core/random.h"
#include "engine/games/connect4/book.h"
#include "engine/games/connect4/solver.h"

namespace ply::connect4 {
namespace {

constexpr int kStride = 7;

uint64_t Cell(uint64_t mask, int c) {
  const uint64_t column = uint64_t{0x3f} << (c * kStride);
  return (mask + (uint64_t{1} << (c * kStride))) & column;
}

bool HasFour(uint64_t p) {
  for (int s : {1, kStride, kStride - 1, kStride + 1}) {
    const uint64_t pairs = p & (p >> s);
    if (pairs & (pairs >> 2 * s)) return true;
  }
  return false;
}

TEST(Connect4Book, KeysDecodeAndMirror) {
  Rng rng(7);
  for (int game = 0; game < 200; ++game) {
    uint64_t current = 0, mask = 0;
    for (int ply = 0; ply < 30; ++ply) {
      const int c = static_cast<int>(rng.Below(7));
      const uint64_t cell = Cell(mask, c);
      if (cell == 0 || HasFour(current | cell)) break;
      current ^= mask;
      mask |= cell;
      uint64_t cur2, mask2;
      OpeningBook::Decode(OpeningBook::Key(current, mask), cur2, mask2);
      ASSERT_EQ(cur2, current);
      ASSERT_EQ(mask2, mask);
      EXPECT_EQ(OpeningBook::Mirror(OpeningBook::Mirror(mask)), mask);
      EXPECT_EQ(OpeningBook::Key(OpeningBook::Mirror(current), OpeningBook::Mirror(mask)),
                OpeningBook::Mirror(OpeningBook::Key(current, mask)));
    }
  }
}

TEST(Connect4Book, FindsAPositionAndItsMirrorImage) {
  uint64_t current = 0, mask = 0;
  const uint64_t cell = Cell(mask, 1);  // the first player in column 2
  current ^= mask;
  mask |= cell;
  const uint64_t key = OpeningBook::Key(current, mask);
  const uint64_t mirror = OpeningBook::Mirror(key);
  const uint64_t canonical = std::min(key, mirror);
  const int stored_column = canonical == key ? 2 : 4;  // column 3 in this orientation
  absl::StatusOr<OpeningBook> one =
      OpeningBook::Parse(absl::StrFormat("%013x %d %d\n", canonical, stored_column + 1, -2));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->max_ply(), 1);
  auto found = one->Find(current, mask);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->column, 2);
  EXPECT_EQ(found->score, -2);
  auto mirrored = one->Find(OpeningBook::Mirror(current), OpeningBook::Mirror(mask));
  ASSERT_TRUE(mirrored.has_value());
  EXPECT_EQ(mirrored->column, 4);
  EXPECT_FALSE(one->Find(0, 0).has_value());
  EXPECT_FALSE(OpeningBook::Parse("12 x 3\n").ok());
  EXPECT_FALSE(OpeningBook::Parse("12 8 3\n").ok());
}

// Walks the perfect level's games with either colour: the book's move where the level is to
// move, every move where the opponent is. Every position the level meets up to the book's last
// ply must be in the book, with a legal column.
TEST(Connect4Book, CoversEveryPositionThePerfectLevelCanReach) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  const int last = book.max_ply();
  EXPECT_GE(last, 11) << "the level's first six moves with either colour";
  int64_t checked = 0;
  for (int level_side = 0; level_side < 2; ++level_side) {
    struct Node {
      uint64_t current, mask;
      int ply;
    };
    std::vector<Node> stack = {{0, 0, 0}};
    while (!stack.empty()) {
      const Node n = stack.back();
      stack.pop_back();
      if (n.ply > last) continue;
      if (n.ply % 2 == level_side) {
        auto entry = book.Find(n.current, n.mask);
        ASSERT_TRUE(entry.has_value())
            << "ply " << n.ply << " key " << std::hex << OpeningBook::Key(n.current, n.mask);
        ++checked;
        const uint64_t cell = Cell(n.mask, entry->column);
        ASSERT_NE(cell, 0u);
        if (!HasFour(n.current | cell)) {
          stack.push_back({n.current ^ n.mask, n.mask | cell, n.ply + 1});
        }
        continue;
      }
      for (int c = 0; c < 7; ++c) {
        const uint64_t cell = Cell(n.mask, c);
        if (cell == 0 || HasFour(n.current | cell)) continue;
        stack.push_back({n.current ^ n.mask, n.mask | cell, n.ply + 1});
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// Every open position up to kEveryPositionToPly, whatever the moves that made it (a person's odd
// opening, a game taken over): the book answers it with a legal column, where the solver alone
// would need more than the level's 5 s (docs/performance.md, "Connect Four perfect off its own
// lines"). The shipped book was built with --every-position-to-ply at least this.
constexpr int kEveryPositionToPly = 6;

TEST(Connect4Book, CoversEveryOpenPositionOfTheFirstPlies) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  struct Node {
    uint64_t current, mask;
    int ply;
  };
  std::vector<Node> stack = {{0, 0, 0}};
  int64_t checked = 0;
  while (!stack.empty()) {
    const Node n = stack.back();
    stack.pop_back();
    auto entry = book.Find(n.current, n.mask);
    ASSERT_TRUE(entry.has_value())
        << "ply " << n.ply << " key " << std::hex << OpeningBook::Key(n.current, n.mask);
    ASSERT_NE(Cell(n.mask, entry->column), 0u);
    ++checked;
    if (n.ply == kEveryPositionToPly) continue;
    for (int c = 0; c < 7; ++c) {
      const uint64_t cell = Cell(n.mask, c);
      if (cell == 0 || HasFour(n.current | cell)) continue;
      stack.push_back({n.current ^ n.mask, n.mask | cell, n.ply + 1});
    }
  }
  // 1 + 7 + 49 + 343 + 2401 + 16807 + 117649 move orders to ply 6 (none fills a column or ends
  // the game).
  EXPECT_EQ(checked, 137257);
}

// Checks book entry `e` against fresh solves of its position and of the position after its
// column, each within `time_ms`: the same score, and the column reaches it.
void ExpectEntryAgreesWithFreshSolves(Solver& solver, const OpeningBook::Stored& e,
                                      int64_t time_ms) {
  uint64_t current, mask;
  OpeningBook::Decode(e.key, current, mask);
  const int moves = std::popcount(mask);
  solver.Reset();
  SolveResult fresh = solver.Solve(current, mask, moves, {.time_ms = time_ms});
  ASSERT_TRUE(fresh.solved) << std::hex << e.key;
  EXPECT_EQ(fresh.score, e.score) << std::hex << e.key;
  const uint64_t cell = Cell(mask, e.column);
  ASSERT_NE(cell, 0u);
  if (HasFour(current | cell)) {
    EXPECT_EQ(e.score, WinScore(7, 6, moves));
    return;
  }
  SolveResult after = solver.Solve(current ^ mask, mask | cell, moves + 1, {.time_ms = time_ms});
  ASSERT_TRUE(after.solved);
  EXPECT_EQ(-after.score, e.score) << std::hex << e.key << " column " << e.column + 1;
}

// The book's entries agree with the solver, checked afresh on a sample from the four deepest plies
// (a few tens of milliseconds each; shallower ones take the solver seconds to minutes): the
// same score, and the stored column reaches it.
TEST(Connect4Book, SampledEntriesAgreeWithFreshSolves) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  std::vector<OpeningBook::Stored> deep;
  for (const OpeningBook::Stored& e : book.Entries()) {
    uint64_t current, mask;
    OpeningBook::Decode(e.key, current, mask);
    if (std::popcount(mask) >= book.max_ply() - 3) deep.push_back(e);
  }
  ASSERT_FALSE(deep.empty());
  Solver solver(7, 6, 16);
  Rng rng(2026);
  for (int i = 0; i < 16; ++i) {
    ExpectEntryAgreesWithFreshSolves(solver, deep[rng.Below(deep.size())], 20'000);
  }
}

// Entries of the deepest ply the book holds whatever the moves (the positions off the level's
// own lines a person may set up) agree with fresh solves too: two sampled, a few seconds each.
TEST(Connect4Book, SampledEveryPositionEntriesAgreeWithFreshSolves) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  std::vector<OpeningBook::Stored> at_ply;
  for (const OpeningBook::Stored& e : book.Entries()) {
    uint64_t current, mask;
    OpeningBook::Decode(e.key, current, mask);
    if (std::popcount(mask) == kEveryPositionToPly) at_ply.push_back(e);
  }
  ASSERT_FALSE(at_ply.empty());
  Solver solver(7, 6, 64);
  Rng rng(2027);
  for (int i = 0; i < 2; ++i) {
    ExpectEntryAgreesWithFreshSolves(solver, at_ply[rng.Below(at_ply.size())], 60'000);
  }
}

// The shipped book's text less `count` of its deepest entries (those whose key is a multiple
// of 97), which go to `left_out`.
std::string ShippedBookLess(size_t count, std::vector<OpeningBook::Stored>& left_out) {
  const OpeningBook& book = OpeningBook::Standard();
  std::string partial;
  for (const OpeningBook::Stored& e : book.Entries()) {
    uint64_t current, mask;
    OpeningBook::Decode(e.key, current, mask);
    if (std::popcount(mask) == book.max_ply() && left_out.size() < count && e.key % 97 == 0) {
      left_out.push_back(e);
      continue;
    }
    absl::StrAppendFormat(&partial, "%013x %d %d\n", e.key, e.column + 1, e.score);
  }
  return partial;
}

// BuildBook with two solvers at once, started from the shipped book less a dozen of its deepest
// entries: it solves exactly those again (the same scores; the columns reach them) and keeps
// every other entry as it was.
TEST(Connect4Book, TwoSolversRefillWhatTheStartingBookLacks) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  const std::vector<OpeningBook::Stored> entries = book.Entries();
  std::vector<OpeningBook::Stored> left_out;
  const std::string partial = ShippedBookLess(12, left_out);
  ASSERT_EQ(left_out.size(), 12u);
  absl::StatusOr<OpeningBook> start = OpeningBook::Parse(partial);
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_EQ(start->size(), entries.size() - left_out.size());
  absl::StatusOr<std::string> text = BuildBook(
      {.max_ply = book.max_ply(), .tt_megabytes = 16, .threads = 2, .start = &*start}, nullptr);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<OpeningBook> rebuilt = OpeningBook::Parse(*text);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  ASSERT_EQ(rebuilt->size(), entries.size());
  const std::vector<OpeningBook::Stored> after = rebuilt->Entries();
  Solver solver(7, 6, 16);
  for (size_t i = 0; i < entries.size(); ++i) {
    const OpeningBook::Stored& was = entries[i];
    const OpeningBook::Stored& now = after[i];
    ASSERT_EQ(now.key, was.key);
    ASSERT_EQ(now.score, was.score) << std::hex << was.key;
    if (now.column == was.column) continue;
    // A solved-again entry may name another column of the same value.
    ASSERT_TRUE(std::any_of(left_out.begin(), left_out.end(),
                            [&](const OpeningBook::Stored& e) { return e.key == was.key; }))
        << "a kept entry changed: " << std::hex << was.key;
    uint64_t current, mask;
    OpeningBook::Decode(now.key, current, mask);
    const uint64_t cell = Cell(mask, now.column);
    ASSERT_NE(cell, 0u);
    if (HasFour(current | cell)) continue;
    const int moves = std::popcount(mask);
    SolveResult reply = solver.Solve(current ^ mask, mask | cell, moves + 1);
    ASSERT_TRUE(reply.solved);
    EXPECT_EQ(-reply.score, now.score) << std::hex << now.key;
  }
}

// A ply that takes long reports the book so far while it is solved (every checkpoint_seconds;
// here at every position finished), each report a book of what was solved up to then; a build
// started from one of them goes on where it stopped and ends with the same book.
TEST(Connect4Book, AStoppedBuildGoesOnFromItsLastReport) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  std::vector<OpeningBook::Stored> left_out;
  const std::string partial = ShippedBookLess(40, left_out);
  ASSERT_EQ(left_out.size(), 40u);
  absl::StatusOr<OpeningBook> start = OpeningBook::Parse(partial);
  ASSERT_TRUE(start.ok()) << start.status();
  std::vector<std::string> reports;
  std::vector<std::string> parts;
  BookPlan plan = {.max_ply = book.max_ply(),
                   .tt_megabytes = 16,
                   .threads = 2,
                   .start = &*start,
                   .checkpoint_seconds = 0};
  absl::StatusOr<std::string> text =
      BuildBook(plan, [&](std::string_view part, int, int, double, const std::string& so_far) {
        if (part.find("so far") != std::string_view::npos) {
          parts.emplace_back(part);
          reports.push_back(so_far);
        }
      });
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_FALSE(reports.empty()) << "no report during the ply";
  EXPECT_TRUE(absl::StartsWith(parts[0], "own lines so far (")) << parts[0];
  absl::StatusOr<OpeningBook> whole = OpeningBook::Parse(*text);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const std::vector<OpeningBook::Stored> all = whole->Entries();
  size_t last_size = start->size();
  for (const std::string& report : reports) {
    absl::StatusOr<OpeningBook> so_far = OpeningBook::Parse(report);
    ASSERT_TRUE(so_far.ok()) << so_far.status();
    // Growing, and never past the whole book, every entry as the whole book has it.
    EXPECT_GE(so_far->size(), last_size);
    EXPECT_LT(so_far->size(), whole->size());
    last_size = so_far->size();
    for (const OpeningBook::Stored& e : so_far->Entries()) {
      auto it =
          std::lower_bound(all.begin(), all.end(), e.key,
                           [](const OpeningBook::Stored& a, uint64_t key) { return a.key < key; });
      ASSERT_TRUE(it != all.end() && it->key == e.key) << std::hex << e.key;
      EXPECT_EQ(it->score, e.score) << std::hex << e.key;
    }
  }
  // Taken up from the middle report: the same book.
  absl::StatusOr<OpeningBook> resume = OpeningBook::Parse(reports[reports.size() / 2]);
  ASSERT_TRUE(resume.ok()) << resume.status();
  plan.start = &*resume;
  plan.checkpoint_seconds = 60;
  absl::StatusOr<std::string> again = BuildBook(plan, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<OpeningBook> rebuilt = OpeningBook::Parse(*again);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  ASSERT_EQ(rebuilt->size(), whole->size());
  const std::vector<OpeningBook::Stored> after = rebuilt->Entries();
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(after[i].key, all[i].key);
    EXPECT_EQ(after[i].score, all[i].score) << std::hex << all[i].key;
  }
}

// Known facts of the standard game, which the book's shallowest entries must agree with: the
// first player wins (with the last stone of the game at best play), and only in the centre.
TEST(Connect4Book, OpensInTheCentreWithTheKnownValue) {
  const OpeningBook& book = OpeningBook::Standard();
  if (book.size() == 0) GTEST_SKIP() << "the shipped book is empty";
  auto root = book.Find(0, 0);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->column, 3);
  EXPECT_EQ(root->score, 1);
}

}  // namespace
}  // namespace ply::connect4
