// Presence and abandonment, end to end with real processes (PostgreSQL, ply-lobby) on loopback:
// who holds a seat is told to the others as it changes, also across two lobby instances; an
// untimed match whose side to move has gone may be claimed only after the lobby's bound; a
// match whose first move never comes is aborted with no rating change; and matches abandoned
// before the lobby ran these rules (an old database) get the same treatment, once.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/players_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::Create;
using ::ply::testing::GetMatch;
using ::ply::testing::GetPlayer;
using ::ply::testing::HasGameOver;
using ::ply::testing::HumanMatch;
using ::ply::testing::HumanSeats;
using ::ply::testing::LobbyInstance;
using ::ply::testing::Move;
using ::ply::testing::MovesSeen;
using ::ply::testing::PlayerAgainstBot;
using ::ply::testing::PlayersMatch;
using ::ply::testing::Register;
using ::ply::testing::TakingSeat;
using ::ply::testing::WaitMatch;
using ::ply::testing::Watch;

// The presence events a watcher has had, as "seat:present" strings in order ("1:away").
std::vector<std::string> PresenceSeen(const std::vector<v1::MatchEvent>& events) {
  std::vector<std::string> seen;
  for (const v1::MatchEvent& e : events) {
    if (e.has_presence()) {
      seen.push_back(absl::StrCat(e.presence().seat(), e.presence().present() ? ":back" : ":away"));
    }
  }
  return seen;
}

bool Saw(const std::vector<v1::MatchEvent>& events, const std::vector<std::string>& expected) {
  return PresenceSeen(events) == expected;
}

int GameOvers(const std::vector<v1::MatchEvent>& events) {
  int n = 0;
  for (const v1::MatchEvent& e : events) n += e.has_game_over() ? 1 : 0;
  return n;
}

class PresenceTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override { UseNewDatabase("presence"); }

  // A lobby on the test's database with quick presence (a seat is gone 0.3 s after its last
  // stream closes, looked at every 0.1 s), claims after 2 s and no abort unless `extra` says.
  LobbyInstance StartInstance(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {"--bot_target=",          "--claim_ms=200",
                                      "--presence_grace_s=0.3", "--presence_poll_s=0.1",
                                      "--claim_after_s=2",      "--abort_after_s=0"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return StartLobbyInstance(flags);
  }

  grpc::Status Claim(v1::LobbyService::Stub* stub, int64_t id, const std::string& token, bool draw,
                     v1::Match* out) {
    v1::ClaimVictoryRequest request;
    request.set_match_id(id);
    request.set_draw(draw);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return stub->ClaimVictory(&context, request, out);
  }
};

TEST_F(PresenceTest, AClaimIsRefusedBeforeTheBoundAndTakenAfterIt) {
  LobbyInstance lobby = StartInstance();
  const HumanSeats match = HumanMatch(lobby.get(), lobby.get(), "connect4");
  auto alice = std::make_unique<Watch>(lobby.get(), match.id, std::nullopt, match.tokens[0]);
  auto bob = std::make_unique<Watch>(lobby.get(), match.id, std::nullopt, match.tokens[1]);
  ASSERT_TRUE(Move(lobby.get(), match.id, 0, "4", match.tokens[0]).ok());
  ASSERT_TRUE(Move(lobby.get(), match.id, 1, "4", match.tokens[1]).ok());
  ASSERT_TRUE(Move(lobby.get(), match.id, 2, "3", match.tokens[0]).ok());
  // The server may take up Bob's stream after the moves on a loaded machine: wait until it
  // counts (his move's sighting alone lasts only the 0.3 s grace).
  const std::string bobs_streams =
      absl::StrCat("SELECT COALESCE(sum(streams), 0) FROM presence WHERE match_id = ", match.id,
                   " AND seat = 1");
  for (int i = 0; i < 200 && Sql(bobs_streams) != "1"; ++i) absl::SleepFor(absl::Milliseconds(25));
  ASSERT_EQ(Sql(bobs_streams), "1");
  // Both are there: nothing to claim, and nobody is announced.
  v1::Match ignored;
  grpc::Status early = Claim(lobby.get(), match.id, match.tokens[0], false, &ignored);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(early.error_message(), "bob is still connected"))
      << early.error_message();
  // Bob cannot claim on his own move (and a call is a sign of life: he asks before leaving).
  grpc::Status own = Claim(lobby.get(), match.id, match.tokens[1], false, &ignored);
  EXPECT_EQ(own.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(own.error_message(), "it is your move")) << own.error_message();
  // Bob's client goes away on his move.
  const absl::Time left = absl::Now();
  bob.reset();
  ASSERT_TRUE(alice->WaitFor([](const auto& e) { return Saw(e, {"1:away"}); }, absl::Seconds(5)))
      << PresenceSeen(alice->events()).size();
  v1::PresenceChanged gone;
  for (const v1::MatchEvent& e : alice->events()) {
    if (e.has_presence()) gone = e.presence();
  }
  EXPECT_EQ(gone.name(), "bob");
  EXPECT_GT(gone.claim_from_ms(), gone.away_since_ms());
  // Before the bound: refused, saying how long he has been gone and when a claim may come.
  if (absl::Now() - left < absl::Milliseconds(1500)) {
    grpc::Status s = Claim(lobby.get(), match.id, match.tokens[0], false, &ignored);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_TRUE(absl::StrContains(s.error_message(), "bob has been gone"));
    EXPECT_TRUE(absl::StrContains(s.error_message(), "you can claim after 2 s"))
        << s.error_message();
  }
  // After it: the win.
  absl::SleepFor(absl::FromUnixMillis(gone.claim_from_ms()) - absl::Now() +
                 absl::Milliseconds(100));
  v1::Match won;
  grpc::Status s = Claim(lobby.get(), match.id, match.tokens[0], false, &won);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(won.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(won.result().winner(), 0);
  EXPECT_EQ(won.result().reason(), v1::END_REASON_ABANDONED);
  ASSERT_TRUE(alice->WaitDone(absl::Seconds(5)));
  EXPECT_TRUE(HasGameOver(alice->events()));
}

TEST_F(PresenceTest, AClaimRightAfterTheOpponentsCallSaysWhenItMayComeNotThatTheyAreThere) {
  // Bob plays by single calls (`ply move`), with no stream open. A claim within the lobby's
  // grace after his call said "bob is still connected to the match" and named the move's bound
  // (half an hour by default): a call is a sighting, and the claim's bound runs from it.
  LobbyInstance lobby = StartInstance({"--presence_grace_s=3", "--max_turn_s=1800"});
  const HumanSeats match = HumanMatch(lobby.get(), lobby.get(), "connect4");
  ASSERT_TRUE(Move(lobby.get(), match.id, 0, "4", match.tokens[0]).ok());
  ASSERT_TRUE(Move(lobby.get(), match.id, 1, "4", match.tokens[1]).ok());
  const absl::Time bob_seen = absl::Now();
  ASSERT_TRUE(Move(lobby.get(), match.id, 2, "3", match.tokens[0]).ok());
  v1::Match m;
  if (absl::Now() - bob_seen < absl::Milliseconds(2500)) {
    grpc::Status early = Claim(lobby.get(), match.id, match.tokens[0], false, &m);
    EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_FALSE(absl::StrContains(early.error_message(), "still connected"))
        << early.error_message();
    EXPECT_FALSE(absl::StrContains(early.error_message(), "30 min")) << early.error_message();
    // The grace (3 s) is longer than the claim bound (2 s) here: the claim waits for it.
    EXPECT_TRUE(absl::StrContains(early.error_message(), "bob has been gone"))
        << early.error_message();
    EXPECT_TRUE(absl::StrContains(early.error_message(), "you can claim after 3 s"))
        << early.error_message();
  }
  absl::SleepFor(bob_seen + absl::Milliseconds(3300) - absl::Now());
  grpc::Status claimed = Claim(lobby.get(), match.id, match.tokens[0], false, &m);
  ASSERT_TRUE(claimed.ok()) << claimed.error_message();
  EXPECT_EQ(m.result().winner(), 0);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_ABANDONED);
}

TEST_F(PresenceTest, PresenceConvergesWhenAStreamClosedWhileTheDatabaseWasDown) {
  // The stuck-presence attack needs no attacker: PostgreSQL is down as bob's stream closes, so
  // the write of its end is lost. The instance's beat rewrites its open streams whole once the
  // database is back: bob is gone, alice is told, and her claim is taken.
  LobbyInstance lobby = StartInstance({"--presence_beat_s=0.5"});
  const HumanSeats match = HumanMatch(lobby.get(), lobby.get(), "connect4");
  auto alice = std::make_unique<Watch>(lobby.get(), match.id, std::nullopt, match.tokens[0]);
  auto bob = std::make_unique<Watch>(lobby.get(), match.id, std::nullopt, match.tokens[1]);
  ASSERT_TRUE(Move(lobby.get(), match.id, 0, "4", match.tokens[0]).ok());
  ASSERT_TRUE(Move(lobby.get(), match.id, 1, "4", match.tokens[1]).ok());
  ASSERT_TRUE(Move(lobby.get(), match.id, 2, "3", match.tokens[0]).ok());
  const std::string bobs_streams =
      absl::StrCat("SELECT COALESCE(sum(streams), 0) FROM presence WHERE match_id = ", match.id,
                   " AND seat = 1");
  for (int i = 0; i < 200 && Sql(bobs_streams) != "1"; ++i) absl::SleepFor(absl::Milliseconds(25));
  ASSERT_EQ(Sql(bobs_streams), "1");
  ASSERT_TRUE(cluster_->StopServer().ok());
  bob.reset();
  absl::SleepFor(absl::Seconds(1));
  ASSERT_TRUE(cluster_->StartServer().ok());
  for (int i = 0; i < 400 && Sql(bobs_streams) != "0"; ++i) absl::SleepFor(absl::Milliseconds(25));
  EXPECT_EQ(Sql(bobs_streams), "0") << "the lost -1 was never mended";
  EXPECT_TRUE(alice->WaitFor(
      [](const auto& e) {
        const std::vector<std::string> seen = PresenceSeen(e);
        return !seen.empty() && seen.back() == "1:away";
      },
      absl::Seconds(10)))
      << PresenceSeen(alice->events()).size();
  v1::Match won;
  grpc::Status claimed;
  for (const absl::Time end = absl::Now() + absl::Seconds(15); absl::Now() < end;
       absl::SleepFor(absl::Milliseconds(200))) {
    claimed = Claim(lobby.get(), match.id, match.tokens[0], false, &won);
    if (claimed.ok()) break;
  }
  ASSERT_TRUE(claimed.ok()) << claimed.error_message();
  EXPECT_EQ(won.result().winner(), 0);
  EXPECT_EQ(won.result().reason(), v1::END_REASON_ABANDONED);
}

TEST_F(PresenceTest, AGameAgainstABotThatItsPersonLeftEndsByRule) {
  // Before this rule a person could open bot games and walk away: each stayed live (and held
  // its bot seat) forever, since claims against a bot are refused and aborts cover the first
  // move only.
  LobbyInstance lobby = StartInstance({BotTargetFlag(), "--abandon_after_s=1.5"});
  const std::string alice = Register(lobby.get(), "alice");
  v1::CreateMatchResponse rated, casual, stays;
  ASSERT_TRUE(PlayerAgainstBot(lobby.get(), "connect4", alice, "beginner", &rated).ok());
  const std::vector<v1::SeatKind> kinds = {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT};
  ASSERT_TRUE(
      Create(lobby.get(), "connect4", kinds, {"", "beginner"}, &casual, TakingSeat(0, "guest"))
          .ok());
  ASSERT_TRUE(
      Create(lobby.get(), "connect4", kinds, {"", "beginner"}, &stays, TakingSeat(0, "stays"))
          .ok());
  // Under a clock of three hours (a day is allowed): the clock used to be the only bound, and
  // the bot seat stayed booked for all of it.
  v1::CreateMatchResponse timed;
  ASSERT_TRUE(PlayerAgainstBot(lobby.get(), "connect4", alice, "beginner", &timed,
                               [](v1::CreateMatchRequest& r) {
                                 r.mutable_time_control()->set_initial_ms(3 * 3600 * 1000);
                                 r.mutable_time_control()->set_increment_ms(600 * 1000);
                               })
                  .ok());
  // The one who stays keeps a stream open; the others play a move and go.
  Watch watching(lobby.get(), stays.match().id(), std::nullopt, stays.seat_token());
  for (const v1::CreateMatchResponse* m : {&rated, &casual, &stays, &timed}) {
    ASSERT_TRUE(Move(lobby.get(), m->match().id(), 0, "4", m->seat_token()).ok());
  }
  const absl::Time start = absl::Now();
  auto finished = [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; };
  const v1::Match lost = WaitMatch(lobby.get(), rated.match().id(), finished, absl::Seconds(15));
  ASSERT_EQ(lost.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_GE(absl::Now() - start, absl::Seconds(1)) << "not before the bound";
  EXPECT_EQ(lost.result().reason(), v1::END_REASON_ABANDONED);
  EXPECT_EQ(lost.result().winner(), 1);
  EXPECT_TRUE(absl::StrContains(lost.result().text(), "alice left the game"))
      << lost.result().text();
  const v1::Match none = WaitMatch(lobby.get(), casual.match().id(), finished, absl::Seconds(15));
  ASSERT_EQ(none.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(none.result().reason(), v1::END_REASON_ABORTED) << "casual: no result";
  EXPECT_EQ(none.result().winner(), -1);
  const v1::Match flagless =
      WaitMatch(lobby.get(), timed.match().id(), finished, absl::Seconds(15));
  ASSERT_EQ(flagless.status(), v1::MATCH_STATUS_FINISHED) << "a timed game is left too";
  EXPECT_EQ(flagless.result().reason(), v1::END_REASON_ABANDONED);
  EXPECT_EQ(flagless.result().winner(), 1);
  // A rated loss like any other: alice's rating went down, the bot level's stayed.
  const v1::Player a = GetPlayer(lobby.get(), "alice");
  ASSERT_EQ(a.ratings_size(), 1);
  EXPECT_EQ(a.ratings(0).losses(), 2);
  EXPECT_LT(a.ratings(0).rating(), 1500);
  // The person who stayed is still playing.
  absl::StatusOr<v1::Match> still = GetMatch(lobby.get(), stays.match().id());
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->status(), v1::MATCH_STATUS_ACTIVE);
}

TEST_F(PresenceTest, APersonWhoSitsOnAMoveWhilePresentLosesItAfterTheMaxTurn) {
  // Presence alone held an untimed game open for ever: a losing player kept a page (or a
  // stream, or a call every few minutes) open and never moved; claims were refused as "still
  // connected", and a bot game never ended, its bot seat booked.
  LobbyInstance lobby = StartInstance(
      {BotTargetFlag(), "--abandon_after_s=300", "--claim_after_s=300", "--max_turn_s=2"});
  const std::string carol = Register(lobby.get(), "carol");
  v1::CreateMatchResponse against_bot;
  ASSERT_TRUE(PlayerAgainstBot(lobby.get(), "connect4", carol, "beginner", &against_bot).ok());
  Watch sitting(lobby.get(), against_bot.match().id(), std::nullopt, against_bot.seat_token());
  ASSERT_TRUE(Move(lobby.get(), against_bot.match().id(), 0, "4", against_bot.seat_token()).ok());
  // The same under a clock of a day: the clock was the only bound.
  v1::CreateMatchResponse timed;
  ASSERT_TRUE(PlayerAgainstBot(lobby.get(), "connect4", carol, "beginner", &timed,
                               [](v1::CreateMatchRequest& r) {
                                 r.mutable_time_control()->set_initial_ms(24 * 3600 * 1000);
                               })
                  .ok());
  Watch sitting_timed(lobby.get(), timed.match().id(), std::nullopt, timed.seat_token());
  ASSERT_TRUE(Move(lobby.get(), timed.match().id(), 0, "4", timed.seat_token()).ok());

  const HumanSeats people = HumanMatch(lobby.get(), lobby.get(), "connect4");
  Watch alice_page(lobby.get(), people.id, std::nullopt, people.tokens[0]);
  Watch bob_page(lobby.get(), people.id, std::nullopt, people.tokens[1]);
  ASSERT_TRUE(Move(lobby.get(), people.id, 0, "4", people.tokens[0]).ok());
  ASSERT_TRUE(Move(lobby.get(), people.id, 1, "4", people.tokens[1]).ok());
  ASSERT_TRUE(Move(lobby.get(), people.id, 2, "3", people.tokens[0]).ok());
  const absl::Time bobs_turn = absl::Now();
  const std::string bobs_streams =
      absl::StrCat("SELECT COALESCE(sum(streams), 0) FROM presence WHERE match_id = ", people.id,
                   " AND seat = 1");
  for (int i = 0; i < 200 && Sql(bobs_streams) != "1"; ++i) absl::SleepFor(absl::Milliseconds(25));
  ASSERT_EQ(Sql(bobs_streams), "1") << "bob's page counts as present";
  // Bob is there, on his move: refused, saying when the move's bound comes.
  v1::Match m;
  if (absl::Now() - bobs_turn < absl::Milliseconds(1500)) {
    grpc::Status early = Claim(lobby.get(), people.id, people.tokens[0], false, &m);
    EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_TRUE(absl::StrContains(early.error_message(), "bob is still connected"))
        << early.error_message();
    EXPECT_TRUE(absl::StrContains(early.error_message(), "or that has spent 2 s on one move (in"))
        << early.error_message();
  }
  // Past it, still connected: the claim wins.
  absl::SleepFor(bobs_turn + absl::Milliseconds(2300) - absl::Now());
  grpc::Status claimed = Claim(lobby.get(), people.id, people.tokens[0], false, &m);
  ASSERT_TRUE(claimed.ok()) << claimed.error_message();
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), 0);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_ABANDONED);
  EXPECT_TRUE(absl::StrContains(m.result().text(), "took over 2 s on one move"))
      << m.result().text();

  // The bot game ends by rule, its person's stream open all along: a rated loss.
  auto finished = [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; };
  const v1::Match lost =
      WaitMatch(lobby.get(), against_bot.match().id(), finished, absl::Seconds(15));
  ASSERT_EQ(lost.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(lost.result().reason(), v1::END_REASON_ABANDONED);
  EXPECT_EQ(lost.result().winner(), 1);
  EXPECT_TRUE(absl::StrContains(lost.result().text(), "took over 2 s on one move"))
      << lost.result().text();
  const v1::Match lost_timed =
      WaitMatch(lobby.get(), timed.match().id(), finished, absl::Seconds(15));
  ASSERT_EQ(lost_timed.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(lost_timed.result().reason(), v1::END_REASON_ABANDONED);
  EXPECT_TRUE(absl::StrContains(lost_timed.result().text(), "took over 2 s on one move"))
      << lost_timed.result().text();
  EXPECT_EQ(GetPlayer(lobby.get(), "carol").ratings(0).losses(), 2);
}

TEST_F(PresenceTest, PresenceWritesGrowWithTimeNotWithWatchersOrMoves) {
  LobbyInstance lobby = StartInstance();
  // Every statement that writes presence rows is counted by a trigger.
  Sql("CREATE TABLE presence_statements (n integer NOT NULL); "
      "INSERT INTO presence_statements VALUES (0); "
      "CREATE FUNCTION count_presence() RETURNS trigger LANGUAGE plpgsql AS "
      "'BEGIN UPDATE presence_statements SET n = n + 1; RETURN NULL; END'; "
      "CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON presence "
      "FOR EACH STATEMENT EXECUTE FUNCTION count_presence()");
  const absl::Time start = absl::Now();
  const HumanSeats match = HumanMatch(lobby.get(), lobby.get(), "connect4");
  {
    Watch alice(lobby.get(), match.id, std::nullopt, match.tokens[0]);
    Watch bob(lobby.get(), match.id, std::nullopt, match.tokens[1]);
    std::vector<std::unique_ptr<Watch>> spectators;
    for (int i = 0; i < 30; ++i)
      spectators.push_back(std::make_unique<Watch>(lobby.get(), match.id));
    // The players' streams are open (their snapshots came) before the first move: one opened
    // after it would have the move in its snapshot, not as an event of its own.
    auto opened = [](const auto& e) { return !e.empty(); };
    ASSERT_TRUE(alice.WaitFor(opened, absl::Seconds(10)));
    ASSERT_TRUE(bob.WaitFor(opened, absl::Seconds(10)));
    // Twenty moves, each side calling as fast as the lobby answers.
    const std::vector<std::string> moves = {"1", "2", "3", "4", "5", "6", "7", "1", "2", "3",
                                            "4", "5", "6", "7", "1", "2", "3", "4", "5", "6"};
    for (size_t ply = 0; ply < moves.size(); ++ply) {
      ASSERT_TRUE(
          Move(lobby.get(), match.id, static_cast<int>(ply), moves[ply], match.tokens[ply % 2])
              .ok());
    }
    ASSERT_TRUE(alice.WaitFor([&](const auto& e) { return MovesSeen(e).size() >= moves.size(); },
                              absl::Seconds(10)))
        << MovesSeen(alice.events()).size() << " moves seen";
  }
  absl::SleepFor(absl::Milliseconds(300));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  int statements = 0;
  ASSERT_TRUE(absl::SimpleAtoi(Sql("SELECT n FROM presence_statements"), &statements));
  // Two streams opening and closing, at most one transaction of sightings and beat (two
  // statements) per 0.1 s poll, one prune per beat: nothing for the 30 spectators or per move.
  const int bound = 4 + 2 * (static_cast<int>(seconds / 0.1) + 1) + 1 + 2;
  EXPECT_LE(statements, bound) << seconds << " s";
  EXPECT_GE(statements, 4);
  std::cout << "presence statements: " << statements << " in " << seconds
            << " s (20 moves, 2 players' streams, 30 spectators)" << std::endl;
}

TEST_F(PresenceTest, ATimedMatchHasNothingToClaim) {
  LobbyInstance lobby = StartInstance();
  v1::CreateMatchResponse created;
  ASSERT_TRUE(::ply::testing::Create(lobby.get(), "connect4",
                                     {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                                     [](v1::CreateMatchRequest& r) {
                                       r.set_take_seat(0);
                                       r.set_display_name("alice");
                                       r.mutable_time_control()->set_initial_ms(600000);
                                     })
                  .ok());
  v1::JoinMatchResponse joined;
  ASSERT_TRUE(::ply::testing::Join(lobby.get(), created.match().id(), 1, "bob", &joined).ok());
  ASSERT_TRUE(Move(lobby.get(), created.match().id(), 0, "4", created.seat_token()).ok());
  absl::SleepFor(absl::Seconds(2.5));
  v1::Match ignored;
  grpc::Status s = Claim(lobby.get(), created.match().id(), created.seat_token(), false, &ignored);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "loses on time")) << s.error_message();
}

TEST_F(PresenceTest, PresenceCrossesInstancesAndADrawMayBeClaimedThroughEither) {
  LobbyInstance a = StartInstance();
  LobbyInstance b = StartInstance();
  const HumanSeats match = HumanMatch(a.get(), b.get(), "connect4");
  // Alice and a spectator watch through A, Bob through B.
  Watch alice(a.get(), match.id, std::nullopt, match.tokens[0]);
  Watch spectator(a.get(), match.id);
  auto bob = std::make_unique<Watch>(b.get(), match.id, std::nullopt, match.tokens[1]);
  ASSERT_TRUE(Move(a.get(), match.id, 0, "4", match.tokens[0]).ok());
  // Give A time to look at least once while Bob is there: he is not announced.
  absl::SleepFor(absl::Milliseconds(800));
  EXPECT_TRUE(PresenceSeen(alice.events()).empty());
  bob.reset();
  ASSERT_TRUE(alice.WaitFor([](const auto& e) { return Saw(e, {"1:away"}); }, absl::Seconds(5)));
  ASSERT_TRUE(
      spectator.WaitFor([](const auto& e) { return Saw(e, {"1:away"}); }, absl::Seconds(5)));
  // A new look at the match says so too.
  absl::StatusOr<v1::Match> m = GetMatch(a.get(), match.id);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->seats(1).away());
  EXPECT_FALSE(m->seats(0).away());
  EXPECT_EQ(m->claim_after_ms(), 2000);
  // He comes back through B.
  bob = std::make_unique<Watch>(b.get(), match.id, std::nullopt, match.tokens[1]);
  ASSERT_TRUE(alice.WaitFor(
      [](const auto& e) {
        return Saw(e, {"1:away", "1:back"});
      },
      absl::Seconds(5)));
  // Alice's side, seen from B: she leaves, and Bob hears it there.
  ASSERT_TRUE(Move(b.get(), match.id, 1, "4", match.tokens[1]).ok());
  bob.reset();
  ASSERT_TRUE(alice.WaitFor(
      [](const auto& e) {
        return Saw(e, {"1:away", "1:back", "1:away"});
      },
      absl::Seconds(5)));
  // It is Alice's move, and Bob (gone) is not: Alice cannot claim, through either instance.
  v1::Match ignored;
  EXPECT_EQ(Claim(b.get(), match.id, match.tokens[0], true, &ignored).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(Move(a.get(), match.id, 2, "3", match.tokens[0]).ok());
  absl::SleepFor(absl::Milliseconds(2200));
  // Through B this time: the draw.
  v1::Match drawn;
  grpc::Status s = Claim(b.get(), match.id, match.tokens[0], true, &drawn);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(drawn.result().winner(), -1);
  EXPECT_EQ(drawn.result().reason(), v1::END_REASON_ABANDONED);
  ASSERT_TRUE(alice.WaitDone(absl::Seconds(5)));
  EXPECT_EQ(GameOvers(alice.events()), 1);
  EXPECT_EQ(alice.events().back().game_over().result().winner(), -1);
}

TEST_F(PresenceTest, AFirstMoveThatNeverComesAbortsTheMatchWithoutRatingChange) {
  LobbyInstance lobby = StartInstance({"--abort_after_s=1.5"});
  const std::string ann = Register(lobby.get(), "ann");
  const std::string ben = Register(lobby.get(), "ben");
  // Ann never plays her first move; in the other match Ben never plays his.
  const HumanSeats first = PlayersMatch(lobby.get(), "connect4", ann, ben);
  const HumanSeats second = PlayersMatch(lobby.get(), "connect4", ann, ben);
  ASSERT_TRUE(Move(lobby.get(), second.id, 0, "4", second.tokens[0]).ok());
  Watch spectator(lobby.get(), first.id);
  // Not before the bound.
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(GetMatch(lobby.get(), first.id)->status(), v1::MATCH_STATUS_ACTIVE);
  for (int64_t id : {first.id, second.id}) {
    v1::Match m = WaitMatch(lobby.get(), id, [](const v1::Match& m) {
      return m.status() == v1::MATCH_STATUS_FINISHED;
    });
    EXPECT_EQ(m.result().reason(), v1::END_REASON_ABORTED) << id;
    EXPECT_EQ(m.result().winner(), -1);
    EXPECT_TRUE(absl::StrContains(m.result().text(), "aborted")) << m.result().text();
    EXPECT_EQ(m.seats(0).rating_after(), 0);
  }
  ASSERT_TRUE(spectator.WaitDone(absl::Seconds(5)));
  ASSERT_TRUE(HasGameOver(spectator.events()));
  EXPECT_EQ(spectator.events().back().game_over().result().reason(), v1::END_REASON_ABORTED);
  // Nobody's rating moved, and no game counts.
  for (const char* name : {"ann", "ben"}) {
    const v1::Player p = GetPlayer(lobby.get(), name);
    for (const v1::GameRating& r : p.ratings()) {
      EXPECT_EQ(r.games(), 0) << name;
      EXPECT_EQ(r.rating(), 1500) << name;
    }
  }
  // A move after the abort is refused.
  EXPECT_EQ(Move(lobby.get(), second.id, 1, "4", second.tokens[1]).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(PresenceTest, MatchesAbandonedInAnOldDatabaseAreSweptOnceByTwoInstances) {
  int64_t unstarted = 0, one_move = 0, under_way = 0;
  std::string under_way_alice;
  {
    // A lobby that knows no such rules leaves three matches behind.
    LobbyInstance old = StartInstance();
    unstarted = HumanMatch(old.get(), old.get(), "connect4").id;
    const HumanSeats second = HumanMatch(old.get(), old.get(), "connect4");
    one_move = second.id;
    ASSERT_TRUE(Move(old.get(), one_move, 0, "4", second.tokens[0]).ok());
    const HumanSeats third = HumanMatch(old.get(), old.get(), "connect4");
    under_way = third.id;
    under_way_alice = third.tokens[0];
    for (int ply = 0; ply < 3; ++ply) {
      ASSERT_TRUE(Move(old.get(), under_way, ply, ply % 2 ? "1" : "4", third.tokens[ply % 2]).ok());
    }
  }
  // An hour ago, as far as the database can tell.
  Sql("UPDATE matches SET turn_started_ms = turn_started_ms - 3600000");
  Sql("UPDATE presence SET seen_ms = seen_ms - 3600000");
  LobbyInstance a = StartInstance({"--abort_after_s=60", "--claim_after_s=120"});
  LobbyInstance b = StartInstance({"--abort_after_s=60", "--claim_after_s=120"});
  Watch on_a(a.get(), unstarted);
  Watch on_b(b.get(), unstarted);
  for (int64_t id : {unstarted, one_move}) {
    v1::Match m = WaitMatch(
        a.get(), id, [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; });
    EXPECT_EQ(m.result().reason(), v1::END_REASON_ABORTED) << id;
  }
  ASSERT_TRUE(on_a.WaitDone(absl::Seconds(5)));
  ASSERT_TRUE(on_b.WaitDone(absl::Seconds(5)));
  EXPECT_LE(GameOvers(on_a.events()), 1);
  EXPECT_LE(GameOvers(on_b.events()), 1);
  EXPECT_EQ(on_a.events().back().game_over().result().reason(), v1::END_REASON_ABORTED);
  // The match under way is not aborted, but Bob (to move) has been gone an hour: Alice may claim.
  absl::StatusOr<v1::Match> m = GetMatch(b.get(), under_way);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status(), v1::MATCH_STATUS_ACTIVE);
  v1::Match won;
  grpc::Status s = Claim(b.get(), under_way, under_way_alice, false, &won);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(won.result().winner(), 0);
  EXPECT_EQ(won.result().reason(), v1::END_REASON_ABANDONED);
}

}  // namespace
}  // namespace ply
