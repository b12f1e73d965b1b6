// Rematch between two real clients: `ply` processes in pseudo-terminals against a real stack. On
// the final screen one presses `r`, the other sees the offer and accepts with `r` (or declines
// with `n`; leaving takes an offer back), and both land on the new board with the sides swapped;
// `ply rematch MATCH` does the same from the command line.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/newcomer_rating.h"
#include "tests/pty_helper.h"

namespace ply {
namespace {

using ::ply::testing::PtyProcess;

class ClientRematchTest : public ::ply::testing::ClientFixture {
 protected:
  // Alice and Bob logged in, a finished Tic-Tac-Toe match between them (Alice had X; a move
  // each, then she resigned: rated), both still on its final screen.
  int64_t FinishedGame() {
    EXPECT_EQ(Run("alice", {"login", "alice"}).first, 0);
    EXPECT_EQ(Run("bob", {"login", "bob"}).first, 0);
    alice_ = Ply("alice", {"new", "tictactoe", "--seat2", "open"});
    EXPECT_TRUE(alice_->WaitScreen({"Tic-Tac-Toe", "Waiting for an opponent"})) << alice_->Output();
    const int64_t id = LatestMatch();
    bob_ = Ply("bob", {"join", absl::StrCat(id)});
    EXPECT_TRUE(alice_->WaitScreen({"Your move (X)"})) << alice_->Screen();
    alice_->Type("b2\r");
    EXPECT_TRUE(bob_->WaitScreen({"Your move (O)"})) << bob_->Screen();
    bob_->Type("a1\r");
    EXPECT_TRUE(alice_->WaitScreen({"Your move (X)", "2. O a1"})) << alice_->Screen();
    alice_->Type("resign\r");
    EXPECT_TRUE(alice_->WaitScreen({"yes"})) << alice_->Screen();
    alice_->Type("yes\r");
    for (PtyProcess* p : {alice_.get(), bob_.get()}) {
      EXPECT_TRUE(p->WaitScreen({"Game over", "r: rematch", "q: quit"})) << p->Screen();
    }
    return id;
  }

  // Where that game took Bob (who won it) and Alice, as their boards show them.
  static std::string Won() { return ::ply::testing::AfterFirstGameText("tictactoe", 1); }
  static std::string Lost() { return ::ply::testing::AfterFirstGameText("tictactoe", 0); }

  std::unique_ptr<PtyProcess> alice_;
  std::unique_ptr<PtyProcess> bob_;
};

TEST_F(ClientRematchTest, BothPressRAndLandOnTheNewBoardWithSidesSwapped) {
  const int64_t old = FinishedGame();
  bob_->Type("r");
  ASSERT_TRUE(bob_->WaitScreen({"You offered a rematch; waiting for alice."})) << bob_->Screen();
  ASSERT_TRUE(alice_->WaitScreen({"bob offers a rematch: r to accept", "n: decline"}))
      << alice_->Screen();
  alice_->Type("r");
  // Both are in the new match; Bob has X and the first move now.
  const std::string next = absl::StrCat("match ", old + 1);
  ASSERT_TRUE(bob_->WaitScreen({next, "Your move (X)", "bob (" + Won()})) << bob_->Screen();
  ASSERT_TRUE(alice_->WaitScreen({next, "alice (" + Lost()})) << alice_->Screen();
  const v1::Match m = Get(old + 1);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(m.seats(0).player(), "bob");
  EXPECT_EQ(m.seats(1).player(), "alice");
  // The seats are theirs: Bob's move reaches Alice's board, and Alice answers.
  bob_->Type("b2\r");
  ASSERT_TRUE(alice_->WaitScreen({next, "Your move (O)"})) << alice_->Screen();
  alice_->Type("a1\r");
  ASSERT_TRUE(bob_->WaitScreen({"Your move (X)", "2. O a1"})) << bob_->Screen();
  EXPECT_EQ(Get(old + 1).moves_size(), 2);
  // Kept in the seat store: `ply join` finds the seat again.
  bob_->Type("quit\r");
  ASSERT_EQ(bob_->WaitExit(), 0) << bob_->Output();
  auto again = Ply("bob", {"join", absl::StrCat(old + 1)});
  ASSERT_TRUE(again->WaitScreen({next, "Your move (X)"})) << again->Screen();
}

TEST_F(ClientRematchTest, AnOfferIsDeclinedOrTakenBackAndPlyRematchAgreesFromTheCommandLine) {
  const int64_t old = FinishedGame();
  bob_->Type("r");
  ASSERT_TRUE(alice_->WaitScreen({"bob offers a rematch: r to accept"})) << alice_->Screen();
  alice_->Type("n");
  ASSERT_TRUE(alice_->WaitScreen({"You declined the rematch."})) << alice_->Screen();
  ASSERT_TRUE(bob_->WaitScreen({"alice declined the rematch."})) << bob_->Screen();
  // Bob offers again and leaves: leaving takes the offer back.
  bob_->Type("r");
  ASSERT_TRUE(alice_->WaitScreen({"bob offers a rematch: r to accept"})) << alice_->Screen();
  bob_->Type("q");
  ASSERT_EQ(bob_->WaitExit(), 0) << bob_->Output();
  ASSERT_TRUE(alice_->WaitScreen({"bob withdrew the rematch offer."})) << alice_->Screen();
  EXPECT_EQ(Get(old).rematch_offer(), -1);
  alice_->Type("q");
  ASSERT_EQ(alice_->WaitExit(), 0) << alice_->Output();

  // From the command line: Alice offers and waits on the final screen; Bob's `ply rematch`
  // accepts, and both play the rematch.
  alice_ = Ply("alice", {"rematch", absl::StrCat(old)});
  ASSERT_TRUE(alice_->WaitScreen({"Game over", "You offered a rematch; waiting for bob."}))
      << alice_->Screen();
  bob_ = Ply("bob", {"rematch", absl::StrCat(old)});
  const std::string next = absl::StrCat("match ", old + 1);
  ASSERT_TRUE(bob_->WaitScreen({next, "Your move (X)"})) << bob_->Screen();
  ASSERT_TRUE(alice_->WaitScreen({next, "alice (" + Lost()})) << alice_->Screen();
  // A match under way, or someone else's, has no rematch to offer.
  auto [code, out] = Run("alice", {"rematch", absl::StrCat(old + 1)});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("not over"), std::string::npos) << out;
  std::tie(code, out) = Run("carol", {"rematch", absl::StrCat(old)});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("only its players"), std::string::npos) << out;
}

TEST_F(ClientRematchTest, ABotAcceptsAtOnceAndPlyRematchJsonNamesTheNewSeat) {
  ASSERT_EQ(Run("alice", {"login", "alice"}).first, 0);
  auto alice = Ply("alice", {"new", "tictactoe", "--seat2", "bot:beginner"});
  ASSERT_TRUE(alice->WaitScreen({"Your move (X)"})) << alice->Screen();
  const int64_t old = LatestMatch();
  alice->Type("resign\r");
  ASSERT_TRUE(alice->WaitScreen({"yes"})) << alice->Screen();
  alice->Type("yes\r");
  ASSERT_TRUE(alice->WaitScreen({"Game over", "r: rematch"})) << alice->Screen();
  alice->Type("q");
  ASSERT_EQ(alice->WaitExit(), 0) << alice->Output();
  // For a script: the answer as JSON, the bot having agreed, and the seat kept for `ply join`.
  auto [code, out] = Run("alice", {"rematch", absl::StrCat(old), "--json"});
  ASSERT_EQ(code, 0) << out;
  const nlohmann::json answer = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(answer["rematch_id"], absl::StrCat(old + 1)) << out;
  EXPECT_EQ(answer["seat"], 1) << out;
  auto again = Ply("alice", {"join", absl::StrCat(old + 1)});
  ASSERT_TRUE(again->WaitScreen({absl::StrCat("match ", old + 1), "Your move (O)"}))
      << again->Screen();
  EXPECT_EQ(Get(old + 1).seats(0).kind(), v1::SEAT_KIND_BOT);
}

}  // namespace
}  // namespace ply
