// Rematches end to end: a player of a finished match offers one, the other accepts by offering
// too, and both get seats in one new match with the sides swapped (the same game, options,
// clock and rated or casual); the offer, its withdrawal or refusal and the new match reach the
// old match's watchers that follow it, across lobby instances; offers at once make one match;
// only the two players of a finished match may offer; a bot seat accepts at once. Real
// PostgreSQL, ply-bot and two ply-lobby processes on one database.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/players_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::GetMatch;
using ::ply::testing::GetPlayer;
using ::ply::testing::HumanSeats;
using ::ply::testing::LobbyInstance;
using ::ply::testing::Move;
using ::ply::testing::OfferRematch;
using ::ply::testing::PlayerAgainstBot;
using ::ply::testing::PlayersMatch;
using ::ply::testing::Register;
using ::ply::testing::Resign;
using ::ply::testing::Watch;

// The last rematch event a watcher has seen, if any.
const v1::RematchUpdate* LastRematch(const std::vector<v1::MatchEvent>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (it->has_rematch()) return &it->rematch();
  }
  return nullptr;
}

auto RematchOffered(int seat) {
  return [seat](const std::vector<v1::MatchEvent>& events) {
    const v1::RematchUpdate* r = LastRematch(events);
    return r != nullptr && r->offer() == seat && r->rematch_id() == 0;
  };
}

auto RematchMade(int64_t id) {
  return [id](const std::vector<v1::MatchEvent>& events) {
    const v1::RematchUpdate* r = LastRematch(events);
    return r != nullptr && r->rematch_id() == id;
  };
}

class RematchTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override {
    auto url = NewDatabase("rematch");
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    StartLobby({"--client_limit_exempt=127.0.0.1"});
  }

  // A second lobby instance on the same database; `other_` calls it.
  void StartSecondLobby() {
    second_ = StartLobbyInstance(
        {BotTargetFlag(), "--bot_pacing_ms=0", "--client_limit_exempt=127.0.0.1"});
    ASSERT_NE(second_.process, nullptr);
    other_ = std::move(second_.stub);
  }

  // A finished match of Connect Four between the players with these keys (a move each, then
  // seat 0 resigned: rated, since each side moved),
  // created through stub_ with `more` applied to the request: its id and the seat tokens.
  HumanSeats FinishedMatch(const std::string& key0, const std::string& key1,
                           std::function<void(v1::CreateMatchRequest&)> more = nullptr) {
    const HumanSeats f =
        PlayersMatch(stub_.get(), "connect4", key0, key1, [&](v1::CreateMatchRequest& create) {
          (*create.mutable_spec()->mutable_options())["width"] = "6";
          if (more) more(create);
        });
    EXPECT_TRUE(Move(stub_.get(), f.id, 0, "3", f.tokens[0]).ok());
    EXPECT_TRUE(Move(stub_.get(), f.id, 1, "3", f.tokens[1]).ok());
    EXPECT_TRUE(Resign(stub_.get(), f.id, f.tokens[0]).ok());
    return f;
  }

  int GamesOf(const std::string& name) {
    const v1::Player player = GetPlayer(stub_.get(), name);
    for (const v1::GameRating& r : player.ratings()) {
      if (r.game() == "connect4") return r.games();
    }
    return 0;
  }

  LobbyInstance second_;
  std::unique_ptr<v1::LobbyService::Stub> other_;
};

TEST_F(RematchTest, AnOfferAcceptedAcrossInstancesSeatsBothInOneMatchWithSidesSwapped) {
  StartSecondLobby();
  const std::string alice = Register(stub_.get(), "alice");
  const std::string bob = Register(stub_.get(), "bob");
  const HumanSeats old = FinishedMatch(alice, bob, [](v1::CreateMatchRequest& r) {
    r.mutable_time_control()->set_initial_ms(300000);
    r.mutable_time_control()->set_increment_ms(2000);
  });
  // Alice sits on the first instance, Bob on the second; each follows the old match there.
  Watch alice_sees(stub_.get(), old.id, {}, "", /*follow_rematch=*/true);
  Watch bob_sees(other_.get(), old.id, {}, "", /*follow_rematch=*/true);
  ASSERT_TRUE(alice_sees.WaitFor(testing::HasGameOver, absl::Seconds(10)));
  ASSERT_TRUE(bob_sees.WaitFor(testing::HasGameOver, absl::Seconds(10)));
  EXPECT_FALSE(bob_sees.WaitDone(absl::Milliseconds(300))) << "a follower stays after the end";

  v1::OfferRematchResponse offered;
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[0], &offered).ok());
  EXPECT_EQ(offered.rematch_id(), 0);
  EXPECT_EQ(offered.match().rematch_offer(), 0);
  ASSERT_TRUE(bob_sees.WaitFor(RematchOffered(0), absl::Seconds(5)))
      << "the offer reaches the other instance's watcher live";

  v1::OfferRematchResponse accepted;
  ASSERT_TRUE(OfferRematch(other_.get(), old.id, old.tokens[1], &accepted).ok());
  const int64_t rematch = accepted.rematch_id();
  ASSERT_GT(rematch, old.id);
  EXPECT_EQ(accepted.seat(), 0) << "Bob had the second seat: now he moves first";
  ASSERT_TRUE(alice_sees.WaitFor(RematchMade(rematch), absl::Seconds(5)));
  ASSERT_TRUE(alice_sees.WaitDone(absl::Seconds(5))) << "the follow ends with the rematch";
  ASSERT_TRUE(bob_sees.WaitDone(absl::Seconds(5)));
  EXPECT_TRUE(alice_sees.status().ok()) << alice_sees.status().error_message();

  // Alice asks again with her old token: the same match, her seat and token in it.
  v1::OfferRematchResponse mine;
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[0], &mine).ok());
  EXPECT_EQ(mine.rematch_id(), rematch) << "a match is rematched once";
  EXPECT_EQ(mine.seat(), 1);
  EXPECT_NE(mine.seat_token(), accepted.seat_token());
  v1::OfferRematchResponse again;
  ASSERT_TRUE(OfferRematch(other_.get(), old.id, old.tokens[1], &again).ok());
  EXPECT_EQ(again.rematch_id(), rematch);
  EXPECT_EQ(again.seat_token(), accepted.seat_token());

  absl::StatusOr<v1::Match> m = GetMatch(stub_.get(), rematch);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(m->spec().name(), "connect4");
  EXPECT_EQ(m->spec().options().at("width"), "6");
  EXPECT_EQ(m->time_control().initial_ms(), 300000);
  EXPECT_EQ(m->time_control().increment_ms(), 2000);
  EXPECT_EQ(m->seats(0).player(), "bob");
  EXPECT_EQ(m->seats(1).player(), "alice");
  // The tokens are the seats: a move each, through either instance; the old tokens are not.
  EXPECT_EQ(Move(stub_.get(), rematch, 0, "1", old.tokens[1]).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Move(stub_.get(), rematch, 0, "1", mine.seat_token()).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION)
      << "Alice is second now";
  ASSERT_TRUE(Move(other_.get(), rematch, 0, "1", accepted.seat_token()).ok());
  ASSERT_TRUE(Move(stub_.get(), rematch, 1, "2", mine.seat_token()).ok());

  // A rated match's rematch is rated: its end moves both ratings again.
  EXPECT_EQ(GamesOf("alice"), 1);
  ASSERT_TRUE(Resign(stub_.get(), rematch, mine.seat_token()).ok());
  EXPECT_EQ(GamesOf("alice"), 2);
  EXPECT_EQ(GamesOf("bob"), 2);
}

TEST_F(RematchTest, OffersAtOnceMakeOneMatch) {
  StartSecondLobby();
  const std::string alice = Register(stub_.get(), "alice");
  const std::string bob = Register(stub_.get(), "bob");
  for (int round = 0; round < 6; ++round) {
    const HumanSeats old = FinishedMatch(alice, bob);
    // Both offer at the same moment, through different instances.
    v1::OfferRematchResponse answers[2];
    grpc::Status status[2];
    std::thread a(
        [&] { status[0] = OfferRematch(stub_.get(), old.id, old.tokens[0], &answers[0]); });
    std::thread b(
        [&] { status[1] = OfferRematch(other_.get(), old.id, old.tokens[1], &answers[1]); });
    a.join();
    b.join();
    ASSERT_TRUE(status[0].ok()) << status[0].error_message();
    ASSERT_TRUE(status[1].ok()) << status[1].error_message();
    // One of the two made it; the other asks again and finds the same one.
    const int64_t made = std::max(answers[0].rematch_id(), answers[1].rematch_id());
    ASSERT_GT(made, 0) << "round " << round;
    for (int seat = 0; seat < 2; ++seat) {
      v1::OfferRematchResponse again;
      ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[seat], &again).ok());
      EXPECT_EQ(again.rematch_id(), made) << "round " << round;
      EXPECT_EQ(again.seat(), 1 - seat);
    }
    // Nothing else was created: the next match's id follows.
    const HumanSeats next = FinishedMatch(alice, bob);
    EXPECT_EQ(next.id, made + 1) << "round " << round;
    // Clear the finished rematch out of the way (resigned) so that every round starts alike.
    v1::OfferRematchResponse seat0;
    ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[1], &seat0).ok());
    ASSERT_TRUE(Resign(stub_.get(), made, seat0.seat_token()).ok());
  }
}

TEST_F(RematchTest, AnOfferCanBeDeclinedOrWithdrawnAndMakesNothing) {
  const std::string alice = Register(stub_.get(), "alice");
  const std::string bob = Register(stub_.get(), "bob");
  const HumanSeats old = FinishedMatch(alice, bob);
  Watch alice_sees(stub_.get(), old.id, {}, "", /*follow_rematch=*/true);
  ASSERT_TRUE(alice_sees.WaitFor(testing::HasGameOver, absl::Seconds(10)));
  v1::OfferRematchResponse r;
  // Bob offers; Alice declines.
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[1], &r).ok());
  ASSERT_TRUE(alice_sees.WaitFor(RematchOffered(1), absl::Seconds(5)));
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[0], &r, /*decline=*/true).ok());
  EXPECT_EQ(r.match().rematch_offer(), -1);
  EXPECT_EQ(r.rematch_id(), 0);
  ASSERT_TRUE(alice_sees.WaitFor(RematchOffered(-1), absl::Seconds(5)));
  // Alice offers, then withdraws; Bob's offer after that is an offer, not an acceptance.
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[0], &r).ok());
  ASSERT_TRUE(alice_sees.WaitFor(RematchOffered(0), absl::Seconds(5)));
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[0], &r, /*decline=*/true).ok());
  ASSERT_TRUE(alice_sees.WaitFor(RematchOffered(-1), absl::Seconds(5)));
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[1], &r).ok());
  EXPECT_EQ(r.rematch_id(), 0);
  EXPECT_EQ(r.match().rematch_offer(), 1);
  // Offering twice is one offer.
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[1], &r).ok());
  EXPECT_EQ(r.rematch_id(), 0);
  EXPECT_FALSE(alice_sees.WaitDone(absl::Milliseconds(200)));
  // A watcher that does not follow is closed at the end as ever.
  Watch plain(stub_.get(), old.id);
  ASSERT_TRUE(plain.WaitDone(absl::Seconds(5)));
  EXPECT_TRUE(plain.status().ok());
  for (const v1::MatchEvent& e : plain.events()) EXPECT_FALSE(e.has_rematch());
  // Alice accepts now: made.
  ASSERT_TRUE(OfferRematch(stub_.get(), old.id, old.tokens[0], &r).ok());
  EXPECT_GT(r.rematch_id(), 0);
  ASSERT_TRUE(alice_sees.WaitDone(absl::Seconds(5)));
}

TEST_F(RematchTest, ALoopOfOffersAndWithdrawalsIsCutOff) {
  // The flood: offer, withdraw, offer... as fast as the lobby answers (230 calls a second were
  // measured, each a write and a notification to every instance).
  const std::string alice = Register(stub_.get(), "alice");
  const std::string bob = Register(stub_.get(), "bob");
  const HumanSeats old = FinishedMatch(alice, bob);
  int answered = 0, refused = 0;
  for (int i = 0; i < 40; ++i) {
    v1::OfferRematchResponse r;
    grpc::Status s = OfferRematch(stub_.get(), old.id, old.tokens[0], &r, /*decline=*/i % 2 == 1);
    if (s.ok()) {
      ++answered;
    } else {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
      ++refused;
    }
  }
  EXPECT_LE(answered, 10);
  EXPECT_GE(refused, 30);
  // The other player is not held back by it: Bob's offer is taken.
  v1::OfferRematchResponse r;
  grpc::Status s = OfferRematch(stub_.get(), old.id, old.tokens[1], &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(RematchTest, OnlyThePlayersOfAFinishedMatchMayOffer) {
  const std::string alice = Register(stub_.get(), "alice");
  const std::string bob = Register(stub_.get(), "bob");
  const HumanSeats old = FinishedMatch(alice, bob);
  const HumanSeats stranger = FinishedMatch(alice, bob);
  v1::OfferRematchResponse r;
  EXPECT_EQ(OfferRematch(stub_.get(), old.id, "", &r).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(OfferRematch(stub_.get(), old.id, "ply_0123", &r).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(OfferRematch(stub_.get(), old.id, stranger.tokens[0], &r).error_code(),
            grpc::StatusCode::PERMISSION_DENIED)
      << "a seat of another match";
  EXPECT_EQ(OfferRematch(stub_.get(), 999999, old.tokens[0], &r).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // A match under way has no rematch yet.
  testing::HumanSeats active = testing::PlayersMatch(stub_.get(), "connect4", alice, bob);
  grpc::Status s = OfferRematch(stub_.get(), active.id, active.tokens[0], &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("not over"), std::string::npos) << s.error_message();
  // Nothing was recorded on the old match by the refused calls.
  absl::StatusOr<v1::Match> m = GetMatch(stub_.get(), old.id);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->rematch_offer(), -1);
  EXPECT_EQ(m->rematch_id(), 0);
}

TEST_F(RematchTest, ABotAcceptsAtOnceAndACasualMatchStaysCasual) {
  const std::string alice = Register(stub_.get(), "alice");
  v1::CreateMatchResponse created;
  ASSERT_TRUE(PlayerAgainstBot(stub_.get(), "connect4", alice, "easy", &created,
                               [](v1::CreateMatchRequest& r) { r.set_casual(true); })
                  .ok());
  const int64_t id = created.match().id();
  ASSERT_TRUE(Resign(stub_.get(), id, created.seat_token()).ok());
  v1::OfferRematchResponse r;
  ASSERT_TRUE(OfferRematch(stub_.get(), id, created.seat_token(), &r).ok());
  ASSERT_GT(r.rematch_id(), 0) << "the bot accepts at once";
  EXPECT_EQ(r.seat(), 1);
  // The bot has the first move now, and makes it.
  Watch rematch(stub_.get(), r.rematch_id());
  ASSERT_TRUE(rematch.WaitFor(
      [](const std::vector<v1::MatchEvent>& events) {
        return testing::MovesSeen(events).size() >= 1;
      },
      absl::Seconds(20)));
  absl::StatusOr<v1::Match> m = GetMatch(stub_.get(), r.rematch_id());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->seats(0).kind(), v1::SEAT_KIND_BOT);
  EXPECT_EQ(m->seats(0).difficulty(), "easy");
  EXPECT_EQ(m->seats(1).player(), "alice");
  ASSERT_TRUE(Resign(stub_.get(), r.rematch_id(), r.seat_token()).ok());
  EXPECT_EQ(GamesOf("alice"), 0) << "a casual match's rematch is casual";
}

}  // namespace
}  // namespace ply
