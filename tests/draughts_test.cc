#include "engine/games/draughts/draughts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/random.h"
#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "tests/conformance.h"
#include "tests/play_moves.h"

namespace ply {
namespace {

Draughts Start() { return *Draughts::Create({}); }

Draughts Fen(std::string_view fen) {
  absl::StatusOr<Draughts> g = Draughts::FromFen(fen);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

using testing_util::PlayMoves;

std::vector<std::string> LegalTexts(const Draughts& g) {
  MoveList<Draughts::Move, Draughts::kMaxMoves> moves;
  g.GenerateMoves(moves);
  std::vector<std::string> out;
  for (auto m : moves) out.push_back(g.MoveToText(m));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Draughts, PerftMatchesKnownCountsFromTheStart) {
  const uint64_t expected[] = {7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564};
  Draughts g = Start();
  for (int d = 1; d <= 10; ++d) EXPECT_EQ(Perft(g, d), expected[d - 1]) << "depth " << d;
  EXPECT_TRUE(g == Start());
}

TEST(Draughts, PassesConformanceFromTheStart) { testing::RunConformance(Start(), 300, 1); }

TEST(Draughts, PassesConformanceInKingEndingsWithRingJumps) {
  // Kings everywhere: long multi-jumps, jumps that come back to their square, repetitions and
  // the move limit.
  Draughts ring = Fen("W:WK18,K26,K30,23:B6,7,K14,K15,K1,K12");
  std::vector<std::string> jumps = LegalTexts(ring);
  EXPECT_NE(std::find(jumps.begin(), jumps.end(), "18x11x2x9x18"), jumps.end());
  testing::RunConformance(ring, 100, 2);
  testing::RunConformance(Fen("B:WK32,K28:BK1,K5"), 100, 3);
}

TEST(Draughts, OpeningMovesUseStandardSquareNumbers) {
  EXPECT_EQ(LegalTexts(Start()), (std::vector<std::string>{"10-14", "10-15", "11-15", "11-16",
                                                           "12-16", "9-13", "9-14"}));
  Draughts g = Start();
  PlayMoves(g, {"11-15"});
  EXPECT_EQ(LegalTexts(g), (std::vector<std::string>{"21-17", "22-17", "22-18", "23-18", "23-19",
                                                     "24-19", "24-20"}));
}

TEST(Draughts, CaptureIsMandatory) {
  Draughts g = Start();
  PlayMoves(g, {"11-15", "22-18"});
  EXPECT_EQ(LegalTexts(g), std::vector<std::string>{"15x22"});
  absl::StatusOr<Draughts::Move> quiet = g.ParseMove("9-13");
  EXPECT_EQ(quiet.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(quiet.status().message().find("mandatory"), std::string::npos);
  PlayMoves(g, {"15x22"});
  EXPECT_EQ(LegalTexts(g), (std::vector<std::string>{"25x18", "26x17"}));
}

TEST(Draughts, ParseRejectsMalformedAndIllegalMoves) {
  Draughts g = Start();
  for (const char* bad : {"", "11", "11-", "0-4", "11-33", "a-b", "11--15", "11-15-"}) {
    EXPECT_EQ(g.ParseMove(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  for (const char* illegal : {"11-14", "22-18", "15-19", "11x18", "1-5"}) {
    EXPECT_EQ(g.ParseMove(illegal).status().code(), absl::StatusCode::kFailedPrecondition)
        << illegal;
  }
  EXPECT_EQ(g.MoveToText(*g.ParseMove(" 11-15 ")), "11-15");
}

TEST(Draughts, MultiJumpIsOneMoveWithItsWholePath) {
  // Black man on 1 jumps 6 and 15: 1x10x19.
  Draughts g = Fen("B:W6,15,32:B1");
  EXPECT_EQ(LegalTexts(g), std::vector<std::string>{"1x10x19"});
  EXPECT_EQ(g.MoveToText(*g.ParseMove("1x19")), "1x10x19");
  EXPECT_EQ(g.ParseMove("1x10").status().code(), absl::StatusCode::kFailedPrecondition);
  Draughts::UndoInfo undo;
  Draughts before = g;
  g.Make(*g.ParseMove("1x10x19"), undo);
  EXPECT_EQ(g.ToFen(), "W:W32:B19");
  EXPECT_EQ(g.SideToMove(), 1);
  g.Unmake(*before.ParseMove("1x10x19"), undo);
  EXPECT_TRUE(g == before);
}

TEST(Draughts, DifferentPathsToTheSameSquareAreDifferentMoves) {
  // The White king on 18 can go round the four Black men either way and land on 18 again.
  Draughts g = Fen("W:WK18:B6,7,14,15");
  EXPECT_EQ(LegalTexts(g), (std::vector<std::string>{"18x11x2x9x18", "18x9x2x11x18"}));
  absl::StatusOr<Draughts::Move> short_form = g.ParseMove("18x18");
  EXPECT_EQ(short_form.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(short_form.status().message().find("ambiguous"), std::string::npos);
  Draughts before = g;
  Draughts::Move m = *g.ParseMove("18x9x2x11x18");
  Draughts::UndoInfo undo;
  g.Make(m, undo);
  EXPECT_EQ(g.ToFen(), "B:WK18:B");
  EXPECT_EQ(g.GetOutcome(), Outcome::kLoss);
  EXPECT_STREQ(g.Status().reason, "no pieces left");
  EXPECT_EQ(g.Status().winner, 1);
  EXPECT_EQ(g.Hash(), g.ComputeHash());
  g.Unmake(m, undo);
  EXPECT_TRUE(g == before);
}

TEST(Draughts, CrowningEndsTheMove) {
  // The man on 22 jumps to 31 and is crowned; as a king it could jump 27 at once, but may not.
  Draughts g = Fen("B:W26,27:B22");
  EXPECT_EQ(LegalTexts(g), std::vector<std::string>{"22x31"});
  PlayMoves(g, {"22x31"});
  EXPECT_EQ(g.ToFen(), "W:W27:BK31");
  // A king that reaches the far row keeps jumping.
  Draughts k = Fen("B:W26,27:BK22");
  EXPECT_EQ(LegalTexts(k), std::vector<std::string>{"22x31x24"});
}

TEST(Draughts, KingsJumpBackwardsAndMenDoNot) {
  // The White man on 14 stands behind the Black piece on 18: only a king may jump back to 9.
  Draughts men = Fen("B:W14:B18");
  EXPECT_EQ(LegalTexts(men), (std::vector<std::string>{"18-22", "18-23"}));
  Draughts king = Fen("B:W14:BK18");
  EXPECT_EQ(LegalTexts(king), std::vector<std::string>{"18x9"});
}

TEST(Draughts, SideWithoutMovesLoses) {
  Draughts blocked = Fen("B:W32:B28");
  EXPECT_EQ(blocked.GetOutcome(), Outcome::kLoss);
  EXPECT_EQ(blocked.Status().winner, 1);
  EXPECT_STREQ(blocked.Status().reason, "no legal move");
  Draughts empty = Fen("W:W:B1");
  EXPECT_EQ(empty.GetOutcome(), Outcome::kLoss);
  EXPECT_EQ(empty.Status().winner, 0);
}

TEST(Draughts, ThirdRepetitionDraws) {
  Draughts g = Fen("B:WK32:BK1");
  PlayMoves(g, {"1-6", "32-27", "6-1", "27-32", "1-6", "32-27", "6-1"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
  Draughts before = g;
  Draughts::Move m = *g.ParseMove("27-32");
  Draughts::UndoInfo undo;
  g.Make(m, undo);
  EXPECT_EQ(g.GetOutcome(), Outcome::kDraw);
  EXPECT_STREQ(g.Status().reason, "threefold repetition");
  g.Unmake(m, undo);
  EXPECT_TRUE(g == before);
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
}

TEST(Draughts, ManMoveOrCaptureResetsTheRepetitionCount) {
  Draughts g = Fen("B:WK32,21:BK1,12");
  PlayMoves(g, {"1-6", "32-27", "6-1", "27-32", "12-16", "32-27", "1-6", "27-32", "6-1", "32-27"});
  EXPECT_EQ(g.reversible_plies(), 5);
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
}

// The draw rules checked against a plain re-implementation over random king games.
TEST(Draughts, DrawRulesMatchAReferenceOverRandomKingGames) {
  Rng rng(7);
  bool saw_limit = false, saw_repetition = false;
  for (int game = 0; game < 300; ++game) {
    Draughts g = Fen("B:WK29,K30,K31,K32:BK1,K2,K3,K4");
    std::vector<uint64_t> since_irreversible = {g.Hash()};
    while (g.GetOutcome() == Outcome::kOngoing) {
      MoveList<Draughts::Move, Draughts::kMaxMoves> moves;
      g.GenerateMoves(moves);
      Draughts::Move m = moves[static_cast<int>(rng.Below(moves.size()))];
      Draughts::UndoInfo undo;
      g.Make(m, undo);
      if (m.is_capture()) since_irreversible.clear();
      since_irreversible.push_back(g.Hash());
      int seen = static_cast<int>(
          std::count(since_irreversible.begin(), since_irreversible.end(), g.Hash()));
      int plies = static_cast<int>(since_irreversible.size()) - 1;
      bool draw = seen >= 3 || plies >= 80;
      if (Draughts::HasMove(g.board())) {
        ASSERT_EQ(g.GetOutcome() == Outcome::kDraw, draw) << plies << " " << seen;
      }
      ASSERT_EQ(g.reversible_plies(), plies);
      if (g.GetOutcome() == Outcome::kDraw) {
        (seen >= 3 ? saw_repetition : saw_limit) = true;
      }
    }
  }
  EXPECT_TRUE(saw_limit);
  EXPECT_TRUE(saw_repetition);
}

TEST(Draughts, FenRoundTripsAndRejectsNonsense) {
  for (const char* fen :
       {"B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", "W:WK18,23:B6,K9"}) {
    EXPECT_EQ(Fen(fen).ToFen(), fen);
  }
  EXPECT_TRUE(Fen("B:W21-32:B1-12") == Start());
  EXPECT_EQ(Start().ToFen(), Fen("B:W21-32:B1-12").ToFen());
  for (const char* bad :
       {"", "B", "X:W1:B2", "B:W1:W2", "B:W40:B1", "B:W5:B5", "B:W5:B30", "B:Wx:B1"}) {
    EXPECT_FALSE(Draughts::FromFen(bad).ok()) << bad;
  }
}

TEST(Draughts, RenderShowsSquareNumbersAndPieces) {
  Draughts g = Start();
  PlayMoves(g, {"11-15"});
  std::string r = g.Render();
  EXPECT_NE(r.find("    1-4\n"), std::string::npos) << r;
  EXPECT_NE(r.find(" 11"), std::string::npos) << r;  // now empty
  EXPECT_NE(r.find(" 14"), std::string::npos) << r;
  EXPECT_EQ(r.find(" 15"), std::string::npos) << r;  // Black's man stands there
  EXPECT_NE(r.find("White (w) to move"), std::string::npos) << r;
  EXPECT_EQ(r.substr(0, 24), "     b     b     b     b");
}

TEST(Draughts, PdnTagValuesCannotForgeTags) {
  absl::StatusOr<std::string> pdn =
      ExportPdn({"11-15"}, {{"Black", "x\"] [Result \"1-0\"] [Event \"forged"},
                            {"White", "back\\slash\nnew line"},
                            {"Bad]Name", "dropped"}});
  ASSERT_TRUE(pdn.ok()) << pdn.status();
  EXPECT_NE(pdn->find("[Black \"x\\\"] [Result \\\"1-0\\\"] [Event \\\"forged\"]"),
            std::string::npos)
      << *pdn;
  EXPECT_EQ(pdn->find("\n[Event \"forged"), std::string::npos) << *pdn;
  EXPECT_NE(pdn->find("[White \"back\\\\slash\xEF\xBF\xBDnew line\"]"), std::string::npos) << *pdn;
  EXPECT_EQ(pdn->find("Bad]Name"), std::string::npos) << *pdn;
  EXPECT_NE(pdn->find("[Result \"*\"]"), std::string::npos) << *pdn;
}

TEST(Draughts, ExportsPdnWithTagsAndFullJumpPaths) {
  absl::StatusOr<std::string> pdn =
      ExportPdn({"11-15", "22-18", "15x22", "25x18"},
                {{"Event", "Club night"}, {"Black", "Bot, Hard"}, {"White", "Doe, Jane"}});
  ASSERT_TRUE(pdn.ok()) << pdn.status();
  EXPECT_EQ(*pdn,
            "[Event \"Club night\"]\n[Site \"?\"]\n[Date \"?\"]\n[Round \"?\"]\n"
            "[Black \"Bot, Hard\"]\n[White \"Doe, Jane\"]\n[Result \"*\"]\n[GameType \"21\"]\n"
            "\n1. 11-15 22-18 2. 15x22 25x18 *\n");

  absl::StatusOr<std::string> won = ExportPdn({"1x19"}, {{"FEN", "B:W6,15:B1"}});
  ASSERT_TRUE(won.ok()) << won.status();
  EXPECT_NE(won->find("[Result \"1-0\"]"), std::string::npos) << *won;
  EXPECT_NE(won->find("[SetUp \"1\"]\n[FEN \"B:W6,15:B1\"]"), std::string::npos) << *won;
  EXPECT_NE(won->find("1. 1x10x19 1-0\n"), std::string::npos) << *won;

  absl::StatusOr<std::string> white_first = ExportPdn({"23-19"}, {{"FEN", "W:W23:B1"}});
  ASSERT_TRUE(white_first.ok());
  EXPECT_NE(white_first->find("1... 23-19 *"), std::string::npos) << *white_first;

  EXPECT_EQ(ExportPdn({"11-15", "11-15"}).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ExportPdn({"eleven"}).status().code(), absl::StatusCode::kInvalidArgument);
}

// The same position with the board turned round and the colours swapped.
Draughts Mirror(const Draughts& g) {
  const Draughts::Board& b = g.board();
  std::string fen = b.side == 0 ? "W" : "B";
  for (int p : {0, 1}) {
    fen += p == 0 ? ":W" : ":B";
    bool first = true;
    for (int sq = 0; sq < 32; ++sq) {
      if (!((b.pieces[p] >> sq) & 1)) continue;
      fen += first ? "" : ",";
      fen += ((b.kings >> sq) & 1) ? "K" : "";
      fen += std::to_string(32 - sq);
      first = false;
    }
  }
  return Fen(fen);
}

TEST(Draughts, EvaluationIsColourSymmetric) {
  EXPECT_EQ(Start().Evaluate(), 0);
  Draughts a = Fen("B:W18,19,K27,30:B1,3,6,K10,14");
  EXPECT_EQ(Mirror(a).ToFen(), "W:W19,K23,27,30,32:B3,K6,14,15");
  Rng rng(11);
  for (int game = 0; game < 20; ++game) {
    Draughts g = Start();
    while (g.GetOutcome() == Outcome::kOngoing) {
      ASSERT_EQ(g.Evaluate(), Mirror(g).Evaluate()) << g.ToFen();
      MoveList<Draughts::Move, Draughts::kMaxMoves> moves;
      g.GenerateMoves(moves);
      Draughts::UndoInfo undo;
      g.Make(moves[static_cast<int>(rng.Below(moves.size()))], undo);
    }
  }
}

TEST(Draughts, EvaluationCountsPendingCaptures) {
  // Black to move must take 15x22 and then loses the man to 25x18 or 26x17: even material.
  Draughts g = Start();
  PlayMoves(g, {"11-15", "22-18"});
  EXPECT_LT(std::abs(g.Evaluate()), 60);
  // A man that can be taken for nothing is a man down for the side to move's opponent.
  Draughts free_man = Fen("B:W18,30,31,32:B14,1,2,3");
  EXPECT_GT(free_man.Evaluate(), 60);
}

TEST(Draughts, SearchPlaysTheTwoForOneShot) {
  // 15-18 gives a man: 22x15 is forced, and 10x19x26 takes two back and runs to the crown.
  Draughts g = Fen("B:W22,23,32:B6,10,14,15");
  auto searcher = std::make_unique<Searcher<Draughts>>(4);
  auto shallow = searcher->Search(g, {.max_depth = 4});
  EXPECT_EQ(g.MoveToText(shallow.best_move), "15-18");
  EXPECT_GT(shallow.score, 200);
  // With a few million nodes the search proves the win.
  auto deep = searcher->Search(g, {.max_nodes = 3'000'000});
  EXPECT_EQ(g.MoveToText(deep.best_move), "15-18");
  EXPECT_TRUE(deep.exact);
  EXPECT_GT(deep.score, kMateThreshold);
}

TEST(Draughts, SearchFindsTheQuickestWinAndSeesTheBlock) {
  // Two kings against a man on 29: after 18-22 its only move is 29-25, and 22x29 ends the game.
  Draughts g = Fen("B:W29:BK18,K27");
  auto searcher = std::make_unique<Searcher<Draughts>>(4);
  auto r = searcher->Search(g, {.max_depth = 10});
  EXPECT_EQ(g.MoveToText(r.best_move), "18-22");
  EXPECT_EQ(r.score, WinIn(3));
}

}  // namespace
}  // namespace ply
