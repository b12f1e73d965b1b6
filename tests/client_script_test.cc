// What scripts do with `ply`, one command a call, against a real stack (PostgreSQL, two ply-bot,
// ply-lobby with bots moving at once): resign and offer or accept a draw without the board, and
// a seat asked for that is not the one held is refused rather than silently played.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/pty_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

class ClientScriptTest : public ::ply::testing::ClientFixture {
 protected:
  // A match ALICE opens with `args`, by number.
  std::string New(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"new"};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("--detach");
    auto [code, out] = Run("alice", all);
    EXPECT_EQ(code, 0) << out;
    return std::string(absl::StripAsciiWhitespace(out));
  }

  // Waits until match `id` has `plies` moves (a bot's reply).
  v1::Match WaitPlies(const std::string& id, int plies) {
    int64_t n = 0;
    EXPECT_TRUE(absl::SimpleAtoi(id, &n));
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    v1::Match m = Get(n);
    while (m.moves_size() < plies && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(50));
      m = Get(n);
    }
    EXPECT_EQ(m.moves_size(), plies);
    return m;
  }
};

TEST_F(ClientScriptTest, AScriptOffersABotADrawAndHearsItsAnswerAndResigns) {
  // Tic-Tac-Toe after a centre and a corner is a proven draw: the perfect bot takes it.
  std::string id = New({"tictactoe", "--seat2", "bot:perfect"});
  auto [code, out] = Run("alice", {"move", id, "b2"});
  ASSERT_EQ(code, 0) << out;
  WaitPlies(id, 2);
  std::tie(code, out) = Run("alice", {"draw", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("draw by agreement"), std::string::npos) << out;
  v1::Match m = WaitPlies(id, 2);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), -1);

  // Connect Four opened on the edge is lost for the first player: the perfect bot declines,
  // and says so at once; the game goes on, and the script resigns it.
  id = New({"connect4", "--seat2", "bot:perfect"});
  std::tie(code, out) = Run("alice", {"move", id, "1"});
  ASSERT_EQ(code, 0) << out;
  WaitPlies(id, 2);
  std::tie(code, out) = Run("alice", {"draw", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Yellow (bot, perfect) declines the draw; the game goes on."),
            std::string::npos)
      << out;
  m = WaitPlies(id, 2);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(m.draw_offer(), -1);
  std::tie(code, out) = Run("alice", {"resign", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("resign"), std::string::npos) << out;
  m = WaitPlies(id, 2);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), 1);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RESIGNATION);

  // Someone with no seat there resigns nothing.
  std::tie(code, out) = Run("bob", {"resign", id});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find(absl::StrCat("you hold no seat in match ", id)), std::string::npos) << out;
  std::tie(code, out) = Run("bob", {"draw"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("draw needs a match number"), std::string::npos) << out;
}

TEST_F(ClientScriptTest, TwoScriptsAgreeADrawOneOffersTheOtherAccepts) {
  const std::string id = New({"connect4", "--seat2", "open"});
  auto [code, out] = Run("bob", {"join", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  ASSERT_EQ(Run("alice", {"move", id, "4"}).first, 0);
  ASSERT_EQ(Run("bob", {"move", id, "4"}).first, 0);
  std::tie(code, out) = Run("alice", {"draw", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find(absl::StrCat("Draw offered in match ", id,
                                  "; it stands until Yellow (bob) accepts it or moves.")),
            std::string::npos)
      << out;
  std::tie(code, out) = Run("bob", {"draw", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("draw by agreement"), std::string::npos) << out;
  const v1::Match m = WaitPlies(id, 2);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_AGREEMENT);
}

TEST_F(ClientScriptTest, JoiningTheOtherSeatOfAMatchOneHoldsIsRefused) {
  // alice holds seat 1; asking for seat 2 resumed seat 1 without a word.
  const std::string id = New({"connect4", "--seat2", "open"});
  auto [code, out] = Run("alice", {"join", id, "--seat", "2"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find(absl::StrCat("you already hold seat 1 of match ", id, "; `ply join ", id,
                                  "` resumes it")),
            std::string::npos)
      << out;
  EXPECT_FALSE(Get(std::stoll(id)).seats(1).taken());
}

TEST_F(ClientScriptTest, WrongNamesForBotsSayWhatTheRightOnesAre) {
  // A bot level is a player as bot:LEVEL; `ply whois hard` only said there is no such player.
  auto [code, out] = Run("alice", {"whois", "hard"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("bot levels are players as bot:LEVEL (bot:hard)"), std::string::npos) << out;
  std::tie(code, out) = Run("alice", {"whois", "nobody_here"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out.find("bot:"), std::string::npos) << out;
  // A level the game does not have: its levels are named.
  std::tie(code, out) = Run("alice", {"new", "connect4", "--seat2", "bot:godlike", "--detach"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("Connect Four has no difficulty 'godlike'; its levels: "), std::string::npos)
      << out;
  EXPECT_NE(out.find("perfect"), std::string::npos) << out;
}

TEST_F(ClientScriptTest, ARatedDrawAgreedBeforeAnyMoveSaysItIsNotRated) {
  // The rating rules do not count a result before each side has moved, and the final screen
  // said nothing: the players looked for a rating change that never came.
  ASSERT_EQ(Run("alice", {"login", "alice"}).first, 0);
  ASSERT_EQ(Run("bob", {"login", "bob"}).first, 0);
  const std::string id = New({"connect4", "--seat2", "open"});
  auto [code, out] = Run("bob", {"join", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(Get(std::stoll(id)).rated());
  ASSERT_EQ(Run("alice", {"draw", id}).first, 0);
  std::tie(code, out) = Run("bob", {"draw", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("draw by agreement"), std::string::npos) << out;
  EXPECT_NE(out.find("Not rated: the game ended before each side had moved."), std::string::npos)
      << out;
  // A rated game where each side has moved says nothing of the kind.
  const std::string played = New({"tictactoe", "--seat2", "bot:beginner"});
  ASSERT_EQ(Run("alice", {"move", played, "b2"}).first, 0);
  WaitPlies(played, 2);
  std::tie(code, out) = Run("alice", {"resign", played});
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(out.find("Not rated"), std::string::npos) << out;
  const v1::Match end = Get(std::stoll(played));
  ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_TRUE(end.result().rating_note().empty()) << end.result().rating_note();
}

}  // namespace
}  // namespace ply
