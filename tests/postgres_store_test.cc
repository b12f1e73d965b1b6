// PostgresStore against a throwaway PostgreSQL cluster: group-committed moves (many matches in
// one statement, each still succeeding or failing on its own) and the one-statement create and
// join, including races for seats.
#include "lobby-server/storage/postgres/postgres_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/postgres_helper.h"

namespace ply::lobby {
namespace {

using ::ply::testing::PostgresCluster;

class PostgresStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<PostgresCluster>> c = PostgresCluster::Start();
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = std::move(*c).release();
    absl::StatusOr<std::string> url = cluster_->CreateDatabase("store");
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = new std::string(*url);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete url_;
  }

  // One writer, so that moves queued while it commits pile up into the next batch.
  static std::unique_ptr<PostgresStore> NewStore(int writers = 1) {
    auto store = std::make_unique<PostgresStore>(
        PostgresOptions{.url = *url_, .pool_size = 8, .append_writers = writers});
    EXPECT_TRUE(store->Migrate().ok());
    return store;
  }

  // A two-seat match; `open` seats have no player yet.
  static MatchRecord TwoSeats(int open) {
    MatchRecord m;
    m.game = "connect4";
    m.status = open == 0 ? MatchStatus::kActive : MatchStatus::kWaiting;
    m.created_ms = 1700000000000;
    for (int i = 0; i < 2; ++i) {
      SeatRecord s;
      s.kind = SeatKind::kHuman;
      if (i >= open) {
        s.display_name = absl::StrCat("player ", i);
        s.token_hash = absl::StrCat("hash-", i, "-", ++serial_);
      }
      m.seats.push_back(s);
    }
    return m;
  }

  static MoveCommit Move(int ply, const std::string& move, std::string bot_json = "") {
    MoveCommit c;
    c.move.ply = ply;
    c.move.seat = (ply - 1) % 2;
    c.move.move = move;
    c.move.time_ms = 1700000000000 + ply;
    c.move.bot_json = std::move(bot_json);
    c.turn_started_ms = c.move.time_ms;
    return c;
  }

  static inline PostgresCluster* cluster_ = nullptr;
  static inline std::string* url_ = nullptr;
  static inline int serial_ = 0;
};

TEST_F(PostgresStoreTest, GroupCommitsManyMatchesEachSucceedingOrFailingAlone) {
  std::unique_ptr<PostgresStore> store = NewStore();
  constexpr int kMatches = 120;
  std::vector<int64_t> ids;
  for (int i = 0; i < kMatches; ++i) {
    absl::StatusOr<int64_t> id = store->CreateMatch(TwoSeats(0));
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  // Queue every first move at once; match 7's says ply 3 (the match is at 0) and match 11's
  // carries a bot report that is not JSON, which fails its statement.
  std::vector<std::promise<absl::Status>> done(kMatches);
  const PostgresStore::AppendStats before = store->append_stats();
  for (int i = 0; i < kMatches; ++i) {
    MoveCommit c = Move(i == 7 ? 3 : 1, "4", i == 11 ? "{not json" : "");
    store->AppendMoveAsync(ids[i], c, [&done, i](absl::Status s) { done[i].set_value(s); });
  }
  for (int i = 0; i < kMatches; ++i) {
    absl::Status s = done[i].get_future().get();
    if (i == 7) {
      EXPECT_TRUE(absl::IsAborted(s)) << s;
    } else if (i == 11) {
      EXPECT_TRUE(absl::IsInternal(s)) << s;
    } else {
      EXPECT_TRUE(s.ok()) << i << ": " << s;
    }
  }
  const PostgresStore::AppendStats after = store->append_stats();
  EXPECT_EQ(after.moves - before.moves, kMatches - 2);
  // Batching happened: far fewer batches than moves.
  EXPECT_LT(after.batches - before.batches, kMatches / 4);
  for (int i = 0; i < kMatches; ++i) {
    absl::StatusOr<MatchRecord> m = store->LoadMatch(ids[i]);
    ASSERT_TRUE(m.ok()) << m.status();
    const size_t want = (i == 7 || i == 11) ? 0 : 1;
    ASSERT_EQ(m->moves.size(), want) << "match " << i;
    EXPECT_EQ(m->ply, static_cast<int>(want));
    if (want == 1) {
      EXPECT_EQ(m->moves[0].move, "4");
    }
  }
}

TEST_F(PostgresStoreTest, MovesOfOneMatchQueuedTogetherLandInOrder) {
  std::unique_ptr<PostgresStore> store = NewStore(2);
  absl::StatusOr<int64_t> id = store->CreateMatch(TwoSeats(0));
  ASSERT_TRUE(id.ok()) << id.status();
  constexpr int kPlies = 30;
  std::vector<std::promise<absl::Status>> done(kPlies);
  for (int ply = 1; ply <= kPlies; ++ply) {
    MoveCommit c = Move(ply, std::to_string(1 + (ply - 1) % 7));
    // The last move ends the match with a result, written with it.
    if (ply == kPlies) {
      c.result = MatchResult{.winner = 0, .reason = EndReason::kRules, .text = "x"};
    }
    store->AppendMoveAsync(*id, c, [&done, ply](absl::Status s) { done[ply - 1].set_value(s); });
  }
  for (int i = 0; i < kPlies; ++i) EXPECT_TRUE(done[i].get_future().get().ok()) << i;
  absl::StatusOr<MatchRecord> m = store->LoadMatch(*id);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->moves.size(), static_cast<size_t>(kPlies));
  for (int i = 0; i < kPlies; ++i) EXPECT_EQ(m->moves[i].ply, i + 1);
  EXPECT_EQ(m->status, MatchStatus::kFinished);
  EXPECT_EQ(m->result.winner, 0);
  // Nothing follows the end.
  EXPECT_TRUE(absl::IsAborted(store->AppendMove(*id, Move(kPlies + 1, "1"))));
}

TEST_F(PostgresStoreTest, CreateAndJoinInOneStatementEach) {
  std::unique_ptr<PostgresStore> store = NewStore();
  absl::StatusOr<int64_t> id = store->CreateMatch(TwoSeats(2));
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<MatchRecord> m = store->LoadMatch(*id);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->status, MatchStatus::kWaiting);
  ASSERT_EQ(m->seats.size(), 2u);
  EXPECT_FALSE(m->seats[0].taken());

  absl::StatusOr<bool> started = store->TakeSeat(*id, 0, "ann", "hash-ann", 5);
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_FALSE(*started);
  EXPECT_TRUE(absl::IsAlreadyExists(store->TakeSeat(*id, 0, "bob", "hash-bob", 6).status()));
  started = store->TakeSeat(*id, 1, "bob", "hash-bob", 7);
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_TRUE(*started);
  m = store->LoadMatch(*id);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->status, MatchStatus::kActive);
  EXPECT_EQ(m->turn_started_ms, 7);
  EXPECT_EQ(m->seats[0].display_name, "ann");
  EXPECT_EQ(m->seats[1].token_hash, "hash-bob");

  EXPECT_TRUE(absl::IsNotFound(store->TakeSeat(*id + 1000000, 0, "x", "hash-x", 8).status()));
  // A bot seat is never taken by a person.
  MatchRecord bots = TwoSeats(1);
  bots.seats[0].kind = SeatKind::kBot;
  bots.seats[0].difficulty = "easy";
  absl::StatusOr<int64_t> with_bot = store->CreateMatch(bots);
  ASSERT_TRUE(with_bot.ok()) << with_bot.status();
  EXPECT_FALSE(store->TakeSeat(*with_bot, 0, "x", "hash-y", 9).ok());
}

TEST_F(PostgresStoreTest, RacesForSeatsStartTheMatchExactlyOnce) {
  std::unique_ptr<PostgresStore> store = NewStore();
  for (int round = 0; round < 10; ++round) {
    absl::StatusOr<int64_t> id = store->CreateMatch(TwoSeats(2));
    ASSERT_TRUE(id.ok()) << id.status();
    // Eight people at once, four for each seat: one wins each seat, one of the two winners
    // starts the match.
    std::atomic<int> won{0}, started{0}, refused{0};
    std::vector<std::thread> people;
    for (int p = 0; p < 8; ++p) {
      people.emplace_back([&, p] {
        absl::StatusOr<bool> r = store->TakeSeat(*id, p % 2, absl::StrCat("p", p),
                                                 absl::StrCat("race-", round, "-", p), 10);
        if (r.ok()) {
          ++won;
          if (*r) ++started;
        } else if (absl::IsAlreadyExists(r.status())) {
          ++refused;
        }
      });
    }
    for (std::thread& t : people) t.join();
    EXPECT_EQ(won.load(), 2);
    EXPECT_EQ(started.load(), 1);
    EXPECT_EQ(refused.load(), 6);
    absl::StatusOr<MatchRecord> m = store->LoadMatch(*id);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->status, MatchStatus::kActive);
    EXPECT_TRUE(m->seats[0].taken() && m->seats[1].taken());
    EXPECT_EQ(
        cluster_->Query("store", absl::StrCat("SELECT open_seats FROM matches WHERE id = ", *id)),
        "0");
  }
}

TEST_F(PostgresStoreTest, DatabaseErrorsAreLoggedNotReturned) {
  std::unique_ptr<PostgresStore> store = NewStore();
  absl::StatusOr<int64_t> id = store->CreateMatch(TwoSeats(0));
  ASSERT_TRUE(id.ok()) << id.status();
  // A bot report that is not JSON makes PostgreSQL refuse the statement with a message naming
  // the type and the input: the operator sees it in the log, the caller a fixed sentence.
  ::testing::internal::CaptureStderr();
  absl::Status refused = store->AppendMove(*id, Move(1, "4", "{not json"));
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(absl::IsInternal(refused)) << refused;
  EXPECT_EQ(refused.message(), "the database refused the request; the lobby logged why");
  EXPECT_NE(log.find("json"), std::string::npos) << log;
  EXPECT_NE(log.find("SQLSTATE 22P02"), std::string::npos) << log;

  // Nothing listens there: the caller learns that the database is unreachable, not where it is
  // or what libpq said.
  PostgresStore nowhere(PostgresOptions{
      .url = absl::StrCat("host=127.0.0.1 port=", ::ply::testing::FreePort(), " user=secret_user"),
      .pool_size = 1,
      .append_writers = 1});
  ::testing::internal::CaptureStderr();
  absl::StatusOr<MatchRecord> unreachable = nowhere.LoadMatch(1);
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(absl::IsUnavailable(unreachable.status())) << unreachable.status();
  EXPECT_EQ(unreachable.status().message().find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(unreachable.status().message().find("secret_user"), std::string::npos);
  EXPECT_NE(log.find("127.0.0.1"), std::string::npos) << log;
  // Every logged error is one line, whatever the server's message holds.
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
}

}  // namespace
}  // namespace ply::lobby
