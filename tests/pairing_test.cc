// Pairing end to end: two players paired within seconds, a lone player offered the nearest bot,
// queueing again from another connection, two hundred joins over two instances each paired once,
// a crashed instance's queue entry, and the address's stream cap. Real PostgreSQL, ply-bot and
// ply-lobby processes.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/players_fixture.h"
#include "tests/players_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using ::ply::testing::GetMatch;
using ::ply::testing::Move;
using ::ply::testing::PlayersTest;
using ::ply::testing::ServerProcess;

// One player in the pairing queue, its stream read on a thread of its own.
class Pairer {
 public:
  Pairer(v1::LobbyService::Stub* stub, const std::string& key, const std::string& game) {
    context_.AddMetadata("x-ply-player", key);
    v1::PairRequest request;
    request.mutable_spec()->set_name(game);
    start_ = absl::Now();
    reader_ = stub->Pair(&context_, request);
    thread_ = std::thread([this] {
      v1::PairEvent e;
      while (reader_->Read(&e)) {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back(e);
        if (e.has_paired()) paired_after_ = absl::Now() - start_;
        changed_.notify_all();
      }
      status_ = reader_->Finish();
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
      changed_.notify_all();
    });
  }
  ~Pairer() {
    context_.TryCancel();
    thread_.join();
  }
  bool Wait(const std::function<bool(const std::vector<v1::PairEvent>&)>& ready,
            absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] {
      return ready(events_) || done_;
    }) && ready(events_);
  }
  std::optional<v1::PairFound> Paired() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const v1::PairEvent& e : events_) {
      if (e.has_paired()) return e.paired();
    }
    return std::nullopt;
  }
  absl::Duration paired_after() {
    std::lock_guard<std::mutex> lock(mu_);
    return paired_after_;
  }
  void Leave() { context_.TryCancel(); }
  // The stream's end status once it has ended, or nothing within the timeout.
  std::optional<grpc::Status> Ended(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return done_; })) {
      return std::nullopt;
    }
    return status_;
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::PairEvent>> reader_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<v1::PairEvent> events_;
  grpc::Status status_;
  absl::Time start_;
  absl::Duration paired_after_;
  bool done_ = false;
};

TEST_F(PlayersTest, PairStreamsCountAgainstTheAddresssStreamCap) {
  // One address holding many player keys must not hold more open streams than --client_streams
  // allows: each Pair stream stays open while its player waits, polling the database.
  lobby_.reset();
  StartLobby({"--client_streams=2"});
  const std::string a = Register("alice"), b = Register("bob"), c = Register("carol");
  // Different games, so that nobody is paired and every stream stays open.
  Pairer first(stub_.get(), a, "tictactoe");
  Pairer second(stub_.get(), b, "connect4");
  EXPECT_FALSE(first.Ended(absl::Milliseconds(500)).has_value());
  EXPECT_FALSE(second.Ended(absl::Milliseconds(100)).has_value());
  Pairer third(stub_.get(), c, "reversi");
  std::optional<grpc::Status> refused = third.Ended(absl::Seconds(5));
  ASSERT_TRUE(refused.has_value()) << "a third stream from the address is still open";
  EXPECT_EQ(refused->error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused->error_message();
  // Closing one frees its place.
  first.Leave();
  ASSERT_TRUE(first.Ended(absl::Seconds(5)).has_value());
  absl::SleepFor(absl::Milliseconds(300));
  Pairer again(stub_.get(), c, "reversi");
  EXPECT_FALSE(again.Ended(absl::Milliseconds(500)).has_value());
}

bool HasPairing(const std::vector<v1::PairEvent>& events) {
  return std::any_of(events.begin(), events.end(),
                     [](const v1::PairEvent& e) { return e.has_paired(); });
}

TEST_F(PlayersTest, TwoPlayersArePairedIntoOneMatchWithinSeconds) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  Pairer a(stub_.get(), alice, "connect4");
  Pairer b(stub_.get(), bob, "connect4");
  ASSERT_TRUE(a.Wait(HasPairing, absl::Seconds(5)));
  ASSERT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
  const v1::PairFound pa = *a.Paired();
  const v1::PairFound pb = *b.Paired();
  EXPECT_EQ(pa.match_id(), pb.match_id());
  EXPECT_NE(pa.seat(), pb.seat());
  EXPECT_EQ(pa.opponent(), "bob");
  EXPECT_EQ(pb.opponent(), "alice");
  // The tokens hold the seats: the first player moves.
  const v1::PairFound& first = pa.seat() == 0 ? pa : pb;
  EXPECT_TRUE(Move(stub_.get(), pa.match_id(), 0, "4", first.seat_token()).ok());
  absl::StatusOr<v1::Match> m = GetMatch(stub_.get(), pa.match_id());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(m->seats(0).player().empty(), false);
}

// Pairs two registered players in connect4: their pairings, seat 0's first.
std::pair<v1::PairFound, v1::PairFound> PairTwo(v1::LobbyService::Stub* stub, const std::string& a,
                                                const std::string& b) {
  Pairer first(stub, a, "connect4");
  Pairer second(stub, b, "connect4");
  EXPECT_TRUE(first.Wait(HasPairing, absl::Seconds(5)));
  EXPECT_TRUE(second.Wait(HasPairing, absl::Seconds(5)));
  v1::PairFound pa = first.Paired().value_or(v1::PairFound());
  v1::PairFound pb = second.Paired().value_or(v1::PairFound());
  if (pa.seat() != 0) std::swap(pa, pb);
  return {pa, pb};
}

TEST_F(PlayersTest, APairedPlayerWhoNeverComesHasTheMatchAbortedWithinSeconds) {
  // The attack on the waiting player, in its plain form: paired with someone whose client took
  // the seat's token and then never came (a web page closed just before the pairing reached
  // it, a client killed at that moment). The present player waited abort_after (two minutes)
  // for a first move that could not come.
  lobby_.reset();
  StartLobby({"--no_show_after_s=2", "--abort_after_s=120"});
  const std::string alice = Register("alice"), bob = Register("bob");
  const auto [first, second] = PairTwo(stub_.get(), alice, bob);
  ASSERT_EQ(first.match_id(), second.match_id());
  const absl::Time paired = absl::Now();
  // The player who came watches the match with the seat's token; the other never comes.
  const bool alice_first = first.opponent() == "bob";
  ::ply::testing::Watch here(stub_.get(), first.match_id(), {},
                             alice_first ? first.seat_token() : second.seat_token());
  if (alice_first) {
    ASSERT_TRUE(Move(stub_.get(), first.match_id(), 0, "4", first.seat_token()).ok());
  }
  const v1::Match m = ::ply::testing::WaitMatch(
      stub_.get(), first.match_id(),
      [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; },
      absl::Seconds(15));
  ASSERT_EQ(m.status(), v1::MATCH_STATUS_FINISHED) << m.DebugString();
  EXPECT_LT(absl::Now() - paired, absl::Seconds(10));
  EXPECT_EQ(m.result().reason(), v1::END_REASON_ABORTED);
  EXPECT_EQ(m.result().winner(), -1);
  EXPECT_EQ(m.result().text(),
            "aborted: bob did not come to the game within 2 s of the pairing; "
            "no result")
      << m.result().text();
  // The one who came hears it on the stream.
  EXPECT_TRUE(here.WaitFor(::ply::testing::HasGameOver, absl::Seconds(5)));
  // Who did not come waits before pairing again (walking away cost nothing: a player could
  // dodge any opponent or seat, and keep the present one queueing); who came does not.
  {
    Pairer again(stub_.get(), bob, "connect4");
    std::optional<grpc::Status> refused = again.Ended(absl::Seconds(5));
    ASSERT_TRUE(refused.has_value()) << "bob queued again at once";
    EXPECT_EQ(refused->error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(refused->error_message().find(
                  "you did not come to, or made no first move in, a match against a person in "
                  "the last day"),
              std::string::npos)
        << refused->error_message();
    // A minute for the first no-show (said "1 min", or "59 s" a moment later).
    const std::string& why = refused->error_message();
    EXPECT_TRUE(why.find("you can pair again in 1 min") != std::string::npos ||
                why.find("you can pair again in 5") != std::string::npos)
        << why;
    Pairer waiting(stub_.get(), alice, "connect4");
    EXPECT_FALSE(waiting.Ended(absl::Milliseconds(700)).has_value()) << "alice may queue";
  }

  // Alice's entry goes with her stream (carol could be paired with it otherwise).
  std::string left;
  for (int i = 0; i < 100 && (left = Sql("SELECT count(*) FROM pairing_queue")) != "0"; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(left, "0");
  // Two players who both come keep their game: one watches, the other only calls (a move or
  // an "I am here"), and the match lives on past the bound.
  const std::string carol = Register("carol"), dave = Register("dave");
  const auto [c0, c1] = PairTwo(stub_.get(), carol, dave);
  ::ply::testing::Watch watching(stub_.get(), c1.match_id(), {}, c1.seat_token());
  ASSERT_TRUE(Move(stub_.get(), c0.match_id(), 0, "4", c0.seat_token()).ok());
  absl::SleepFor(absl::Seconds(4));
  absl::StatusOr<v1::Match> kept = GetMatch(stub_.get(), c0.match_id());
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->status(), v1::MATCH_STATUS_ACTIVE) << kept->result().text();
  EXPECT_TRUE(Move(stub_.get(), c0.match_id(), 1, "4", c1.seat_token()).ok());
}

// `key`'s Pair in connect4 is refused at once (FAILED_PRECONDITION) with a message holding
// `why`; `otherwise` says what it means when it is not.
void ExpectPairRefused(v1::LobbyService::Stub* stub, const std::string& key, const std::string& why,
                       const std::string& otherwise) {
  Pairer again(stub, key, "connect4");
  std::optional<grpc::Status> refused = again.Ended(absl::Seconds(5));
  ASSERT_TRUE(refused.has_value()) << otherwise;
  EXPECT_EQ(refused->error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused->error_message().find(why), std::string::npos) << refused->error_message();
}

TEST_F(PlayersTest, APairedPlayerWhoComesButNeverMovesWaitsBeforePairingAgain) {
  // The no-show rule's other door (a fourth hostile review): come to the paired match (one
  // presence beat, a stream), see the opponent or the colour, and make no first move. The match
  // was aborted after abort_after (two minutes the opponent waited) with no result, which cost
  // nothing: the player queued again at once, even while the match still waited.
  lobby_.reset();
  StartLobby({"--no_show_after_s=0", "--paired_first_move_s=2", "--abort_after_s=120"});
  const std::string alice = Register("alice"), bob = Register("bob");
  const absl::Time paired = absl::Now();
  const auto [first, second] = PairTwo(stub_.get(), alice, bob);
  ASSERT_EQ(first.match_id(), second.match_id());
  ::ply::testing::Watch w0(stub_.get(), first.match_id(), {}, first.seat_token());
  ::ply::testing::Watch w1(stub_.get(), second.match_id(), {}, second.seat_token());
  const v1::Match m = ::ply::testing::WaitMatch(
      stub_.get(), first.match_id(),
      [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; },
      absl::Seconds(15));
  ASSERT_EQ(m.status(), v1::MATCH_STATUS_FINISHED) << m.DebugString();
  EXPECT_LT(absl::Now() - paired, absl::Seconds(10));
  EXPECT_EQ(m.result().reason(), v1::END_REASON_ABORTED) << m.result().text();
  EXPECT_EQ(m.result().winner(), -1);
  // The first seat's player made no move: that one waits; the other queues.
  const bool alice_first = first.opponent() == "bob";
  EXPECT_EQ(m.result().text(), absl::StrCat("aborted: ", alice_first ? "alice" : "bob",
                                            " made no first move within 2 s; no result"));
  const std::string& idle = alice_first ? alice : bob;
  const std::string& kept = alice_first ? bob : alice;
  ExpectPairRefused(stub_.get(), idle,
                    "you did not come to, or made no first move in, a match against a person",
                    "the player who made no first move queued again at once");
  Pairer waiting(stub_.get(), kept, "connect4");
  EXPECT_FALSE(waiting.Ended(absl::Milliseconds(700)).has_value()) << "the other may queue";
}

TEST_F(PlayersTest, APairedPlayerToMoveFirstCannotQueueAgainNorResignTheGameAwayForFree) {
  // While a paired match waited for their first move, the dodger paired again at once (the
  // fourth review; and a lobby restarted after the pairing forgot its no-show timers, the
  // fifth). Resigning on one's first move ended it unrated at no cost either.
  lobby_.reset();
  StartLobby({"--no_show_after_s=0"});
  const std::string alice = Register("alice"), bob = Register("bob");
  const auto [first, second] = PairTwo(stub_.get(), alice, bob);
  const bool alice_first = first.opponent() == "bob";
  const std::string& idle = alice_first ? alice : bob;
  const std::string& waiting = alice_first ? bob : alice;
  {
    ExpectPairRefused(stub_.get(), idle,
                      absl::StrCat("match ", first.match_id(), " waits for your first move"),
                      "the player to move first queued again");
    // The one waiting on them may give up waiting and queue.
    Pairer other(stub_.get(), waiting, "connect4");
    EXPECT_FALSE(other.Ended(absl::Milliseconds(700)).has_value()) << "the waiting one may queue";
  }
  v1::Match resigned;
  ASSERT_TRUE(
      ::ply::testing::Resign(stub_.get(), first.match_id(), first.seat_token(), &resigned).ok());
  EXPECT_EQ(resigned.status(), v1::MATCH_STATUS_FINISHED);
  ExpectPairRefused(stub_.get(), idle, "you did not come to, or made no first move in",
                    "resigning on the first move cost nothing");
}

TEST_F(PlayersTest, AGameBetweenPeopleAbortedForWantOfAFirstMoveHoldsTheIdlePlayerBack) {
  // The general first-move abort (any match, abort_after) marks the idle player of a match
  // between people as the paired ones are; against a bot nobody waited, and nothing is marked.
  lobby_.reset();
  StartLobby({"--abort_after_s=1.5"});
  const std::string alice = Register("alice"), bob = Register("bob"), carol = Register("carol");
  const ::ply::testing::HumanSeats seats = PlayerMatch("connect4", alice, bob);
  v1::CreateMatchResponse created;
  ASSERT_TRUE(::ply::testing::PlayerAgainstBot(stub_.get(), "connect4", carol, "easy", &created,
                                               [](v1::CreateMatchRequest&) {})
                  .ok());
  for (int64_t id : {seats.id, created.match().id()}) {
    const v1::Match m = ::ply::testing::WaitMatch(
        stub_.get(), id, [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; },
        absl::Seconds(15));
    ASSERT_EQ(m.result().reason(), v1::END_REASON_ABORTED) << m.DebugString();
  }
  Pairer idle(stub_.get(), alice, "connect4");
  std::optional<grpc::Status> refused = idle.Ended(absl::Seconds(5));
  ASSERT_TRUE(refused.has_value()) << "alice made no first move and queued again at once";
  EXPECT_EQ(refused->error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  Pairer waited(stub_.get(), bob, "connect4");
  EXPECT_FALSE(waited.Ended(absl::Milliseconds(700)).has_value()) << "bob may queue";
  Pairer against_bot(stub_.get(), carol, "reversi");
  EXPECT_FALSE(against_bot.Ended(absl::Milliseconds(700)).has_value())
      << "carol was held back for a bot game";
}

// A connect4 game of `key`'s from the second seat against bot:easy, begun (the bot's move and
// one of the person's) and resigned; `casual` or rated.
void LoseFromTheSecondSeat(v1::LobbyService::Stub* stub, const std::string& key, bool casual) {
  v1::CreateMatchResponse created;
  ASSERT_TRUE(::ply::testing::PlayerAgainstBot(stub, "connect4", key, "easy", &created,
                                               [casual](v1::CreateMatchRequest& r) {
                                                 r.mutable_seats()->SwapElements(0, 1);
                                                 r.set_take_seat(1);
                                                 r.set_bot_pacing_ms(0);
                                                 r.set_casual(casual);
                                               })
                  .ok());
  const int64_t id = created.match().id();
  ::ply::testing::WaitMatch(stub, id, [](const v1::Match& m) { return m.moves_size() >= 1; });
  ASSERT_TRUE(Move(stub, id, 1, "4", created.seat_token()).ok());
  ASSERT_TRUE(::ply::testing::Resign(stub, id, created.seat_token()).ok());
}

TEST_F(PlayersTest, TheFirstMoveIsNotBoughtWithCasualOrAbortedGames) {
  // The attack: before queueing, a player loses casual games from the second seat (free) or
  // walks away from paired matches (aborted, free), so that the colour rule (whoever began
  // more of their last games moves second) gives them the first move.
  // Any rating gap pairs (the rated losses below move alice's rating).
  lobby_.reset();
  StartLobby({"--pair_base_gap=2000", "--pair_max_gap=2000"});
  const std::string alice = Register("alice"), bob = Register("bob");
  for (int i = 0; i < 3; ++i) LoseFromTheSecondSeat(stub_.get(), alice, /*casual=*/true);
  // Bob queues first: on a tie he moves first.
  const auto pair_bob_first = [&] {
    Pairer b(stub_.get(), bob, "connect4");
    absl::SleepFor(absl::Milliseconds(300));
    Pairer a(stub_.get(), alice, "connect4");
    EXPECT_TRUE(a.Wait(HasPairing, absl::Seconds(5)));
    EXPECT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
    const v1::PairFound pa = a.Paired().value_or(v1::PairFound());
    const v1::PairFound pb = b.Paired().value_or(v1::PairFound());
    // Ended unbegun by agreement, which marks nobody: a player to move first in a waiting
    // match may not queue again.
    for (const std::string& token : {pa.seat_token(), pb.seat_token()}) {
      v1::OfferDrawRequest offer;
      offer.set_match_id(pa.match_id());
      grpc::ClientContext context;
      context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
      v1::Match m;
      EXPECT_TRUE(stub_->OfferDraw(&context, offer, &m).ok());
    }
    return pa.seat();
  };
  EXPECT_EQ(pair_bob_first(), 1) << "alice's casual losses bought her the first move";
  // That match, never begun, counts for nobody either; rated games lost from the second seat
  // (which cost rating) do.
  for (int i = 0; i < 2; ++i) LoseFromTheSecondSeat(stub_.get(), alice, /*casual=*/false);
  EXPECT_EQ(pair_bob_first(), 0) << "alice began fewer of her rated games: she moves first";
}

TEST_F(PlayersTest, ALonePlayerIsOfferedTheNearestBotAndLeavingTheQueueIsAtOnce) {
  lobby_.reset();
  StartLobby({"--pair_bot_after_s=1"});
  const std::string alice = Register("alice");
  {
    Pairer a(stub_.get(), alice, "tictactoe");
    ASSERT_TRUE(a.Wait(
        [](const std::vector<v1::PairEvent>& events) {
          return std::any_of(events.begin(), events.end(),
                             [](const v1::PairEvent& e) { return e.has_bot_offer(); });
        },
        absl::Seconds(5)));
    a.Leave();
  }
  std::string left;
  for (int i = 0; i < 50 && (left = Sql("SELECT count(*) FROM pairing_queue")) != "0"; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(left, "0") << "the entry leaves with the stream";
  // Guests cannot queue.
  grpc::ClientContext context;
  v1::PairRequest request;
  request.mutable_spec()->set_name("tictactoe");
  auto reader = stub_->Pair(&context, request);
  v1::PairEvent e;
  EXPECT_FALSE(reader->Read(&e));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(PlayersTest, QueueingAgainFromAnotherConnectionTakesThePlaceOver) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  Pairer first(stub_.get(), alice, "connect4");
  absl::SleepFor(absl::Milliseconds(300));  // queued and ticking
  ASSERT_FALSE(first.Ended(absl::ZeroDuration()).has_value());
  Pairer second(stub_.get(), alice, "connect4");
  // The first stream ends, told why; the second is the one paired.
  std::optional<grpc::Status> ended = first.Ended(absl::Seconds(5));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->error_code(), grpc::StatusCode::ABORTED) << ended->error_message();
  EXPECT_NE(ended->error_message().find("another connection"), std::string::npos);
  Pairer b(stub_.get(), bob, "connect4");
  ASSERT_TRUE(second.Wait(HasPairing, absl::Seconds(5)));
  ASSERT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
  EXPECT_EQ(second.Paired()->match_id(), b.Paired()->match_id());
  EXPECT_FALSE(first.Paired().has_value());
}

TEST_F(PlayersTest, TwoHundredJoinsOverTwoInstancesPairEveryoneExactlyOnce) {
  // A second instance on the same database: half the players queue through it.
  auto second = ServerProcess::Start(
      PLY_LOBBY_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", url_),
                         "--bot_pacing_ms=0", "--client_limit_exempt=127.0.0.1"});
  ASSERT_TRUE(second.ok()) << second.status();
  auto other = v1::LobbyService::NewStub((*second)->channel());
  lobby_.reset();
  StartLobby({"--client_limit_exempt=127.0.0.1"});
  constexpr int kPlayers = 200;
  std::vector<std::string> keys;
  for (int i = 0; i < kPlayers; ++i) keys.push_back(Register(absl::StrCat("p", i)));
  std::vector<std::unique_ptr<Pairer>> pairers;
  for (int i = 0; i < kPlayers; ++i) {
    pairers.push_back(
        std::make_unique<Pairer>(i % 2 ? other.get() : stub_.get(), keys[i], "connect4"));
  }
  std::map<int64_t, int> seats_per_match;
  std::vector<double> waited_ms;
  for (auto& p : pairers) {
    ASSERT_TRUE(p->Wait(HasPairing, absl::Seconds(30)));
    ++seats_per_match[p->Paired()->match_id()];
    waited_ms.push_back(absl::ToDoubleMilliseconds(p->paired_after()));
  }
  EXPECT_EQ(seats_per_match.size(), static_cast<size_t>(kPlayers / 2));
  for (const auto& [id, seats] : seats_per_match) EXPECT_EQ(seats, 2) << "match " << id;
  std::sort(waited_ms.begin(), waited_ms.end());
  std::printf("pairing 200 joins over 2 instances: p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
              waited_ms[kPlayers / 2], waited_ms[kPlayers * 99 / 100], waited_ms.back());
}

TEST_F(PlayersTest, ACrashedInstancesQueueEntryIsPairedWithNobodyAndHoldsNoToken) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto second = ServerProcess::Start(
      PLY_LOBBY_BINARY,
      {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", url_), "--bot_pacing_ms=0"});
  ASSERT_TRUE(second.ok()) << second.status();
  auto other = v1::LobbyService::NewStub((*second)->channel());
  {
    // Alice waits through the second instance, which then dies with her stream open.
    Pairer waiting(other.get(), alice, "connect4");
    ASSERT_TRUE(waiting.Wait(
        [](const std::vector<v1::PairEvent>& e) { return !e.empty() && e[0].has_waiting(); },
        absl::Seconds(5)));
    // The row holds the hash of a seat token, never a token.
    EXPECT_EQ(Sql("SELECT length(token_hash) FROM pairing_queue"), "64");
    EXPECT_EQ(Sql("SELECT count(*) FROM information_schema.columns WHERE"
                  " table_name = 'pairing_queue' AND column_name LIKE '%token'"),
              "0");
    (*second)->Signal(SIGKILL);
    ASSERT_TRUE(waiting.Ended(absl::Seconds(10)).has_value());
  }
  // Past the entry's lifetime (5 s unrefreshed), bob queues here: he is not paired into a match
  // with nobody at the other seat, and the dead entry is gone.
  absl::SleepFor(absl::Seconds(5.5));
  Pairer b(stub_.get(), bob, "connect4");
  EXPECT_FALSE(b.Wait(HasPairing, absl::Seconds(2))) << "paired with a dead entry";
  EXPECT_EQ(Sql("SELECT count(*) FROM pairing_queue WHERE player_id ="
                " (SELECT id FROM players WHERE name = 'alice')"),
            "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM matches"), "0");
  // Alice comes back through the live instance and is queued (not "paired a moment ago"),
  // and the two are paired.
  Pairer a(stub_.get(), alice, "connect4");
  ASSERT_TRUE(a.Wait(HasPairing, absl::Seconds(5)));
  ASSERT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
  EXPECT_EQ(a.Paired()->match_id(), b.Paired()->match_id());
  // Each stream's own token plays its seat.
  const std::string token =
      a.Paired()->seat() == 0 ? a.Paired()->seat_token() : b.Paired()->seat_token();
  grpc::Status moved = Move(stub_.get(), a.Paired()->match_id(), 0, "4", token);
  EXPECT_TRUE(moved.ok()) << moved.error_message();
}

}  // namespace
}  // namespace ply
