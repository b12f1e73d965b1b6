// The lobby's match logic on its own: an in-memory store (no PostgreSQL), no bots, and a time
// source the test moves by hand, so that clocks run out without anyone waiting. What needs real
// processes and a real database (group commit, restarts, several instances) is lobby_test's
// and lobby_scale_test's.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/analysis/win_chance.h"
#include "engine/registry/registry.h"
#include "lobby-server/bots/driver.h"
#include "lobby-server/executor.h"
#include "lobby-server/lobby.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/match/rules.h"
#include "lobby-server/storage/memory/memory_store.h"
#include "lobby-server/token.h"

namespace ply::lobby {
namespace {

using ::google::protobuf::util::MessageDifferencer;

// What a watcher was sent, in order.
class RecordingSink final : public EventSink {
 public:
  explicit RecordingSink(bool follows_rematch = false) : follows_rematch_(follows_rematch) {}
  bool FollowsRematch() const override { return follows_rematch_; }
  bool Closed() override {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_ || left_;
  }
  // The client went away (its stream is over) without the lobby being told by a failed push.
  void Leave() {
    std::lock_guard<std::mutex> lock(mu_);
    left_ = true;
  }
  bool Push(v1::MatchEvent event) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
    return !closed_;
  }
  void Close(const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    status_ = status;
  }
  std::vector<v1::MatchEvent> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::vector<int> PliesSeen() {
    std::vector<int> plies;
    for (const v1::MatchEvent& e : events()) {
      if (e.has_move_applied()) plies.push_back(e.move_applied().move().ply());
    }
    return plies;
  }
  std::optional<absl::Status> closed() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) return std::nullopt;
    return status_;
  }

 private:
  const bool follows_rematch_;
  std::mutex mu_;
  std::vector<v1::MatchEvent> events_;
  bool closed_ = false;
  bool left_ = false;
  absl::Status status_;
};

struct Seats {
  int64_t id = 0;
  std::string first;
  std::string second;
};

class LobbyUnitTest : public ::testing::Test {
 protected:
  static constexpr int64_t kStartMs = 1'750'000'000'000;

  void SetUp() override { Start(LobbyOptions{}); }
  void TearDown() override { Stop(); }

  // `async_appends`: the store answers the fast path's commits on a thread of its own.
  void Start(LobbyOptions options, bool async_appends = false) {
    store_ = std::make_unique<MemoryStore>(async_appends);
    options.now_ms = [this] { return now_ms_.load(); };
    executor_ = std::make_unique<Executor>(/*threads=*/2, /*max_queued=*/1000);
    lobby_ = std::make_unique<Lobby>(store_.get(), /*bots=*/nullptr, executor_.get(), options);
    ASSERT_TRUE(lobby_->Resume().ok());
  }
  void Stop() {
    if (lobby_ == nullptr) return;
    lobby_->Shutdown();
    executor_->Stop();
    // Answers the moves still queued while the lobby can take them.
    store_.reset();
    lobby_.reset();
    executor_.reset();
  }
  void Advance(absl::Duration d) { now_ms_ += absl::ToInt64Milliseconds(d); }

  // A two-person match with both seats taken (so active), and their tokens.
  Seats HumanMatch(const std::string& game, std::optional<v1::TimeControl> clock = std::nullopt) {
    v1::CreateMatchRequest req;
    req.mutable_spec()->set_name(game);
    req.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    req.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    req.set_take_seat(0);
    req.set_display_name("alice");
    if (clock) *req.mutable_time_control() = *clock;
    absl::StatusOr<v1::CreateMatchResponse> created = lobby_->CreateMatch(req);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return {};
    EXPECT_EQ(created->match().status(), v1::MATCH_STATUS_WAITING);
    v1::JoinMatchRequest join;
    join.set_match_id(created->match().id());
    join.set_seat(1);
    join.set_display_name("bob");
    absl::StatusOr<v1::JoinMatchResponse> joined = lobby_->JoinMatch(join);
    EXPECT_TRUE(joined.ok()) << joined.status();
    if (!joined.ok()) return {};
    EXPECT_EQ(joined->match().status(), v1::MATCH_STATUS_ACTIVE);
    return {created->match().id(), created->seat_token(), joined->seat_token()};
  }

  static v1::MakeMoveRequest MoveRequest(int64_t id, int ply, const std::string& move) {
    v1::MakeMoveRequest req;
    req.set_match_id(id);
    req.set_expected_ply(ply);
    req.set_move(move);
    return req;
  }
  absl::StatusOr<v1::MakeMoveResponse> Move(int64_t id, int ply, const std::string& move,
                                            const std::string& token) {
    return lobby_->MakeMove(MoveRequest(id, ply, move), token);
  }
  // The fast path's answer, or nullopt when it handed the call on (as it must for any error).
  std::optional<absl::StatusOr<v1::MakeMoveResponse>> FastMove(int64_t id, int ply,
                                                               const std::string& move,
                                                               const std::string& token) {
    std::optional<absl::StatusOr<v1::MakeMoveResponse>> answer;
    std::mutex mu;
    std::condition_variable done;
    const bool taken = lobby_->TryMakeMove(MoveRequest(id, ply, move), token,
                                           [&](absl::StatusOr<v1::MakeMoveResponse> r) {
                                             std::lock_guard<std::mutex> lock(mu);
                                             answer = std::move(r);
                                             done.notify_all();
                                           });
    if (!taken) return std::nullopt;
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, [&] { return answer.has_value(); });
    return answer;
  }
  v1::Match Get(int64_t id) {
    absl::StatusOr<v1::Match> m = lobby_->GetMatch(id);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::Match();
  }

  std::atomic<int64_t> now_ms_{kStartMs};
  std::unique_ptr<MemoryStore> store_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Lobby> lobby_;
};

v1::TimeControl Clock(int64_t initial_ms, int64_t increment_ms) {
  v1::TimeControl tc;
  tc.set_initial_ms(initial_ms);
  tc.set_increment_ms(increment_ms);
  return tc;
}

TEST(ResultText, SaysTheCountsOfAGameDecidedByThem) {
  // A Reversi result said "White wins: neither side can move" under a board of 58 to 0.
  const GameInfo* reversi = ::ply::FindGame("reversi");
  ASSERT_NE(reversi, nullptr);
  GameStatus s{.over = true, .winner = 1, .reason = "neither side can move", .points = {0, 58}};
  EXPECT_EQ(lobby::ResultText(reversi, s), "White wins 58-0: neither side can move");
  s = {.over = true, .winner = 0, .reason = "the board is full", .points = {33, 31}};
  EXPECT_EQ(lobby::ResultText(reversi, s), "Black wins 33-31: the board is full");
  s = {.over = true, .winner = -1, .reason = "the board is full", .points = {32, 32}};
  EXPECT_EQ(lobby::ResultText(reversi, s), "draw 32-32: the board is full");
  // Games with no count say only why.
  s = {.over = true, .winner = 0, .reason = "four in a row"};
  EXPECT_EQ(lobby::ResultText(::ply::FindGame("connect4"), s), "Red wins: four in a row");
}

TEST_F(LobbyUnitTest, PlaysToAWinWhileAWatcherSeesEveryMoveOnce) {
  const Seats m = HumanMatch("tictactoe");
  auto watcher = std::make_shared<RecordingSink>();
  ASSERT_TRUE(lobby_->Watch(m.id, std::nullopt, watcher).ok());
  const std::vector<std::string> moves = {"a1", "b1", "a2", "b2", "a3"};
  for (size_t i = 0; i < moves.size(); ++i) {
    absl::StatusOr<v1::MakeMoveResponse> r =
        Move(m.id, static_cast<int>(i), moves[i], i % 2 ? m.second : m.first);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->move().ply(), static_cast<int>(i) + 1);
  }
  const v1::Match match = Get(m.id);
  EXPECT_EQ(match.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(match.result().winner(), 0);
  EXPECT_EQ(match.result().reason(), v1::END_REASON_RULES);
  EXPECT_EQ(watcher->PliesSeen(), (std::vector<int>{1, 2, 3, 4, 5}));
  ASSERT_FALSE(watcher->events().empty());
  EXPECT_TRUE(watcher->events().front().has_snapshot());
  EXPECT_TRUE(watcher->events().back().has_game_over());
  ASSERT_TRUE(watcher->closed().has_value());
  EXPECT_TRUE(watcher->closed()->ok());
  // What is stored is what was answered.
  absl::StatusOr<MatchRecord> stored = store_->LoadMatch(m.id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->ply, 5);
  EXPECT_EQ(stored->status, MatchStatus::kFinished);
  EXPECT_EQ(stored->seats[0].token_hash, TokenHash(m.first));
}

TEST_F(LobbyUnitTest, ResignationGivesTheOtherSideTheWin) {
  const Seats m = HumanMatch("connect4");
  ASSERT_TRUE(Move(m.id, 0, "4", m.first).ok());
  absl::StatusOr<v1::Match> resigned = lobby_->Resign(m.id, m.first);
  ASSERT_TRUE(resigned.ok()) << resigned.status();
  EXPECT_EQ(resigned->status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(resigned->result().winner(), 1);
  EXPECT_EQ(resigned->result().reason(), v1::END_REASON_RESIGNATION);
  EXPECT_EQ(Move(m.id, 1, "4", m.second).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(lobby_->Resign(m.id, m.second).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(LobbyUnitTest, AFollowerStaysAfterTheEndUntilBothAgreeToARematchWithSidesSwapped) {
  const Seats m = HumanMatch("tictactoe");
  auto plain = std::make_shared<RecordingSink>();
  auto follower = std::make_shared<RecordingSink>(/*follows_rematch=*/true);
  ASSERT_TRUE(lobby_->Watch(m.id, std::nullopt, plain).ok());
  ASSERT_TRUE(lobby_->Watch(m.id, std::nullopt, follower).ok());
  v1::OfferRematchRequest offer;
  offer.set_match_id(m.id);
  EXPECT_EQ(lobby_->OfferRematch(offer, m.first).status().code(),
            absl::StatusCode::kFailedPrecondition)
      << "not before the end";
  ASSERT_TRUE(lobby_->Resign(m.id, m.first).ok());
  ASSERT_TRUE(plain->closed().has_value()) << "a plain watcher's stream ends with the game";
  EXPECT_FALSE(follower->closed().has_value());
  ASSERT_TRUE(follower->events().back().has_game_over());

  absl::StatusOr<v1::OfferRematchResponse> offered = lobby_->OfferRematch(offer, m.second);
  ASSERT_TRUE(offered.ok()) << offered.status();
  EXPECT_EQ(offered->rematch_id(), 0);
  ASSERT_TRUE(follower->events().back().has_rematch());
  EXPECT_EQ(follower->events().back().rematch().offer(), 1);
  absl::StatusOr<v1::OfferRematchResponse> accepted = lobby_->OfferRematch(offer, m.first);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  ASSERT_GT(accepted->rematch_id(), m.id);
  EXPECT_EQ(accepted->seat(), 1);
  EXPECT_EQ(follower->events().back().rematch().rematch_id(), accepted->rematch_id());
  ASSERT_TRUE(follower->closed().has_value());
  EXPECT_TRUE(follower->closed()->ok());
  // Bob, who offered, gets his seat by asking again: the first seat now.
  absl::StatusOr<v1::OfferRematchResponse> bob = lobby_->OfferRematch(offer, m.second);
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->rematch_id(), accepted->rematch_id());
  EXPECT_EQ(bob->seat(), 0);
  absl::StatusOr<v1::Match> next = lobby_->GetMatch(accepted->rematch_id());
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->seats(0).display_name(), "bob");
  EXPECT_EQ(next->seats(1).display_name(), "alice");
  ASSERT_TRUE(Move(next->id(), 0, "b2", bob->seat_token()).ok());
  ASSERT_TRUE(Move(next->id(), 1, "a1", accepted->seat_token()).ok());
}

TEST_F(LobbyUnitTest, ADrawOfferedByOneSideAndOfferedBackIsADraw) {
  const Seats m = HumanMatch("connect4");
  absl::StatusOr<v1::Match> offered = lobby_->OfferDraw(m.id, m.first);
  ASSERT_TRUE(offered.ok()) << offered.status();
  EXPECT_EQ(offered->draw_offer(), 0);
  EXPECT_EQ(offered->status(), v1::MATCH_STATUS_ACTIVE);
  // Offering again changes nothing; the other side's offer accepts.
  ASSERT_TRUE(lobby_->OfferDraw(m.id, m.first).ok());
  absl::StatusOr<v1::Match> agreed = lobby_->OfferDraw(m.id, m.second);
  ASSERT_TRUE(agreed.ok()) << agreed.status();
  EXPECT_EQ(agreed->status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(agreed->result().winner(), -1);
  EXPECT_EQ(agreed->result().reason(), v1::END_REASON_AGREEMENT);
}

TEST_F(LobbyUnitTest, RejectsBadMovesWithTheirCodes) {
  const Seats m = HumanMatch("tictactoe");
  const Seats other = HumanMatch("tictactoe");
  EXPECT_EQ(Move(m.id, 0, "z9", m.first).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Move(m.id, 0, "a1", m.second).status().code(), absl::StatusCode::kFailedPrecondition)
      << "out of turn";
  EXPECT_EQ(Move(m.id, 3, "a1", m.first).status().code(), absl::StatusCode::kFailedPrecondition)
      << "stale ply";
  EXPECT_EQ(Move(m.id, 0, "a1", "").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Move(m.id, 0, "a1", "not-a-token").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Move(m.id, 0, "a1", NewSeatToken()).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Move(m.id, 0, "a1", other.first).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Move(m.id, 0, std::string(65, 'a'), m.first).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Move(987654, 0, "a1", m.first).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Move(-1, 0, "a1", m.first).status().code(), absl::StatusCode::kInvalidArgument);
  // None of that moved the match.
  EXPECT_EQ(Get(m.id).moves_size(), 0);
}

TEST_F(LobbyUnitTest, FastAndSlowPathsGiveTheSameAnswers) {
  const Seats fast = HumanMatch("tictactoe");
  const Seats slow = HumanMatch("tictactoe");
  // Every refusal: the fast path hands the call on (changing nothing), and the slow path
  // answers the same whichever match it is asked about.
  struct Refusal {
    std::string what;
    int ply;
    std::string move;
    bool second_seat;
    absl::StatusCode code;
  };
  for (const Refusal& r :
       {Refusal{"illegal move", 0, "z9", false, absl::StatusCode::kInvalidArgument},
        Refusal{"out of turn", 0, "a1", true, absl::StatusCode::kFailedPrecondition},
        Refusal{"stale ply", 2, "a1", false, absl::StatusCode::kFailedPrecondition}}) {
    for (const Seats* m : {&fast, &slow}) {
      const std::string& token = r.second_seat ? m->second : m->first;
      EXPECT_FALSE(FastMove(m->id, r.ply, r.move, token).has_value()) << r.what;
      EXPECT_EQ(Move(m->id, r.ply, r.move, token).status().code(), r.code) << r.what;
    }
    EXPECT_EQ(Get(fast.id).moves_size(), 0) << r.what;
  }
  // A legal move: the same answer from both paths (but for the match's id).
  std::optional<absl::StatusOr<v1::MakeMoveResponse>> quick =
      FastMove(fast.id, 0, "b2", fast.first);
  ASSERT_TRUE(quick.has_value());
  ASSERT_TRUE(quick->ok()) << quick->status();
  absl::StatusOr<v1::MakeMoveResponse> careful = Move(slow.id, 0, "b2", slow.first);
  ASSERT_TRUE(careful.ok()) << careful.status();
  v1::MakeMoveResponse a = **quick;
  v1::MakeMoveResponse b = *careful;
  a.mutable_match()->clear_id();
  b.mutable_match()->clear_id();
  EXPECT_TRUE(MessageDifferencer::Equals(a, b)) << a.DebugString() << "\n" << b.DebugString();
}

TEST_F(LobbyUnitTest, AMoveThatLostARaceIsDecidedOnTheStoredStateAndWatchersCatchUp) {
  const Seats m = HumanMatch("connect4");
  auto watcher = std::make_shared<RecordingSink>();
  ASSERT_TRUE(lobby_->Watch(m.id, std::nullopt, watcher).ok());
  // Another instance stores ply 1 behind this lobby's back.
  MoveCommit theirs;
  theirs.move = {.ply = 1, .seat = 0, .move = "3", .time_ms = now_ms_.load()};
  theirs.turn_started_ms = now_ms_.load();
  ASSERT_TRUE(store_->AppendMove(m.id, theirs).ok());
  // The fast path takes the move (memory says ply 0), the store refuses it, and MakeMove
  // answers from the reloaded match.
  std::optional<absl::StatusOr<v1::MakeMoveResponse>> answer = FastMove(m.id, 0, "4", m.first);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status().code(), absl::StatusCode::kFailedPrecondition) << answer->status();
  EXPECT_EQ(Get(m.id).moves_size(), 1);
  EXPECT_EQ(Get(m.id).moves(0).move(), "3");
  EXPECT_EQ(watcher->PliesSeen(), std::vector<int>{1});
}

TEST_F(LobbyUnitTest, ADatabaseOutageAnswersUnavailableAndPlayGoesOnAfterIt) {
  const Seats m = HumanMatch("connect4");
  store_->FailCalls(absl::UnavailableError("the database is away"));
  EXPECT_EQ(Move(m.id, 0, "4", m.first).status().code(), absl::StatusCode::kUnavailable);
  store_->FailCalls(absl::OkStatus());
  absl::StatusOr<v1::MakeMoveResponse> r = Move(m.id, 0, "4", m.first);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->move().ply(), 1);
}

// A player whose answer was lost (the connection dropped, or the database failed over while
// the move was committed: the lobby could not tell) sends the move again: it was played, and
// the answer says so; anything else at that ply is still refused.
TEST_F(LobbyUnitTest, AMoveSentAgainAfterItsAnswerWasLostIsAnsweredAsPlayed) {
  const Seats m = HumanMatch("tictactoe");
  absl::StatusOr<v1::MakeMoveResponse> first = Move(m.id, 0, "a1", m.first);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<v1::MakeMoveResponse> again = Move(m.id, 0, "A1", m.first);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->move().ply(), 1);
  EXPECT_EQ(again->move().move(), "a1");
  EXPECT_EQ(again->match().moves_size(), 1);
  EXPECT_EQ(Move(m.id, 0, "b2", m.first).status().code(), absl::StatusCode::kFailedPrecondition)
      << "another move at the played ply";
  EXPECT_EQ(Move(m.id, 0, "a1", m.second).status().code(), absl::StatusCode::kFailedPrecondition)
      << "the other seat";
  EXPECT_EQ(Move(m.id, 0, "a1", NewSeatToken()).status().code(),
            absl::StatusCode::kUnauthenticated);
  ASSERT_TRUE(Move(m.id, 1, "b1", m.second).ok());
  EXPECT_EQ(Move(m.id, 0, "a1", m.first).status().code(), absl::StatusCode::kFailedPrecondition)
      << "no longer the last move";
  // The move that ends the match, sent again: played, not "the match is over".
  ASSERT_TRUE(Move(m.id, 2, "a2", m.first).ok());
  ASSERT_TRUE(Move(m.id, 3, "b3", m.second).ok());
  ASSERT_TRUE(Move(m.id, 4, "a3", m.first).ok());
  absl::StatusOr<v1::MakeMoveResponse> last = Move(m.id, 4, "a3", m.first);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->match().status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(Get(m.id).moves_size(), 5);
}

TEST_F(LobbyUnitTest, AClockChargesThinkingTimeAndFlagsWhenItRunsOut) {
  const Seats m = HumanMatch("connect4", Clock(/*initial_ms=*/60'000, /*increment_ms=*/2'000));
  Advance(absl::Milliseconds(1'500));
  absl::StatusOr<v1::MakeMoveResponse> r = Move(m.id, 0, "4", m.first);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->move().think_ms(), 1'500);
  EXPECT_EQ(r->move().clock_ms(), 60'000 - 1'500 + 2'000);
  Advance(absl::Seconds(59));
  EXPECT_EQ(Get(m.id).seats(1).clock_ms(), 1'000);
  Advance(absl::Seconds(2));
  EXPECT_EQ(Get(m.id).seats(1).clock_ms(), 0);
  // The move that comes too late ends the match on time instead.
  absl::StatusOr<v1::MakeMoveResponse> late = Move(m.id, 1, "4", m.second);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(late.status().message().find("ran out of time"), std::string::npos) << late.status();
  const v1::Match over = Get(m.id);
  EXPECT_EQ(over.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(over.result().reason(), v1::END_REASON_TIMEOUT);
  EXPECT_EQ(over.result().winner(), 0);
  EXPECT_EQ(over.seats(1).clock_ms(), 0);
  EXPECT_EQ(over.seats(0).clock_ms(), 60'500);
}

TEST_F(LobbyUnitTest, AClaimComesExactlyAtTheBoundCountedFromTheStartOfTheMissingSidesTurn) {
  // A store without presence: nobody is seen, so the turn's start is what counts.
  const Seats m = HumanMatch("connect4");
  ASSERT_TRUE(Move(m.id, 0, "4", m.first).ok());
  // Before Bob's first move there is no game to claim (the abort is for that).
  Advance(absl::Minutes(5));
  absl::StatusOr<v1::Match> unstarted = lobby_->ClaimVictory(m.id, /*draw=*/false, m.first);
  EXPECT_EQ(unstarted.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(unstarted.status().message().find("bob has not made a first move"), std::string::npos)
      << unstarted.status();
  ASSERT_TRUE(Move(m.id, 1, "4", m.second).ok());
  ASSERT_TRUE(Move(m.id, 2, "3", m.first).ok());
  Advance(absl::Minutes(2) - absl::Milliseconds(1));
  absl::StatusOr<v1::Match> early = lobby_->ClaimVictory(m.id, /*draw=*/false, m.first);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(early.status().message(),
            "bob has been gone 1 min 59 s; you can claim after 2 min (in 1 s)");
  // Not on one's own move, nor for a stranger.
  EXPECT_EQ(lobby_->ClaimVictory(m.id, false, m.second).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(lobby_->ClaimVictory(m.id, false, "").status().code(),
            absl::StatusCode::kUnauthenticated);
  Advance(absl::Milliseconds(1));
  absl::StatusOr<v1::Match> won = lobby_->ClaimVictory(m.id, /*draw=*/false, m.first);
  ASSERT_TRUE(won.ok()) << won.status();
  EXPECT_EQ(won->result().winner(), 0);
  EXPECT_EQ(won->result().reason(), v1::END_REASON_ABANDONED);
  EXPECT_EQ(won->result().text(), "Yellow left the game; Red wins by claim");
  // Over: nothing more to claim.
  EXPECT_EQ(lobby_->ClaimVictory(m.id, true, m.first).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(LobbyUnitTest, AMatchWhoseSecondSideNeverMovesIsAbortedAtTheBound) {
  Stop();
  // The sweep looks every 10 ms of real time; the bound is on the test's clock.
  Start(LobbyOptions{.abort_after = absl::Milliseconds(40)});
  const Seats m = HumanMatch("connect4");
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(lobby_->Watch(m.id, std::nullopt, sink).ok());
  Advance(absl::Milliseconds(30));
  ASSERT_TRUE(Move(m.id, 0, "4", m.first).ok());
  Advance(absl::Milliseconds(39));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(Get(m.id).status(), v1::MATCH_STATUS_ACTIVE);
  Advance(absl::Milliseconds(2));
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!sink->closed() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  const v1::Match over = Get(m.id);
  EXPECT_EQ(over.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(over.result().reason(), v1::END_REASON_ABORTED);
  EXPECT_EQ(over.result().winner(), -1);
  ASSERT_TRUE(sink->closed().has_value());
  ASSERT_FALSE(sink->events().empty());
  EXPECT_TRUE(sink->events().back().has_game_over());
}

TEST_F(LobbyUnitTest, RefusesBotSeatsWithoutABotService) {
  v1::CreateMatchRequest req;
  req.mutable_spec()->set_name("connect4");
  req.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  v1::SeatSpec* bot = req.add_seats();
  bot->set_kind(v1::SEAT_KIND_BOT);
  bot->set_difficulty("easy");
  EXPECT_EQ(lobby_->CreateMatch(req).status().code(), absl::StatusCode::kFailedPrecondition);
  const v1::ListGamesResponse games = lobby_->ListGames();
  for (const v1::GameInfo& g : games.games()) {
    EXPECT_EQ(g.levels_size(), 0) << g.name() << " offers levels without bots";
  }
}

TEST_F(LobbyUnitTest, TheCacheStaysWithinItsBoundAndAForgottenMatchPlaysOn) {
  Stop();
  LobbyOptions options;
  options.cache_size = 4;
  Start(options);
  std::vector<int64_t> finished;
  for (int i = 0; i < 10; ++i) {
    const Seats m = HumanMatch("connect4");
    ASSERT_TRUE(lobby_->Resign(m.id, m.first).ok());
    finished.push_back(m.id);
    EXPECT_LE(lobby_->CachedMatches(), options.cache_size);
  }
  // A forgotten match loads again when named.
  EXPECT_EQ(Get(finished.front()).status(), v1::MATCH_STATUS_FINISHED);
  // Matches in play that nobody here watches or drives go too: memory is bounded whatever
  // clients open. A forgotten one loads again when named, and play goes on.
  std::vector<Seats> live;
  for (int i = 0; i < 6; ++i) {
    live.push_back(HumanMatch("connect4"));
    EXPECT_LE(lobby_->CachedMatches(), options.cache_size);
  }
  for (const Seats& m : live) {
    EXPECT_EQ(Get(m.id).status(), v1::MATCH_STATUS_ACTIVE);
    EXPECT_TRUE(Move(m.id, 0, "4", m.first).ok()) << m.id;
    EXPECT_EQ(Get(m.id).moves_size(), 1);
  }
}

// Many threads at once on the paths that share a match: both players' fast and slow moves
// (the fast ones landing on the store's writer thread), reads, watchers joining with and
// without after_ply, and the metrics page. Under `make tsan` this is the lobby's own locking
// checked without gRPC in the way; here, every match must end consistent.
TEST_F(LobbyUnitTest, FinishedMatchesWhoseRematchFollowersLeftAreForgotten) {
  Stop();
  LobbyOptions options;
  options.cache_size = 4;
  Start(options);
  std::vector<std::shared_ptr<RecordingSink>> followers;
  for (int i = 0; i < 10; ++i) {
    const Seats m = HumanMatch("connect4");
    followers.push_back(std::make_shared<RecordingSink>(/*follows_rematch=*/true));
    ASSERT_TRUE(lobby_->Watch(m.id, std::nullopt, followers.back()).ok());
    ASSERT_TRUE(lobby_->Resign(m.id, m.first).ok());
    ASSERT_FALSE(followers.back()->closed().has_value());
    // The player leaves the final screen: nothing more is sent that would find out.
    followers.back()->Leave();
  }
  // Watched matches stay; once their streams are over, they go like any finished match.
  HumanMatch("connect4");
  EXPECT_LE(lobby_->CachedMatches(), options.cache_size);
}

TEST_F(LobbyUnitTest, ConcurrentCallsOnManyMatchesLeaveEveryMatchConsistent) {
  Stop();
  Start(LobbyOptions{}, /*async_appends=*/true);
  constexpr int kMatches = 6;
  std::vector<Seats> matches;
  std::vector<std::shared_ptr<RecordingSink>> watchers;
  for (int i = 0; i < kMatches; ++i) {
    matches.push_back(HumanMatch("connect4"));
    watchers.push_back(std::make_shared<RecordingSink>());
    ASSERT_TRUE(lobby_->Watch(matches.back().id, std::nullopt, watchers.back()).ok());
  }
  std::atomic<int> unexpected{0};
  // One player: moves whenever it is its turn, by the fast path when it takes the move.
  auto play = [&](const Seats& m, int seat) {
    const std::string& token = seat == 0 ? m.first : m.second;
    // Bounded only in case of a hang: the other player's move may be a while coming.
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    for (int round = 0; absl::Now() < give_up; ++round) {
      absl::StatusOr<v1::Match> now = lobby_->GetMatch(m.id);
      if (!now.ok()) {
        ++unexpected;
        return;
      }
      if (now->status() == v1::MATCH_STATUS_FINISHED || now->moves_size() >= 24) return;
      if (now->to_move() != seat || now->legal_moves_size() == 0) {
        std::this_thread::yield();
        continue;
      }
      const std::string move = now->legal_moves(round % now->legal_moves_size());
      std::optional<absl::StatusOr<v1::MakeMoveResponse>> fast =
          FastMove(m.id, now->moves_size(), move, token);
      const absl::Status s =
          fast ? fast->status() : Move(m.id, now->moves_size(), move, token).status();
      // The other player cannot move meanwhile, so every move of the mover lands.
      if (!s.ok()) ++unexpected;
    }
  };
  std::vector<std::thread> threads;
  for (const Seats& m : matches) {
    threads.emplace_back(play, m, 0);
    threads.emplace_back(play, m, 1);
  }
  std::vector<std::shared_ptr<RecordingSink>> late;
  std::mutex late_mu;
  threads.emplace_back([&] {
    for (int i = 0; i < 60; ++i) {
      const Seats& m = matches[i % kMatches];
      auto sink = std::make_shared<RecordingSink>();
      std::optional<int> after;
      if (i % 2 == 1) after = 0;
      if (lobby_->Watch(m.id, after, sink).ok()) {
        std::lock_guard<std::mutex> lock(late_mu);
        late.push_back(sink);
      }
      (void)lobby_->MetricsText();
      v1::Match out;
      (void)lobby_->TryGetMatch(m.id, &out);
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(unexpected.load(), 0);
  for (int i = 0; i < kMatches; ++i) {
    absl::StatusOr<MatchRecord> stored = store_->LoadMatch(matches[i].id);
    ASSERT_TRUE(stored.ok());
    EXPECT_TRUE(stored->ply >= 24 || stored->status == MatchStatus::kFinished) << stored->ply;
    std::vector<int> all(stored->ply);
    for (int p = 0; p < stored->ply; ++p) all[p] = p + 1;
    // Every move once, in order, to the watcher that was there from the start.
    EXPECT_EQ(watchers[i]->PliesSeen(), all) << "match " << matches[i].id;
    EXPECT_EQ(Get(matches[i].id).moves_size(), stored->ply);
  }
  // A late watcher's plies are consecutive too, whenever it joined.
  for (const auto& sink : late) {
    const std::vector<int> plies = sink->PliesSeen();
    for (size_t j = 1; j < plies.size(); ++j) EXPECT_EQ(plies[j], plies[j - 1] + 1);
  }
}

TEST(MatchClockTest, OnlyTheSideToMoveRunsAndNeverBelowZero) {
  MatchRecord rec;
  rec.status = MatchStatus::kActive;
  rec.time_initial_ms = 10'000;
  rec.turn_started_ms = 1'000;
  rec.seats = {SeatRecord{.clock_ms = 8'000}, SeatRecord{.clock_ms = 9'000}};
  EXPECT_EQ(ClockNow(rec, /*to_move=*/0, /*seat=*/0, /*now_ms=*/4'000), 5'000);
  EXPECT_EQ(ClockNow(rec, 0, 1, 4'000), 9'000);
  EXPECT_EQ(ClocksNow(rec, 0, 20'000), (std::vector<int64_t>{0, 9'000}));
  EXPECT_FALSE(HasFlagged(rec, 0, 8'999));
  EXPECT_TRUE(HasFlagged(rec, 0, 9'000));
  EXPECT_TRUE(HasFlagged(rec, 0, FlagDueMs(rec, 0)));
  rec.status = MatchStatus::kFinished;
  EXPECT_EQ(ClockNow(rec, 0, 0, 20'000), 8'000);
  EXPECT_FALSE(HasFlagged(rec, 0, 20'000));
}

TEST(MatchClockTest, NoClocksMeansZeroAndNoFlag) {
  MatchRecord rec;
  rec.status = MatchStatus::kActive;
  rec.seats.resize(2);
  EXPECT_EQ(ClockNow(rec, 0, 0, 1'000'000), 0);
  EXPECT_FALSE(HasFlagged(rec, 0, 1'000'000));
  EXPECT_EQ(ClockAfterMove(rec, 0, 500, /*ends_match=*/false), 0);
  EXPECT_EQ(BotBudgetMs(rec, 0, /*level_ms=*/3'000, 0), 3'000);
}

TEST(MatchClockTest, TheIncrementIsNotGivenForTheMoveThatEndsTheMatch) {
  MatchRecord rec;
  rec.time_initial_ms = 5'000;
  rec.time_increment_ms = 1'000;
  rec.seats = {SeatRecord{.clock_ms = 5'000}, SeatRecord{.clock_ms = 5'000}};
  EXPECT_EQ(ClockAfterMove(rec, 0, 700, /*ends_match=*/false), 5'300);
  EXPECT_EQ(ClockAfterMove(rec, 0, 700, /*ends_match=*/true), 4'300);
  EXPECT_EQ(ClockAfterMove(rec, 0, 9'000, /*ends_match=*/false), 1'000);
}

TEST(MatchClockTest, ABotsBudgetIsCutToWhatItsClockAffords) {
  MatchRecord rec;
  rec.status = MatchStatus::kActive;
  rec.time_initial_ms = 60'000;
  rec.time_increment_ms = 400;
  rec.turn_started_ms = 0;
  rec.seats = {SeatRecord{.clock_ms = 20'000}, SeatRecord{.clock_ms = 60'000}};
  // 20 s left: a twentieth (1 s) plus three quarters of the increment.
  EXPECT_EQ(BotBudgetMs(rec, 0, /*level_ms=*/5'000, /*now_ms=*/0), 1'300);
  EXPECT_EQ(BotBudgetMs(rec, 0, /*level_ms=*/200, /*now_ms=*/0), 200);
  // Nearly flagged: never under 10 ms.
  rec.time_increment_ms = 0;
  EXPECT_EQ(BotBudgetMs(rec, 0, 5'000, /*now_ms=*/19'999), 10);
}

// A bot's answer to a draw offer, from its search's score on the game's win-chance scale: proven
// results decide outright, a heuristic score by the bot's chance (a draw counting half).
TEST(BotDrawAnswerTest, AcceptsDrawsAndLossesAndDeclinesWhenItsChancesAreGood) {
  const auto reply = [](int score, bool exact) {
    v1::ChooseMoveResponse r;
    r.set_score(score);
    r.set_exact(exact);
    return r;
  };
  EXPECT_TRUE(BotDrawAnswer("tictactoe", reply(0, true), true, "O").accept);
  const DrawAnswer won = BotDrawAnswer("connect4", reply(1, true), true, "Yellow (bot, hard)");
  EXPECT_FALSE(won.accept);
  // A decline gives nothing of the bot's view away (it was an evaluation for the asking).
  EXPECT_EQ(won.text, "Yellow (bot, hard) declines the draw");
  EXPECT_TRUE(BotDrawAnswer("connect4", reply(-1, true), true, "Y").accept) << "a proven loss";
  // Not the bot's turn: the score is the person's, so a proven win for the person is a loss
  // for the bot.
  EXPECT_TRUE(BotDrawAnswer("connect4", reply(1, true), false, "Y").accept);
  EXPECT_FALSE(BotDrawAnswer("connect4", reply(-1, true), false, "Y").accept);
  // Heuristic: by Connect Four's curve, +3 is about even and +20 well ahead.
  const WinChanceCurve curve = WinChanceCurveFor("connect4");
  ASSERT_LE(WinChance(curve, 3, false), kBotDrawAcceptChance);
  ASSERT_GT(WinChance(curve, 20, false), kBotDrawAcceptChance);
  EXPECT_TRUE(BotDrawAnswer("connect4", reply(3, false), true, "Y").accept);
  const DrawAnswer ahead = BotDrawAnswer("connect4", reply(20, false), true, "Y");
  EXPECT_FALSE(ahead.accept);
  EXPECT_EQ(ahead.text, "Y declines the draw");
  const DrawAnswer even = BotDrawAnswer("connect4", reply(3, false), true, "Y");
  EXPECT_NE(even.text.find(absl::StrCat("accepts the draw: it rates its chances at ",
                                        std::lround(100 * WinChance(curve, 3, false)), "%")),
            std::string::npos)
      << even.text;
  EXPECT_TRUE(BotDrawAnswer("connect4", reply(20, false), false, "Y").accept);
  v1::ChooseMoveResponse random = reply(0, false);
  random.set_random_move(true);
  EXPECT_FALSE(BotDrawAnswer("connect4", random, true, "Y").accept) << "no search, plays on";
}

}  // namespace
}  // namespace ply::lobby
