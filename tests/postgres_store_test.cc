// PostgresStore against a throwaway PostgreSQL cluster: group-committed moves (many matches in
// one statement, each still succeeding or failing on its own) and the one-statement create and
// join, including races for seats.
#include "lobby-server/storage/postgres/postgres_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
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

  EXPECT_EQ(store->TakeSeat(*id + 1000000, 0, "x", "hash-x", 8).status(),
            absl::NotFoundError(absl::StrCat("there is no match ", *id + 1000000)));
  // A bot seat is never taken by a person.
  MatchRecord bots = TwoSeats(1);
  bots.seats[0].kind = SeatKind::kBot;
  bots.seats[0].difficulty = "easy";
  absl::StatusOr<int64_t> with_bot = store->CreateMatch(bots);
  ASSERT_TRUE(with_bot.ok()) << with_bot.status();
  EXPECT_FALSE(store->TakeSeat(*with_bot, 0, "x", "hash-y", 9).ok());
}

// Reads of one statement: the row found, and when there is none each read's own answer (an
// error with its code and message, or nothing), as the lobby passes them on to its callers.
TEST_F(PostgresStoreTest, OneStatementReadsAnswerAMissingRowEachInItsOwnWay) {
  std::unique_ptr<PostgresStore> store = NewStore();
  const MatchRecord match = TwoSeats(0);
  absl::StatusOr<int64_t> id = store->CreateMatch(match);
  ASSERT_TRUE(id.ok()) << id.status();
  const int64_t absent = *id + 1000000;

  absl::StatusOr<MatchVersion> version = store->LoadVersion(*id);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->ply, 0);
  EXPECT_EQ(version->status, MatchStatus::kActive);
  EXPECT_EQ(store->LoadVersion(absent).status(),
            absl::NotFoundError(absl::StrCat("there is no match ", absent)));
  EXPECT_EQ(store->LoadMatch(absent).status(),
            absl::NotFoundError(absl::StrCat("there is no match ", absent)));

  absl::StatusOr<std::optional<std::pair<int64_t, int>>> token =
      store->FindToken(match.seats[1].token_hash);
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, std::make_pair(*id, 1));
  token = store->FindToken("no such hash");
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_FALSE(token->has_value());

  absl::StatusOr<std::optional<std::string>> analysis = store->LoadAnalysis(*id);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_FALSE(analysis->has_value());

  absl::StatusOr<PlayerRecord> created = store->CreatePlayer("Reader", "key-reader", 5);
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<PlayerRecord> player = store->PlayerByKey("key-reader", 6);
  ASSERT_TRUE(player.ok()) << player.status();
  EXPECT_EQ(player->id, created->id);
  EXPECT_EQ(player->name, "Reader");
  EXPECT_EQ(player->last_seen_ms, 6);
  EXPECT_EQ(store->PlayerByKey("no such key", 7).status(),
            absl::NotFoundError("no player has that key"));

  absl::StatusOr<int64_t> entry = store->JoinQueue(
      {.player_id = created->id, .pool = "connect4", .joined_ms = 8, .token_hash = "h-reader"},
      /*alive_since_ms=*/0);
  ASSERT_TRUE(entry.ok()) << entry.status();
  absl::StatusOr<std::optional<Pairing>> pairing = store->QueueResult(*entry, /*refresh_ms=*/9);
  ASSERT_TRUE(pairing.ok()) << pairing.status();
  EXPECT_FALSE(pairing->has_value());
  EXPECT_EQ(store->QueueResult(*entry + 1000, 0).status(),
            absl::AbortedError("this player queued again from another connection"));
  // Joining again once paired (before reading the pairing) writes no row.
  absl::StatusOr<PlayerRecord> other = store->CreatePlayer("Opponent", "key-opponent", 10);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(store
                  ->JoinQueue({.player_id = other->id,
                               .pool = "connect4",
                               .joined_ms = 10,
                               .token_hash = "h-opponent"},
                              /*alive_since_ms=*/0)
                  .ok());
  absl::StatusOr<std::optional<Pairing>> paired = store->TryPair(
      {.id = *entry,
       .player_id = created->id,
       .name = "Reader",
       .pool = "connect4",
       .joined_ms = 8},
      /*now_ms=*/11, /*alive_since_ms=*/5, /*base_gap=*/100, /*gap_per_s=*/0, /*max_gap=*/100,
      [](const QueueEntry&, const QueueEntry& them) -> absl::StatusOr<PairedMatch> {
        EXPECT_EQ(them.token_hash, "h-opponent");
        return PairedMatch{.match = TwoSeats(0), .my_seat = 0};
      });
  ASSERT_TRUE(paired.ok()) << paired.status();
  ASSERT_TRUE(paired->has_value());
  EXPECT_EQ(
      store->JoinQueue({.player_id = other->id, .pool = "connect4", .joined_ms = 12}, 5).status(),
      absl::FailedPreconditionError(
          "you were paired a moment ago from another connection: see `ply history`"));
  // Unless that entry's stream is gone (not marked alive since): then it is taken over.
  EXPECT_TRUE(
      store->JoinQueue({.player_id = other->id, .pool = "connect4", .joined_ms = 13}, 11).ok());

  ASSERT_TRUE(store->AddPresence(*id, 1, 1, 9).ok());
  absl::StatusOr<std::vector<SeatPresence>> presence = store->LoadPresence({*id, absent}, 0, 0);
  ASSERT_TRUE(presence.ok()) << presence.status();
  ASSERT_EQ(presence->size(), 1u);
  EXPECT_EQ((*presence)[0].match_id, *id);
  EXPECT_EQ((*presence)[0].seat, 1);
  EXPECT_EQ((*presence)[0].last_seen_ms, 9);
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

TEST_F(PostgresStoreTest, OwningAMatchTwiceIsOneOwnershipThatOneDisownEnds) {
  std::unique_ptr<PostgresStore> a = NewStore();
  std::unique_ptr<PostgresStore> b = NewStore();
  absl::StatusOr<int64_t> id = a->CreateMatch(TwoSeats(0));
  ASSERT_TRUE(id.ok()) << id.status();
  // A claim and an Own of the same match by one instance (session locks would stack).
  ASSERT_TRUE(*a->Own(*id));
  ASSERT_TRUE(*a->Own(*id));
  EXPECT_FALSE(*b->Own(*id)) << "one owner at a time";
  a->Disown(*id);
  EXPECT_TRUE(*b->Own(*id)) << "one Disown hands it back";
  // An instance that has left takes no ownership any more.
  b->DisownAll();
  EXPECT_FALSE(b->Own(*id).ok());
  EXPECT_TRUE(*a->Own(*id));
}

TEST_F(PostgresStoreTest, AnExpiredMatchTakesNoSeatAndListsNoOpenSeat) {
  std::unique_ptr<PostgresStore> store = NewStore();
  absl::StatusOr<int64_t> id = store->CreateMatch(TwoSeats(1));
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<std::vector<int64_t>> gone =
      store->ExpireWaiting(/*created_before_ms=*/1700000000001, "cancelled", 10);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_NE(std::find(gone->begin(), gone->end(), *id), gone->end());
  absl::Status join = store->TakeSeat(*id, 0, "late", "hash-late", 9).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(join)) << join;
  absl::StatusOr<MatchRecord> m = store->LoadMatch(*id);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, MatchStatus::kFinished);
  EXPECT_EQ(m->result.reason, EndReason::kCancelled);
  EXPECT_FALSE(m->seats[0].taken());
  absl::StatusOr<std::vector<MatchRecord>> open = store->ListMatches({.open_seats = true});
  ASSERT_TRUE(open.ok());
  for (const MatchRecord& r : *open) EXPECT_NE(r.id, *id) << "a cancelled match is not open";
}

TEST_F(PostgresStoreTest, ACreatorsCreatesAtOnceCannotAllPassItsQuota) {
  std::unique_ptr<PostgresStore> store = NewStore();
  const std::string creator = absl::StrCat("198.51.100.", ++serial_);
  std::atomic<int> made{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      MatchRecord m = TwoSeats(1);
      m.creator = creator;
      absl::StatusOr<int64_t> id =
          store->CreateMatchWithin(m, [](const Holdings& held, const Holdings&) {
            return held.waiting >= 2 ? absl::ResourceExhaustedError("quota") : absl::OkStatus();
          });
      (id.ok() ? made : refused)++;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(made.load(), 2);
  EXPECT_EQ(refused.load(), 6);
}

TEST_F(PostgresStoreTest, FreshAccountsAtOnceFromOneAddressCannotAllPassItsQuota) {
  // Eight players (each under its own bound) create at once from one address: the address's
  // bound holds them together.
  std::unique_ptr<PostgresStore> store = NewStore();
  const std::string address = absl::StrCat("198.51.100.", ++serial_);
  std::atomic<int> made{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      MatchRecord m = TwoSeats(1);
      m.creator = absl::StrCat("player:", 1000 + i);
      m.creator_address = address;
      absl::StatusOr<int64_t> id =
          store->CreateMatchWithin(m, [](const Holdings& mine, const Holdings& at_address) {
            EXPECT_EQ(mine.waiting, 0);
            return at_address.waiting >= 3 ? absl::ResourceExhaustedError("address quota")
                                           : absl::OkStatus();
          });
      (id.ok() ? made : refused)++;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(made.load(), 3);
  EXPECT_EQ(refused.load(), 5);
}

TEST_F(PostgresStoreTest, APlayersGamesOfOneGameAreFoundBehindThousandsOfOthers) {
  // A bot level's history: three Gomoku games, then 2,500 of Connect Four. Filtering by game
  // read only the newest 1,000 seats and showed no Gomoku at all.
  std::unique_ptr<PostgresStore> store = NewStore();
  absl::StatusOr<PlayerRecord> bot = store->CreatePlayer("HistoryBot", "key-history-bot", 1);
  ASSERT_TRUE(bot.ok()) << bot.status();
  const std::string player = std::to_string(bot->id);
  auto fill = [&](const std::string& game, int n, int seats) {
    const std::string out = cluster_->Query(
        "store", absl::StrCat("WITH m AS (INSERT INTO matches (game, status, open_seats, "
                              "bots_only, created_ms) SELECT '",
                              game, "', 3, 0, false, 4242 FROM generate_series(1, ", n,
                              ") RETURNING id) INSERT INTO seats (match_id, seat, kind, "
                              "player_id) SELECT m.id, s, 1, ",
                              player, " FROM m, generate_series(0, ", seats - 1, ") AS s"));
    EXPECT_EQ(out, absl::StrCat("INSERT 0 ", n * seats));
  };
  fill("gomoku", 3, 1);
  fill("connect4", 2500, 2);  // both seats his: each match is one row of his history

  absl::StatusOr<std::vector<MatchRecord>> gomoku = store->PlayerMatches(bot->id, "gomoku", 0, 2);
  ASSERT_TRUE(gomoku.ok()) << gomoku.status();
  ASSERT_EQ(gomoku->size(), 2u);
  EXPECT_EQ((*gomoku)[0].game, "gomoku");
  EXPECT_GT((*gomoku)[0].id, (*gomoku)[1].id) << "newest first";
  absl::StatusOr<std::vector<MatchRecord>> older =
      store->PlayerMatches(bot->id, "gomoku", gomoku->back().id, 2);
  ASSERT_TRUE(older.ok()) << older.status();
  ASSERT_EQ(older->size(), 1u) << "the next page holds the third";
  EXPECT_LT((*older)[0].id, gomoku->back().id);

  absl::StatusOr<std::vector<MatchRecord>> all = store->PlayerMatches(bot->id, "", 0, 200);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 200u) << "a full page, one row a match";
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_EQ((*all)[i].game, "connect4");
    if (i > 0) {
      EXPECT_LT((*all)[i].id, (*all)[i - 1].id);
    }
  }
  absl::StatusOr<std::vector<MatchRecord>> none = store->PlayerMatches(bot->id, "reversi", 0, 20);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
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
