// The rules that protect results and ratings, unit-tested where they live (no database, no
// process): each test plays an attack against the rule. The same attacks against a running
// stack are in players_test (real PostgreSQL and ply-lobby) and deploy/local/fair-play.
#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lobby-server/players/accounts.h"
#include "lobby-server/players/matchmaker.h"
#include "lobby-server/players/presence.h"
#include "lobby-server/players/quotas.h"
#include "lobby-server/players/rematches.h"
#include "lobby-server/rating/glicko2.h"
#include "lobby-server/rating/ratings.h"
#include "lobby-server/storage/memory/memory_account_store.h"
#include "lobby-server/storage/memory/memory_presence_store.h"
#include "lobby-server/storage/memory/memory_queue_store.h"
#include "lobby-server/storage/store.h"
#include "lobby-server/token.h"

namespace ply::lobby {
namespace {

MatchResult Won(int winner, EndReason reason = EndReason::kResignation) {
  return {.winner = winner, .reason = reason, .text = "test"};
}

TEST(Ratings, OnePlayerOnBothSeatsMovesNoRating) {
  // The farming attack: seat 1 resigns to seat 0, both the same account.
  const std::array<RatedSeat, 2> self = {RatedSeat{.player_id = 7}, RatedSeat{.player_id = 7}};
  EXPECT_FALSE(RateResult(self, Won(0), 10).has_value());
  EXPECT_FALSE(RateResult(self, Won(-1, EndReason::kAgreement), 10).has_value());
  // Two players: both move, the winner up and the loser down, by Glicko-2.
  const std::array<RatedSeat, 2> two = {RatedSeat{.player_id = 7}, RatedSeat{.player_id = 8}};
  std::optional<std::array<SeatRating, 2>> rated = RateResult(two, Won(0), 10);
  ASSERT_TRUE(rated.has_value());
  EXPECT_EQ((*rated)[0].score, 1.0);
  EXPECT_EQ((*rated)[1].score, 0.0);
  EXPECT_DOUBLE_EQ((*rated)[0].after.rating,
                   GlickoUpdate({}, {{.opponent = {}, .score = 1}}).rating);
  EXPECT_DOUBLE_EQ((*rated)[1].after.rating,
                   GlickoUpdate({}, {{.opponent = {}, .score = 0}}).rating);
}

TEST(Ratings, ResultsThatSayNothingMoveNoRating) {
  const std::array<RatedSeat, 2> two = {RatedSeat{.player_id = 1}, RatedSeat{.player_id = 2}};
  for (EndReason none :
       {EndReason::kNone, EndReason::kBotFailure, EndReason::kCancelled, EndReason::kAborted}) {
    EXPECT_FALSE(RateResult(two, Won(0, none), 10).has_value()) << static_cast<int>(none);
    EXPECT_FALSE(ResultCounts(Won(0, none), 10));
  }
  for (EndReason counts : {EndReason::kRules, EndReason::kResignation, EndReason::kTimeout,
                           EndReason::kAgreement, EndReason::kAbandoned}) {
    EXPECT_TRUE(RateResult(two, Won(1, counts), 10).has_value()) << static_cast<int>(counts);
  }
  // A guest's seat (no player) makes the match unrated.
  EXPECT_FALSE(RateResult({RatedSeat{.player_id = 1}, RatedSeat{}}, Won(0), 10).has_value());
}

TEST(Ratings, AResultBeforeEachSideMovedMovesNoRating) {
  // The farming attack: a second account joins the rated match and resigns at once, 60 times
  // (1500 -> 1964 in 1.3 s). A game nobody played says nothing of anyone's strength.
  const std::array<RatedSeat, 2> two = {RatedSeat{.player_id = 7}, RatedSeat{.player_id = 8}};
  for (int plies : {0, 1}) {
    for (EndReason reason : {EndReason::kResignation, EndReason::kAgreement, EndReason::kTimeout,
                             EndReason::kAbandoned}) {
      EXPECT_FALSE(ResultCounts(Won(0, reason), plies)) << plies;
      EXPECT_FALSE(RateResult(two, Won(0, reason), plies).has_value()) << plies;
    }
  }
  EXPECT_TRUE(RateResult(two, Won(0), 2).has_value()) << "each side moved once";
}

TEST(Ratings, OnePairsRatedGamesMoveRatingsAFewTimesADay) {
  // The same farm with a few moves played before each resignation: the second account loses
  // to the first again and again. Only the first games of a day between them are rated.
  const std::array<RatedSeat, 2> two = {RatedSeat{.player_id = 7}, RatedSeat{.player_id = 8}};
  for (int today = 0; today < kRatedGamesPerPairPerDay; ++today) {
    EXPECT_TRUE(RateResult(two, Won(0), 12, today).has_value()) << today;
  }
  EXPECT_FALSE(RateResult(two, Won(0), 12, kRatedGamesPerPairPerDay).has_value());
  // A bot level is what it is whoever plays it: a person's games against it are all rated.
  const std::array<RatedSeat, 2> bot = {RatedSeat{.player_id = 7},
                                        RatedSeat{.player_id = 3, .bot = true}};
  EXPECT_TRUE(RateResult(bot, Won(0), 12, 100).has_value());
}

TEST(Ratings, ABotLevelIsAFixedPointThatThrowawayGamesCannotMove) {
  // The sandbagging attack: a person resigns 60 rated games to bot:beginner at once.
  const Glicko beginner{.rating = 812, .deviation = 40};
  Glicko person;
  for (int i = 0; i < 60; ++i) {
    const std::array<RatedSeat, 2> seats = {
        RatedSeat{.player_id = 100, .before = person},
        RatedSeat{.player_id = 3, .bot = true, .before = beginner}};
    std::optional<std::array<SeatRating, 2>> rated = RateResult(seats, Won(1), 10);
    ASSERT_TRUE(rated.has_value());
    EXPECT_EQ((*rated)[1].after.rating, beginner.rating);
    EXPECT_EQ((*rated)[1].after.deviation, beginner.deviation);
    EXPECT_EQ((*rated)[1].score, 1.0) << "the game still counts in the bot's record";
    EXPECT_LT((*rated)[0].after.rating, person.rating);
    person = (*rated)[0].after;
  }
  EXPECT_LT(person.rating, 812) << "only the person who threw the games went down";
}

TEST(Ratings, OnePlayerMayNotTakeASecondSeatOfARatedMatch) {
  MatchRecord match;
  match.id = 42;
  match.rated = true;
  match.seats.resize(2);
  match.seats[0].player_id = 5;
  match.seats[0].token_hash = "h";
  const absl::Status own = CheckSeatOfRatedMatch(match, 5);
  EXPECT_EQ(own.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(own.message().find("seat 1 of match 42"), std::string_view::npos) << own;
  EXPECT_TRUE(CheckSeatOfRatedMatch(match, 6).ok());
  EXPECT_TRUE(CheckSeatOfRatedMatch(match, 0).ok()) << "a guest makes it casual instead";
  match.rated = false;
  EXPECT_TRUE(CheckSeatOfRatedMatch(match, 5).ok()) << "a casual match against oneself";
}

// A person's match against one bot, made by `creator` from `address`.
MatchRecord BotMatch(const std::string& creator, const std::string& address) {
  MatchRecord m;
  m.status = MatchStatus::kActive;
  m.creator = creator;
  m.creator_address = address;
  m.seats.resize(2);
  m.seats[1].kind = SeatKind::kBot;
  return m;
}

TEST(Quotas, APlayerAndItsAddressAreEachBoundWhicheverComesFirst) {
  const Quotas quotas({.bot_seats = 8, .address_multiple = 4});
  const QuotaCheck fresh = quotas.For(BotMatch("player:31", "203.0.113.9"));
  ASSERT_NE(fresh, nullptr);
  // The free-accounts attack: the 32nd fresh account has no seat of its own, but the address
  // already holds 32.
  EXPECT_TRUE(fresh({}, {.bot_seats = 31}).ok());
  const absl::Status refused = fresh({}, {.bot_seats = 32});
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("your address"), std::string_view::npos) << refused;
  // The player's own bound holds whatever the address has.
  EXPECT_EQ(fresh({.bot_seats = 8}, {.bot_seats = 8}).code(), absl::StatusCode::kResourceExhausted);
  // A guest counts by address: its own bound, and the address's.
  const QuotaCheck guest = quotas.For(BotMatch("203.0.113.9", "203.0.113.9"));
  EXPECT_EQ(guest({.bot_seats = 8}, {.bot_seats = 8}).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(guest({.bot_seats = 0}, {.bot_seats = 32}).code(),
            absl::StatusCode::kResourceExhausted);
  // An exempt client (no creator) is not bounded.
  EXPECT_EQ(quotas.For(BotMatch("", "")), nullptr);
}

TEST(Quotas, MatchesInPlayOfEveryKindAreBounded) {
  // A match of two people, created and joined at once by one client, is in play, not waiting:
  // only the open-matches bound counts it.
  const Quotas quotas({.open_matches = 20, .address_multiple = 4});
  MatchRecord rec;
  rec.creator = "player:31";
  rec.creator_address = "203.0.113.9";
  rec.status = MatchStatus::kActive;
  rec.seats = {SeatRecord{.kind = SeatKind::kHuman}, SeatRecord{.kind = SeatKind::kHuman}};
  const QuotaCheck check = quotas.For(rec);
  ASSERT_NE(check, nullptr);
  EXPECT_TRUE(check({.open = 19}, {.open = 79}).ok());
  EXPECT_EQ(check({.open = 20}, {.open = 20}).code(), absl::StatusCode::kResourceExhausted);
  const absl::Status address = check({.open = 0}, {.open = 80});
  EXPECT_EQ(address.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(address.message().find("your address"), std::string_view::npos) << address;
  EXPECT_EQ(Quotas({}).For(rec), nullptr) << "no bound set";
}

TEST(Quotas, TheLastBotSeatsGoToClientsThatHoldHardlyAny) {
  const Quotas quotas({.bot_seats = 8, .address_multiple = 4});
  const MatchRecord rec = BotMatch("player:31", "203.0.113.9");
  const QuotaCheck plenty = quotas.For(rec, /*scarce_bots=*/false);
  const QuotaCheck scarce = quotas.For(rec, /*scarce_bots=*/true);
  EXPECT_TRUE(plenty({.bot_seats = 5}, {.bot_seats = 5}).ok());
  EXPECT_TRUE(scarce({.bot_seats = 1}, {.bot_seats = 1}).ok());
  const absl::Status mine = scarce({.bot_seats = 2}, {.bot_seats = 2});
  EXPECT_EQ(mine.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(mine.message().find("(you already have 2)"), std::string_view::npos) << mine;
  const absl::Status address = scarce({.bot_seats = 0}, {.bot_seats = 5});
  EXPECT_EQ(address.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(address.message().find("(your address already has 5)"), std::string_view::npos)
      << address;
  // A fresh IPv6 /64 of a /48 that holds them is no newcomer.
  const absl::Status network = scarce({.bot_seats = 0}, {.bot_seats = 0, .network_bot_seats = 6});
  EXPECT_EQ(network.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(network.message().find("(your network already has 6)"), std::string_view::npos)
      << network;
  EXPECT_TRUE(plenty({.bot_seats = 0}, {.bot_seats = 0, .network_bot_seats = 6}).ok());
  // Bounds off: scarcity alone still bounds.
  EXPECT_NE(Quotas({}).For(rec, true), nullptr);
  EXPECT_EQ(Quotas({}).For(rec, false), nullptr);
}

TEST(Quotas, RegistrationsAreBoundedPerAddressPerHour) {
  const Quotas quotas({.registrations_per_hour = 10});
  const RegistrationLimit limit = quotas.Registration("2001:db8:1:2::/64", 7'200'000);
  EXPECT_EQ(limit.address, "2001:db8:1:2::/64");
  EXPECT_EQ(limit.max, 10);
  EXPECT_EQ(limit.since_ms, 3'600'000);
  EXPECT_EQ(quotas.Registration("", 7'200'000).max, 0) << "exempt";
  EXPECT_EQ(Quotas({}).Registration("198.51.100.1", 0).max, 0) << "no bound set";
}

// Two lobby instances' presence over one shared table, on a clock the test moves.
struct TwoInstances {
  std::shared_ptr<MemoryPresenceStore::Rows> rows = std::make_shared<MemoryPresenceStore::Rows>();
  MemoryPresenceStore store_a{rows, "a"}, store_b{rows, "b"};
  int64_t now = 1'000'000;
  Presence a{
      &store_a, {.grace = absl::Seconds(5), .beat = absl::Seconds(10)}, [this] { return now; }};
  Presence b{
      &store_b, {.grace = absl::Seconds(5), .beat = absl::Seconds(10)}, [this] { return now; }};

  // Seat `seat` of match 1 as instance `p` sees it (with the grace as the bound).
  SeatPresence Seat(Presence& p, int seat) {
    absl::StatusOr<std::vector<SeatPresence>> found = p.Load({1}, p.SeenSinceMs(now));
    EXPECT_TRUE(found.ok()) << found.status();
    for (const SeatPresence& s : *found) {
      if (s.seat == seat) return s;
    }
    return {};
  }
};

TEST(Presence, AStreamThatClosedDuringAnOutageStopsHoldingItsSeatOnceTheStoreIsBack) {
  // The stuck-presence fault: the -1 of a closing stream was lost while the database was down,
  // the row kept streams=1 and the live instance's beats kept it fresh: claims refused for good.
  TwoInstances t;
  t.a.StreamOpened(1, 1);
  t.a.Write();
  EXPECT_TRUE(t.Seat(t.b, 1).connected);
  t.store_a.set_down(true);
  t.a.StreamClosed(1, 1);
  EXPECT_FALSE(t.a.Write()) << "nothing can be written while the store is down";
  t.now += 60'000;
  t.store_a.set_down(false);
  // The next beat writes this instance's open streams whole (none): the stream is closed in
  // every instance's eyes; seat 1 was last seen before the outage.
  EXPECT_TRUE(t.a.Write());
  const SeatPresence gone = t.Seat(t.b, 1);
  EXPECT_FALSE(gone.connected);
  EXPECT_LE(gone.last_seen_ms, t.now - 60'000);
}

TEST(Presence, ACallCountsAtOnceHereAndOnceWrittenEverywhere) {
  TwoInstances t;
  t.a.Seen(1, 0);
  EXPECT_TRUE(t.Seat(t.a, 0).connected) << "this instance knows before it writes";
  EXPECT_FALSE(t.Seat(t.b, 0).connected) << "the other reads only what was written";
  t.a.Write();
  EXPECT_TRUE(t.Seat(t.b, 0).connected);
  t.now += 6'000;  // past the grace
  EXPECT_FALSE(t.Seat(t.b, 0).connected);
  EXPECT_EQ(t.Seat(t.b, 0).last_seen_ms, t.now - 6'000);
}

TEST(Presence, ADeadInstancesStreamsStopCountingAfterThreeBeats) {
  TwoInstances t;
  t.a.StreamOpened(1, 1);
  t.a.Write();
  // Instance a dies: its row says streams=1, but nobody refreshes it.
  t.now += 25'000;
  t.b.Write();
  EXPECT_TRUE(t.Seat(t.b, 1).connected) << "within three beats";
  t.now += 10'000;
  EXPECT_FALSE(t.Seat(t.b, 1).connected);
  // A live instance's open stream is kept alive by its beats.
  t.b.StreamOpened(1, 0);
  for (int i = 0; i < 5; ++i) {
    t.now += 10'000;
    t.b.Write();
  }
  EXPECT_TRUE(t.Seat(t.a, 0).connected);
}

// A queue, a matchmaker on a clock the test moves, and players to queue.
struct Queue {
  explicit Queue(MatchmakerOptions options = {})
      : matchmaker(&store, options, [this] { return now; }) {}
  MemoryQueueStore store;
  int64_t now = 1'000'000;
  Matchmaker matchmaker;

  static PlayerRecord Player(int64_t id) { return {.id = id, .name = absl::StrCat("p", id)}; }
  QueueTicket Join(int64_t id, double rating = 1500) {
    absl::StatusOr<QueueTicket> t =
        matchmaker.Join(Player(id), "connect4", "connect4|-|rated", rating);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : QueueTicket();
  }
  // One look, the match made as the lobby makes it: me at seat 0, both seats with the
  // entries' token hashes.
  QueueLook Look(QueueTicket& t) {
    absl::StatusOr<QueueLook> look =
        matchmaker.Look(t, [](const QueueEntry& me, const QueueEntry& them) {
          PairedMatch m;
          for (const QueueEntry* e : {&me, &them}) {
            SeatRecord seat;
            seat.player_id = e->player_id;
            seat.token_hash = e->token_hash;
            m.match.seats.push_back(seat);
          }
          return absl::StatusOr<PairedMatch>(m);
        });
    EXPECT_TRUE(look.ok()) << look.status();
    return look.ok() ? *look : QueueLook();
  }
};

TEST(Matchmaker, AnEntryWhoseStreamIsGoneIsPairedWithNobodyAndItsPlayerQueuesAgain) {
  // The ghost attack: a lobby dies with A queued; B must not be paired into a match nobody
  // plays, and A must be able to queue again.
  Queue q;
  QueueTicket a = q.Join(1);
  q.now += 6'000;  // A's stream (and instance) gone: nobody marks its entry alive
  QueueTicket b = q.Join(2);
  EXPECT_FALSE(q.Look(b).paired.has_value());
  EXPECT_EQ(q.store.size(), 1u) << "the dead entry left the queue";
  QueueTicket a2 = q.Join(1);
  const QueueLook paired = q.Look(a2);
  ASSERT_TRUE(paired.paired.has_value());
  const QueueLook theirs = q.Look(b);
  ASSERT_TRUE(theirs.paired.has_value());
  EXPECT_EQ(theirs.paired->match_id, paired.paired->match_id);
  // Each seat is played with the token its own stream made; the queue saw hashes only.
  const MatchRecord m = q.store.made().at(paired.paired->match_id);
  EXPECT_EQ(m.seats[paired.paired->seat].token_hash, TokenHash(a2.seat_token));
  EXPECT_EQ(m.seats[theirs.paired->seat].token_hash, TokenHash(b.seat_token));
  EXPECT_NE(a2.seat_token, b.seat_token);
}

TEST(Matchmaker, APairedEntryIsTakenOverOnlyOnceItsStreamIsGone) {
  Queue q;
  QueueTicket a = q.Join(1);
  QueueTicket b = q.Join(2);
  ASSERT_TRUE(q.Look(a).paired.has_value());
  // A second connection of B's while B's stream is alive: "paired a moment ago".
  absl::StatusOr<QueueTicket> again =
      q.matchmaker.Join(Queue::Player(2), "connect4", "connect4|-|rated", 1500);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  // B's instance died before telling B: minutes later B queues again and is taken.
  q.now += 360'000;
  again = q.matchmaker.Join(Queue::Player(2), "connect4", "connect4|-|rated", 1500);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(Matchmaker, TheGapWidensWithTheWaitAndABotIsOfferedOnce) {
  Queue q({.bot_after = absl::Seconds(10)});
  q.store.set_bot_ratings({{"bot:beginner", 812}, {"bot:easy", 1100}, {"bot:medium", 1400}});
  QueueTicket a = q.Join(1, 1150);
  QueueTicket b = q.Join(2, 1400);
  // 250 points apart: the gap is 50 at first, 50 + 10 a second after.
  int offers = 0;
  std::optional<Pairing> paired;
  int64_t waited = 0;
  for (int s = 0; s <= 30 && !paired; ++s) {
    for (QueueTicket* t : {&a, &b}) {
      const QueueLook look = q.Look(*t);
      if (look.bot_offer) {
        ++offers;
        if (t == &a) {
          EXPECT_EQ(look.bot_offer->first, "easy");
        }
      }
      if (look.paired) paired = look.paired;
    }
    waited = q.now - a.entry.joined_ms;
    q.now += 1'000;
  }
  ASSERT_TRUE(paired.has_value());
  EXPECT_GE(waited, 20'000);
  EXPECT_LE(waited, 21'000);
  EXPECT_EQ(offers, 2) << "one offer each, after 10 s";
  EXPECT_EQ(q.matchmaker.GapAfter(0), 50);
  EXPECT_EQ(q.matchmaker.GapAfter(1'000'000), 400);
}

TEST(Accounts, FreshAccountsAreBoundedPerAddressAndLookAlikesRefused) {
  MemoryAccountStore store;
  const Quotas quotas({.registrations_per_hour = 3});
  int64_t now = 10'000'000;
  Accounts accounts(&store, &quotas, [&now] { return now; });
  // The free-accounts attack: one address registers account after account.
  for (const char* name : {"alice", "bob", "carol"}) {
    EXPECT_TRUE(accounts.Register(name, "203.0.113.9").ok()) << name;
  }
  absl::StatusOr<std::pair<PlayerRecord, std::string>> more =
      accounts.Register("dave", "203.0.113.9");
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(accounts.Register("dave", "198.51.100.4").ok()) << "another address";
  now += 3'600'001;  // past the hour
  EXPECT_TRUE(accounts.Register("erin", "203.0.113.9").ok());
  // The impersonation attack: a capital i for the l, another case, a digit one.
  for (const char* like : {"aIice", "ALICE", "a1ice", "a.lice"}) {
    EXPECT_EQ(accounts.Register(like, "").status().code(), absl::StatusCode::kAlreadyExists)
        << like;
  }
  EXPECT_EQ(accounts.Register("x y", "").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Accounts, AKeyIsItsPlayerAndGuestsCannotPassForOne) {
  MemoryAccountStore store;
  const Quotas quotas({});
  int64_t now = 1;
  Accounts accounts(&store, &quotas, [&now] { return now; });
  absl::StatusOr<std::pair<PlayerRecord, std::string>> alice = accounts.Register("alice", "");
  ASSERT_TRUE(alice.ok());
  absl::StatusOr<std::optional<PlayerRecord>> me = accounts.PlayerOf(alice->second);
  ASSERT_TRUE(me.ok());
  ASSERT_TRUE(me->has_value());
  EXPECT_EQ((*me)->name, "alice");
  EXPECT_FALSE(accounts.PlayerOf("")->has_value()) << "no key: a guest";
  EXPECT_EQ(accounts.PlayerOf("not a key").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(accounts.PlayerOf(std::string(32, 'f')).status().code(),
            absl::StatusCode::kUnauthenticated);
  for (const char* name : {"alice", "Alice", "\u0430lice", "\uff41\uff4c\uff49\uff43\uff45",
                           "b\u043et (hard)", "bot:hard"}) {
    EXPECT_EQ(accounts.GuestName(name).status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(*accounts.GuestName("  carol "), "carol");
}

TEST(Rematches, ALoopOfOffersIsCutOffAndARematchKeepsItsCreatorsQuotas) {
  const Quotas quotas({.bot_seats = 8});
  int64_t now = 1'000'000;
  Rematches rematches(/*store=*/nullptr, &quotas, [&now] { return now; });
  // The flood: a burst of six, then one every two seconds; the other seat has its own.
  int admitted = 0;
  for (int i = 0; i < 40; ++i) admitted += rematches.Admit(7, 0).ok() ? 1 : 0;
  EXPECT_EQ(admitted, 6);
  EXPECT_TRUE(rematches.Admit(7, 1).ok());
  now += 2'000;
  EXPECT_TRUE(rematches.Admit(7, 0).ok());
  EXPECT_EQ(rematches.Admit(7, 0).code(), absl::StatusCode::kResourceExhausted);
  // A guest's finished bot match: its rematch swaps the seats, keeps the creator and address,
  // and is made within their quotas.
  MatchRecord old = BotMatch("203.0.113.9", "203.0.113.9");
  old.id = 7;
  old.status = MatchStatus::kFinished;
  old.result.reason = EndReason::kResignation;
  old.seats[0].display_name = "guest";
  old.seats[1].difficulty = "easy";
  EXPECT_TRUE(Rematches::CheckRematchable(old).ok());
  const RematchOffer offer = rematches.OfferOf(old, 0, "hash");
  EXPECT_TRUE(offer.accept_now) << "the bot accepts at once";
  EXPECT_EQ(offer.next.creator, "203.0.113.9");
  EXPECT_EQ(offer.next.creator_address, "203.0.113.9");
  EXPECT_EQ(offer.next.seats[0].kind, SeatKind::kBot);
  EXPECT_EQ(offer.next.seats[0].difficulty, "easy");
  EXPECT_EQ(offer.next.seats[1].display_name, "guest");
  EXPECT_TRUE(offer.next.seats[1].token_hash.empty()) << "the store sets the tokens";
  ASSERT_NE(offer.check, nullptr);
  EXPECT_EQ(offer.check({.bot_seats = 8}, {}).code(), absl::StatusCode::kResourceExhausted);
  // Only a finished match that began, of two seats.
  old.result.reason = EndReason::kCancelled;
  EXPECT_EQ(Rematches::CheckRematchable(old).code(), absl::StatusCode::kFailedPrecondition);
  old.status = MatchStatus::kActive;
  EXPECT_EQ(Rematches::CheckRematchable(old).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ply::lobby
