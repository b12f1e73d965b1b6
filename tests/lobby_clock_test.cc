// ply-lobby end to end, its clocks and the endings off the board: a flag falling, increments,
// bots under a clock, the clock updates watchers get, a draw by agreement and a resignation. The
// same stack as lobby_test (stack_helper.h's LobbyFixture): a real PostgreSQL cluster, real
// ply-bot processes and a ply-lobby process of its own per test, over gRPC on loopback.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::HasGameOver;
using ::ply::testing::Watch;

using LobbyTest = ::ply::testing::LobbyFixture;

TEST_F(LobbyTest, ClockRunsOutAndTheFlagLoses) {
  auto [id, tokens] = HumanMatch("tictactoe", [](v1::CreateMatchRequest& r) {
    r.mutable_time_control()->set_initial_ms(400);
    r.mutable_time_control()->set_increment_ms(0);
  });
  Watch w(stub_.get(), id);
  ASSERT_TRUE(Move(id, 0, "b2", tokens.first).ok());
  // Seat 1 never moves: its flag falls on its own, without any call.
  ASSERT_TRUE(w.WaitDone(absl::Seconds(5)));
  v1::Match m = Get(id);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_TIMEOUT);
  EXPECT_EQ(m.result().winner(), 0);
  EXPECT_EQ(m.seats(1).clock_ms(), 0);
  EXPECT_GT(m.seats(0).clock_ms(), 0);
  ASSERT_TRUE(HasGameOver(w.events()));
  // The watchers get the final clocks with the result.
  const v1::GameOver over = w.events().back().game_over();
  ASSERT_EQ(over.clocks_ms_size(), 2);
  EXPECT_EQ(over.clocks_ms(0), m.seats(0).clock_ms());
  EXPECT_EQ(over.clocks_ms(1), 0);
  EXPECT_EQ(Move(id, 1, "a1", tokens.second).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(LobbyTest, IncrementsAddUpButNotOnTheMoveThatEndsTheMatch) {
  auto [id, tokens] = HumanMatch("tictactoe", [](v1::CreateMatchRequest& r) {
    r.mutable_time_control()->set_initial_ms(60000);
    r.mutable_time_control()->set_increment_ms(5000);
  });
  v1::MakeMoveResponse r;
  ASSERT_TRUE(Move(id, 0, "b2", tokens.first, &r).ok());
  // X's clock after its move: what was left plus the increment.
  EXPECT_GT(r.match().seats(0).clock_ms(), 60000);
  ASSERT_TRUE(Move(id, 1, "a1", tokens.second).ok());
  ASSERT_TRUE(Move(id, 2, "a2", tokens.first, &r).ok());
  const int64_t before_last = r.match().seats(0).clock_ms();
  ASSERT_TRUE(Move(id, 3, "c3", tokens.second).ok());
  ASSERT_TRUE(Move(id, 4, "c2", tokens.first, &r).ok());
  ASSERT_EQ(r.match().status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(r.match().result().winner(), 0);
  // The winning move earns no increment: X's clock only went down since its previous move.
  EXPECT_LE(Get(id).seats(0).clock_ms(), before_last);
}

TEST_F(LobbyTest, BotsWithClocksDoNotLoseOnTime) {
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"hard", "hard"}, &created,
                     [](v1::CreateMatchRequest& r) {
                       r.mutable_time_control()->set_initial_ms(3000);
                       r.mutable_time_control()->set_increment_ms(20);
                     })
                  .ok());
  v1::Match end = WaitMatch(created.match().id(), [](const v1::Match& m) {
    return m.status() == v1::MATCH_STATUS_FINISHED;
  });
  ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_NE(end.result().reason(), v1::END_REASON_TIMEOUT) << end.result().text();
  EXPECT_NE(end.result().reason(), v1::END_REASON_BOT_FAILURE) << end.result().text();
}

// The attack: a person sets a clock shorter than the bots' pacing (540 ms, no increment) and
// answers at once; the lobby held the bot's ready move for its 500 ms of pacing while the flag
// fell by the wall clock, and bot:hard lost on time after two or three moves, a rated win in 3 s.
TEST_F(LobbyTest, ABotIsNeverFlaggedByItsOwnPacing) {
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", "hard"}, &created,
                     [](v1::CreateMatchRequest& r) {
                       ::ply::testing::TakingSeat(0, "flagger")(r);
                       r.mutable_time_control()->set_initial_ms(540);
                       r.set_bot_pacing_ms(500);
                     })
                  .ok());
  const int64_t id = created.match().id();
  v1::Match m = created.match();
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (m.status() == v1::MATCH_STATUS_ACTIVE && absl::Now() < give_up) {
    if (m.moves_size() % 2 == 1) {
      absl::SleepFor(absl::Milliseconds(1));
      m = Get(id);
      continue;
    }
    // The person's turn: the first column of these that takes a disc.
    for (const char* column : {"4", "3", "5", "2", "6", "1", "7"}) {
      v1::MakeMoveResponse r;
      if (Move(id, m.moves_size(), column, created.seat_token(), &r).ok()) break;
    }
    m = Get(id);
  }
  ASSERT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  // Run out of time: a loss on time before, a bot failure now (the flag of a bot is one).
  EXPECT_FALSE((m.result().reason() == v1::END_REASON_TIMEOUT ||
                m.result().reason() == v1::END_REASON_BOT_FAILURE) &&
               m.result().winner() == 0)
      << "the bot lost on time after " << m.moves_size() << " moves: " << m.result().text();
}

TEST_F(LobbyTest, WatchersOfAClockedMatchGetClockUpdates) {
  lobby_.reset();
  StartLobby({"--clock_event_ms=150"});
  auto [id, tokens] = HumanMatch("connect4", [](v1::CreateMatchRequest& r) {
    r.mutable_time_control()->set_initial_ms(60000);
  });
  ASSERT_TRUE(Move(id, 0, "4", tokens.first).ok());
  Watch w(stub_.get(), id);
  auto updates = [](const std::vector<v1::MatchEvent>& events) {
    std::vector<v1::MatchEvent> out;
    for (const auto& e : events) {
      if (e.has_clock_update()) out.push_back(e);
    }
    return out;
  };
  ASSERT_TRUE(w.WaitFor([&](const auto& e) { return updates(e).size() >= 3; }, absl::Seconds(10)));
  std::vector<v1::MatchEvent> u = updates(w.events());
  // Yellow's clock runs, Red's stands.
  EXPECT_EQ(u[0].clock_update().to_move(), 1);
  EXPECT_LT(u[2].clock_update().clocks_ms(1), u[0].clock_update().clocks_ms(1));
  EXPECT_EQ(u[2].clock_update().clocks_ms(0), u[0].clock_update().clocks_ms(0));
  EXPECT_GT(u[2].clock_update().clocks_ms(1), 50000);
}

TEST_F(LobbyTest, DrawByAgreementAndResignation) {
  auto [id, tokens] = HumanMatch("connect4");
  ASSERT_TRUE(Move(id, 0, "4", tokens.first).ok());
  v1::OfferDrawRequest offer;
  offer.set_match_id(id);
  {
    grpc::ClientContext c;
    c.AddMetadata("authorization", absl::StrCat("Bearer ", tokens.first));
    v1::Match m;
    ASSERT_TRUE(stub_->OfferDraw(&c, offer, &m).ok());
    EXPECT_EQ(m.draw_offer(), 0);
  }
  {
    grpc::ClientContext c;
    c.AddMetadata("authorization", absl::StrCat("Bearer ", tokens.second));
    v1::Match m;
    ASSERT_TRUE(stub_->OfferDraw(&c, offer, &m).ok());
    EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
    EXPECT_EQ(m.result().winner(), -1);
    EXPECT_EQ(m.result().reason(), v1::END_REASON_AGREEMENT);
  }
  auto [id2, tokens2] = HumanMatch("connect4");
  v1::ResignRequest resign;
  resign.set_match_id(id2);
  grpc::ClientContext c;
  c.AddMetadata("authorization", absl::StrCat("Bearer ", tokens2.first));
  v1::Match m;
  ASSERT_TRUE(stub_->Resign(&c, resign, &m).ok());
  EXPECT_EQ(m.result().winner(), 1);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RESIGNATION);
}

}  // namespace
}  // namespace ply
