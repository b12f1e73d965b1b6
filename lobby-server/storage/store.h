// What the lobby keeps in its database, and the one interface through which match logic reads
// and writes it. Every write is one transaction; a call that returns OK has committed. Only
// storage/postgres/ knows that the database is PostgreSQL.
//
// Error codes: NOT_FOUND (no such match), ALREADY_EXISTS (the seat was taken meanwhile), ABORTED
// (the match moved on meanwhile: another writer stored that ply or changed the status first;
// reload it), UNAVAILABLE (the database cannot be reached; nothing was written, or for a commit
// whose outcome is unknown, reload before trusting memory).
#ifndef PLY_LOBBY_SERVER_STORAGE_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/core/options.h"
#include "lobby-server/storage/presence_store.h"

namespace ply::lobby {

// Values as in ply.v1 (SeatKind, MatchStatus, EndReason), so conversions are casts.
enum class SeatKind : int { kHuman = 1, kBot = 2 };
enum class MatchStatus : int { kWaiting = 1, kActive = 2, kFinished = 3 };
enum class EndReason : int {
  kNone = 0,
  kRules = 1,
  kResignation = 2,
  kTimeout = 3,
  kAgreement = 4,
  kBotFailure = 5,
  // Nobody took the open seats in time: no result.
  kCancelled = 6,
  // A side never made its first move in time: no result, no rating change.
  kAborted = 7,
  // The side to move left and the opponent claimed.
  kAbandoned = 8
};

struct SeatRecord {
  SeatKind kind = SeatKind::kHuman;
  std::string difficulty;
  std::string display_name;
  // Hex SHA-256 of the seat token; empty while a human seat is open (always empty for bots).
  std::string token_hash;
  // Time left when the seat's last turn ended (the initial time before its first move).
  int64_t clock_ms = 0;
  // The player holding the seat (0: a guest without a player key); bot seats belong to their
  // level's player ("bot:hard").
  int64_t player_id = 0;
  std::string player;
  // The player's rating in the match's game when the seat was taken, and after a rated match.
  int rating = 0;
  int rating_after = 0;
  bool provisional = false;
  bool taken() const { return kind == SeatKind::kBot || !token_hash.empty(); }
};

struct MoveRecord {
  // 1-based.
  int ply = 0;
  int seat = 0;
  std::string move;
  int64_t think_ms = 0;
  int64_t clock_ms = 0;
  // Commit time, ms since the Unix epoch.
  int64_t time_ms = 0;
  // For a bot's move: what its search saw, as JSON (ply.v1.BotThinking); empty otherwise.
  std::string bot_json;
};

struct MatchResult {
  int winner = -1;
  EndReason reason = EndReason::kNone;
  std::string text;
  // Why a rated match's result moved no rating, where only the store knows it (the pair's
  // rated games of the day); "" otherwise (ratings.h's UnratedNote gives the rest).
  std::string rating_note;
};

struct MatchRecord {
  int64_t id = 0;
  std::string game;
  GameOptions options;
  MatchStatus status = MatchStatus::kWaiting;
  std::vector<SeatRecord> seats;
  // Loaded by LoadMatch; ListMatches leaves it empty and sets `ply` alone.
  std::vector<MoveRecord> moves;
  int ply = 0;
  // No clocks when nullopt.
  std::optional<int64_t> time_initial_ms;
  int64_t time_increment_ms = 0;
  int64_t bot_pacing_ms = 0;
  // When the side to move's clock started (the match start, or the last move's commit).
  int64_t turn_started_ms = 0;
  int draw_offer = -1;
  MatchResult result;
  int64_t created_ms = 0;
  // Who created it, for the quotas: the player ("player:ID") when the call had one, else the
  // client as the per-client limits name it ("" when exempt or unknown); and the client's
  // address key (IPv4, or an IPv6 /64; "" when exempt), which the quotas count too.
  std::string creator;
  std::string creator_address;
  // The network of the address where one holder easily has many addresses (an IPv6 /64's /48,
  // ClientNetworkKey; "" for IPv4 and when exempt).
  std::string creator_network;
  // Its end moves the players' ratings: every seat a player's (bot levels included), at least
  // one a person, and not asked to be casual.
  bool rated = false;
  // Once finished: the seat whose rematch offer is open (-1: none), and the rematch made (0:
  // none yet).
  int rematch_offer = -1;
  int64_t rematch_id = 0;
};

struct GameRatingRecord {
  std::string game;
  double rating = 1500;
  double deviation = 350;
  int games = 0;
  int wins = 0;
  int draws = 0;
  int losses = 0;
};

// A bot level's rating in one game, as a starting point (the calibration ladder's) or as it
// stands (the bot player's own, moved by its rated games).
struct BotLevelRating {
  std::string game;
  // The level ("hard"), not the player's name ("bot:hard").
  std::string level;
  double rating = 1500;
  double deviation = 350;
  int games = 0;
};

struct PlayerRecord {
  int64_t id = 0;
  std::string name;
  bool bot = false;
  int64_t created_ms = 0;
  int64_t last_seen_ms = 0;
  std::vector<GameRatingRecord> ratings;
};

// A player waiting in the pairing queue.
struct QueueEntry {
  int64_t id = 0;
  int64_t player_id = 0;
  std::string name;
  // Who can meet whom: the game, its options, the time control and casual, as one key.
  std::string pool;
  double rating = 1500;
  int64_t joined_ms = 0;
  // The hash of the seat token the entry's stream made for the match it will be paired into
  // (the stream keeps the token itself; no store ever holds a token).
  std::string token_hash;
  // When the entry's stream was last known to be open (JoinQueue, QueueResult's refresh).
  int64_t alive_ms = 0;
  // Filled by TryPair for `make`: how many of the player's last ten rated matches of the game
  // that began (each side moved) it began as the first player, minus as the second.
  int first_move_balance = 0;
};

// A pairing made: the match and the seat of the entry that asked (its token is the one whose
// hash the entry carries).
struct Pairing {
  int64_t match_id = 0;
  int seat = 0;
};

// The match a pairing makes: both seats taken (with the entries' token hashes), and the seat
// of the entry that asked.
struct PairedMatch {
  MatchRecord match;
  int my_seat = 0;
};

// What one client holds now (matches it created that are waiting or in play), for the quotas.
struct Holdings {
  int waiting = 0;
  int bot_seats = 0;
  // Matches with only bot seats.
  int bot_matches = 0;
  // Matches waiting or in play, of every kind.
  int open = 0;
  // For an address: the bot seats its network holds (creator_network), over all its addresses.
  int network_bot_seats = 0;
};

// What a store checks as it makes a match: told what the match's creator and the creator's
// address hold now (both locked against other creates of theirs), OK or why not.
using QuotaCheck = std::function<absl::Status(const Holdings& creator, const Holdings& address)>;

// How many players one client address may register (0 max: no limit).
struct RegistrationLimit {
  std::string address;
  // Registrations from the address since this count.
  int64_t since_ms = 0;
  int max = 0;
};

// A seat's rematch offer on a finished match (MatchStore::OfferRematch).
struct RematchOffer {
  int64_t match_id = 0;
  int seat = 0;
  // The hash of the offering player's token in the rematch.
  std::string token_hash;
  // The rematch as it would be made: seats swapped, the people's token hashes left empty (the
  // store fills in the offerer's and the other offer's).
  MatchRecord next;
  // The other seat agrees at once (a bot).
  bool accept_now = false;
  // The creator's quotas, checked as the rematch is made (null: none apply).
  QuotaCheck check;
};

// Where a finished match's rematch stands.
struct RematchState {
  int offer = -1;
  int64_t rematch_id = 0;
  // This call made the rematch.
  bool made = false;
};

struct LeaderboardRow {
  std::string name;
  bool bot = false;
  GameRatingRecord rating;
};

struct MatchFilter {
  std::string game;
  std::optional<MatchStatus> status;
  bool open_seats = false;
  bool bots_only = false;
  // Matches with an id below this one (paging, newest first); 0 for the first page.
  int64_t before_id = 0;
  int limit = 20;
};

// A move and the match's new state, written together.
struct MoveCommit {
  MoveRecord move;
  // The mover's clock after the move, stored when `clocked` (the match has a time control).
  int64_t mover_clock_ms = 0;
  bool clocked = false;
  int64_t turn_started_ms = 0;
  // The open draw offer after the move (-1: none).
  int draw_offer = -1;
  // Set when the move ends the match.
  std::optional<MatchResult> result;
};

// The end of a match for a reason other than a move (resignation, timeout, agreement, ...).
struct FinishCommit {
  // The match must still be active at this ply.
  int expected_ply = 0;
  MatchResult result;
  // Clocks to store, by seat (the loser's time at the flag fall, for instance).
  std::vector<int64_t> clocks_ms;
};

// What changed in a match, as another lobby instance announced it.
struct MatchChange {
  int64_t match_id = 0;
  // The match's ply after the change.
  int ply = 0;
  // When the change was committed (ms since the Unix epoch), for the notification's lag.
  int64_t time_ms = 0;
};

// The few columns that change while a match is played: a cached copy whose version equals the
// database's is as the database has it.
struct MatchVersion {
  int ply = 0;
  MatchStatus status = MatchStatus::kWaiting;
  int draw_offer = -1;
  int open_seats = 0;
  int rematch_offer = -1;
  int64_t rematch_id = 0;
  bool operator==(const MatchVersion&) const = default;
};

// The version of a match as `r` has it.
inline MatchVersion VersionOf(const MatchRecord& r) {
  int open = 0;
  for (const SeatRecord& s : r.seats) open += s.taken() ? 0 : 1;
  return {.ply = r.ply,
          .status = r.status,
          .draw_offer = r.draw_offer,
          .open_seats = open,
          .rematch_offer = r.rematch_offer,
          .rematch_id = r.rematch_id};
}

// The ABORTED answer of a write that found match `match_id` no longer at `ply` (another move or
// result came first), worded alike by every store.
inline absl::Status MatchMovedOn(int64_t match_id, int ply) {
  return absl::AbortedError(absl::StrCat("match ", match_id, " is no longer active at ply ", ply,
                                         ": another move or result came first"));
}

// How a store tells its lobby about other lobby instances sharing the database.
struct PeerHandlers {
  // Matches another instance changed (called on the store's listener thread).
  std::function<void(const std::vector<MatchChange>&)> changed;
  // Announcements may have been lost (the listening connection dropped and is back): every
  // cached match may be behind.
  std::function<void()> resync;
  // Another instance handed its matches back (it is shutting down): claim them now.
  std::function<void()> released;
  // This instance's ownerships are gone (the connection holding them broke).
  // `epoch` is the one OwnerEpoch() had while those ownerships were held; ownerships taken
  // since (on a new connection) stand.
  std::function<void(int64_t epoch)> ownership_lost;
};

// How the conversation with the other instances goes, for the metrics.
struct PeerCounters {
  int64_t notifications = 0;
  int64_t reconnects = 0;
  int64_t errors = 0;
  // Moves whose commit failed for want of the database and were then found stored or written
  // again (PostgresOptions::settle_window).
  int64_t settled_moves = 0;
};

// Where the analysis of a match stands for one request (MatchStore::ClaimAnalysis).
struct AnalysisClaim {
  enum class State { kClaimed, kStored, kBusy };
  State state = State::kBusy;
  // The stored analysis (kStored), JSON text.
  std::string result;
};

// Where the pairing queue is kept (players/matchmaker.h says the rules): PostgresStore's
// pairing_queue table, MemoryQueueStore for unit tests. Unimplemented in a store without players.
class QueueStore {
 public:
  virtual ~QueueStore() = default;

  // The pairing queue. An entry lives as long as its stream: its instance refreshes it
  // (QueueResult with a refresh time), and one not refreshed since `alive_since_ms` (its stream
  // or its instance is gone) is neither paired nor kept.
  //
  // Joins and returns the entry's id; a player waits once, so joining again takes the row over
  // under a new id (FailedPrecondition if it was paired meanwhile by a live stream; a dead
  // entry is taken over whatever it holds).
  virtual absl::StatusOr<int64_t> JoinQueue(const QueueEntry& /*entry*/,
                                            int64_t /*alive_since_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  virtual void LeaveQueue(int64_t /*entry_id*/) {}
  // The pairing made for the entry by any instance, if one was; Aborted once the entry is gone
  // (the player queued again elsewhere). With `refresh_ms` > 0 the entry is marked alive then.
  virtual absl::StatusOr<std::optional<Pairing>> QueueResult(int64_t /*entry_id*/,
                                                             int64_t /*refresh_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // Pairs the entry with the live waiting entry of its pool whose rating is closest, within a
  // gap of min(max_gap, base_gap + gap_per_s * seconds) points, the seconds of the longer of
  // the two waits. `make(me, opponent)` gives the match (both seats taken by them, with their
  // entries' token hashes); the match and both entries' results are written in one
  // transaction. Nothing when the entry is taken already or nobody fits. Rows are taken with
  // SKIP LOCKED: nobody is paired twice, however many instances pair at once. The pool's dead
  // entries are removed on the way.
  virtual absl::StatusOr<std::optional<Pairing>> TryPair(
      const QueueEntry& /*entry*/, int64_t /*now_ms*/, int64_t /*alive_since_ms*/,
      double /*base_gap*/, double /*gap_per_s*/, double /*max_gap*/,
      const std::function<absl::StatusOr<PairedMatch>(const QueueEntry&, const QueueEntry&)>&
      /*make*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // When the player did not come to a paired match (MarkNoShows), since `since_ms`; none in a
  // store that keeps them not.
  virtual absl::StatusOr<std::vector<int64_t>> NoShows(int64_t /*player_id*/,
                                                       int64_t /*since_ms*/) {
    return std::vector<int64_t>{};
  }
  // An active match between people in which the player is to make their first move (the
  // newest), if any; none in a store that keeps no players.
  virtual absl::StatusOr<std::optional<int64_t>> AwaitingFirstMove(int64_t /*player_id*/) {
    return std::optional<int64_t>();
  }
  // The holders of `seats` of the match did not come to it (at `now_ms`).
  virtual absl::Status MarkNoShows(int64_t /*match_id*/, const std::vector<int>& /*seats*/,
                                   int64_t /*now_ms*/) {
    return absl::OkStatus();
  }
  // The rating of each bot level ("bot:LEVEL") that has one in `game`.
  virtual absl::StatusOr<std::vector<std::pair<std::string, double>>> BotRatings(
      const std::string& /*game*/) {
    return std::vector<std::pair<std::string, double>>{};
  }
};

// Where players' accounts are kept (players/accounts.h says the rules): PostgresStore's
// players table, MemoryAccountStore for unit tests. Unimplemented in a store without players.
class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // Players (only a store shared by every instance has them). Names are unique ignoring case.
  // Registers a player; ALREADY_EXISTS when the name is taken.
  // With a `limit`, RESOURCE_EXHAUSTED when its address has registered `max` players since
  // `since_ms` (counted over every instance, in the transaction that registers). With a
  // `skeleton` (names.h, NameSkeleton), ALREADY_EXISTS when a player's name has it too.
  virtual absl::StatusOr<PlayerRecord> CreatePlayer(const std::string& /*name*/,
                                                    const std::string& /*key_hash*/,
                                                    int64_t /*now_ms*/,
                                                    const RegistrationLimit& /*limit*/ = {},
                                                    const std::string& /*skeleton*/ = "") {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // The name of the player whose name has this skeleton (NOT_FOUND when none does).
  virtual absl::StatusOr<std::string> PlayerBySkeleton(const std::string& /*skeleton*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // The player whose key hashes to `key_hash` (NOT_FOUND), noting that it was seen now.
  virtual absl::StatusOr<PlayerRecord> PlayerByKey(const std::string& /*key_hash*/,
                                                   int64_t /*now_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // A player by name, with its ratings (NOT_FOUND).
  virtual absl::StatusOr<PlayerRecord> LoadPlayer(const std::string& /*name*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
};

// Where rematch offers are kept and rematches made (players/rematches.h says the rules).
class RematchStore {
 public:
  virtual ~RematchStore() = default;

  // Rematches. Records `offer.seat`'s offer on its finished match; when the other seat has an
  // offer open (or offer.accept_now), makes the rematch instead (offer.next, with the offerer's
  // token hash and the other offer's) and records its id on the old match. One transaction with
  // the old match's row locked: offers at once make one rematch, and a match that has one
  // keeps it (asking again returns it). FAILED_PRECONDITION when the match is not finished.
  virtual absl::StatusOr<RematchState> OfferRematch(const RematchOffer& /*offer*/) {
    return absl::UnimplementedError("this lobby's store keeps no rematches");
  }
  // Takes back the open rematch offer of a finished match, whoever made it.
  virtual absl::StatusOr<RematchState> WithdrawRematch(int64_t /*match_id*/) {
    return absl::UnimplementedError("this lobby's store keeps no rematches");
  }
};

class MatchStore : public PresenceStore,
                   public QueueStore,
                   public AccountStore,
                   public RematchStore {
 public:
  virtual ~MatchStore() = default;

  // Creates or upgrades the schema (idempotent; safe with several lobbies starting at once).
  virtual absl::Status Migrate() = 0;
  // Stores a new match with its seats; returns its id.
  virtual absl::StatusOr<int64_t> CreateMatch(const MatchRecord& match) = 0;
  // Puts a person in an open human seat. When it was the last open seat, the match becomes
  // active with its first turn starting at `now_ms`; returns whether that happened.
  // `player_id` binds the seat to a player (0: a guest, which makes the match unrated).
  // `taken`, when given, gets the seat's rating and provisional as the store wrote them (the
  // player's in the match's game; NewcomerRating for a newcomer).
  virtual absl::StatusOr<bool> TakeSeat(int64_t match_id, int seat, const std::string& name,
                                        const std::string& token_hash, int64_t now_ms,
                                        int64_t player_id = 0, SeatRecord* taken = nullptr) = 0;
  // Appends move number commit.move.ply; ABORTED when the match is not active at ply - 1.
  virtual absl::Status AppendMove(int64_t match_id, const MoveCommit& commit) = 0;
  // The same without waiting: `done` runs once with what AppendMove would return, possibly on
  // another thread, possibly before this returns. A store may commit the moves of several
  // matches together (each one still succeeds or fails on its own). The default waits.
  virtual void AppendMoveAsync(int64_t match_id, MoveCommit commit,
                               std::function<void(absl::Status)> done) {
    done(AppendMove(match_id, commit));
  }
  virtual absl::Status Finish(int64_t match_id, const FinishCommit& commit) = 0;
  // Records an open draw offer (or -1 to clear it) at `expected_ply`.
  virtual absl::Status SetDrawOffer(int64_t match_id, int expected_ply, int seat) = 0;
  virtual absl::StatusOr<MatchRecord> LoadMatch(int64_t match_id) = 0;
  // LoadMatch with only the moves after `after_ply` (`ply` still counts them all): what a copy
  // that is a few moves behind needs.
  virtual absl::StatusOr<MatchRecord> LoadMatchAfter(int64_t match_id, int after_ply) {
    absl::StatusOr<MatchRecord> match = LoadMatch(match_id);
    if (match.ok()) {
      std::erase_if(match->moves, [&](const MoveRecord& m) { return m.ply <= after_ply; });
    }
    return match;
  }
  virtual absl::StatusOr<std::vector<MatchRecord>> ListMatches(const MatchFilter& filter) = 0;
  // Ids of the active matches that go on without any call: those with a clock (a flag can
  // fall) or a bot seat (a bot may be to move). Others wait, untouched, for their players.
  virtual absl::StatusOr<std::vector<int64_t>> MatchesToResume() = 0;
  // Which match and seat hold this token hash, if any.
  virtual absl::StatusOr<std::optional<std::pair<int64_t, int>>> FindToken(
      const std::string& token_hash) = 0;
  virtual absl::StatusOr<MatchVersion> LoadVersion(int64_t match_id) = 0;
  virtual absl::StatusOr<Holdings> HoldingsOf(const std::string& creator) = 0;
  // CreateMatch if `check`, told what the match's creator and its address hold now, says so:
  // both at once for that creator and address (no other create of theirs can come between), so
  // that creates at the same moment cannot all pass a quota only one of them fits. A null
  // `check` creates at once.
  virtual absl::StatusOr<int64_t> CreateMatchWithin(const MatchRecord& match,
                                                    const QuotaCheck& check) = 0;
  // Bot seats in matches being played, over every creator.
  virtual absl::StatusOr<int> BotSeatsInPlay() = 0;
  // Cancels (kCancelled, no result, `text`) up to `limit` matches still waiting for players
  // that were created before `created_before_ms`; returns their ids.
  virtual absl::StatusOr<std::vector<int64_t>> ExpireWaiting(int64_t created_before_ms,
                                                             const std::string& text,
                                                             int limit) = 0;

  // Aborts (kAborted, no result, `text`) up to `limit` active matches whose side to move is a
  // person that has not made its first move (ply 0 or 1) in a turn that began before
  // `turn_started_before_ms`; returns their ids. Each is aborted once, however many sweep. In a
  // match between people, the player who did not move is marked as not having come
  // (MarkNoShows, at `now_ms`): making no first move dodged a paired opponent as well as not
  // coming did.
  virtual absl::StatusOr<std::vector<int64_t>> AbortUnstarted(int64_t /*turn_started_before_ms*/,
                                                              int64_t /*now_ms*/,
                                                              const std::string& /*text*/,
                                                              int /*limit*/) {
    return std::vector<int64_t>{};
  }

  // Several lobby instances on one database. The defaults describe a store that one lobby has
  // to itself: nobody else changes its matches, and it owns every one.
  //
  // Starts announcing this instance's changes to the others and listening for theirs.
  virtual absl::Status StartPeers(PeerHandlers /*handlers*/) { return absl::OkStatus(); }
  // Stops calling the handlers: none runs, or is still running, once this returns (the lobby
  // they post to is going away). A handler must not call back into the store.
  virtual void StopPeers() {}
  // Live lobby instances other than this one, as far as the store can tell.
  virtual absl::StatusOr<int> Peers() { return 0; }
  // Ownership of a match's timed work (asking its bots, flagging its clocks): at most one
  // instance owns a match; ownership dies with its holder. True when this instance owns it now.
  virtual absl::StatusOr<bool> Own(int64_t /*match_id*/) { return true; }
  virtual void Disown(int64_t /*match_id*/) {}
  // Gives up every ownership and tells the other instances to claim them.
  virtual void DisownAll() {}
  // Ownerships taken now belong to this epoch; it changes when they are all lost at once.
  virtual int64_t OwnerEpoch() { return 0; }
  // Takes ownership of up to `limit` active matches with timed work that no instance owns.
  virtual absl::StatusOr<std::vector<int64_t>> ClaimOrphans(int /*limit*/) {
    return std::vector<int64_t>{};
  }
  // Moves the start of the turn at `ply` of an active match to `turn_started_ms` (later only):
  // time given back to the side to move. The other instances reload the match.
  virtual absl::Status GiveBackTurn(int64_t /*match_id*/, int /*ply*/,
                                    int64_t /*turn_started_ms*/) {
    return absl::OkStatus();
  }
  // Notes that this instance asks a bot for `ply` of the match; true when another live
  // instance already asked for the same ply (which ownership should make impossible).
  virtual absl::StatusOr<bool> RecordBotRequest(int64_t /*match_id*/, int /*ply*/) { return false; }
  virtual PeerCounters peer_counters() const { return {}; }

  // The player of a bot level ("bot:LEVEL"), made on first use.
  virtual absl::StatusOr<int64_t> BotPlayer(const std::string& /*level*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // A player's matches, newest first (ids below `before_id` when it is not 0).
  virtual absl::StatusOr<std::vector<MatchRecord>> PlayerMatches(int64_t /*player_id*/,
                                                                 const std::string& /*game*/,
                                                                 int64_t /*before_id*/,
                                                                 int /*limit*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
  // Gives each bot level's player ("bot:LEVEL", made when missing) the rating `seeds` has for
  // it in its game, where that player has no rating there yet or one without games (so a
  // rerun ladder reaches the bots that have not played); a rating that games have moved stays.
  // Safe to run from every instance at every start.
  virtual absl::Status SeedBotRatings(const std::vector<BotLevelRating>& /*seeds*/) {
    return absl::OkStatus();
  }
  // Every bot level's rating in every game it has one in, with its games.
  virtual absl::StatusOr<std::vector<BotLevelRating>> BotLevelRatings() {
    return std::vector<BotLevelRating>{};
  }
  // Post-game analyses, one per finished match: claimed by one request (the others wait for its
  // result), stored once done. Only a store shared by every instance has them.
  // Claims the analysis of a match for `holder`, unless it is stored already (then returned) or
  // another holder claimed or renewed it less than `lease_ms` ago (busy).
  virtual absl::StatusOr<AnalysisClaim> ClaimAnalysis(int64_t /*match_id*/,
                                                      const std::string& /*holder*/,
                                                      int64_t /*lease_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no analyses");
  }
  // Keeps the holder's claim alive.
  virtual absl::Status RenewAnalysis(int64_t /*match_id*/, const std::string& /*holder*/) {
    return absl::OkStatus();
  }
  // Stores the holder's finished analysis (`result`: JSON text).
  virtual absl::Status StoreAnalysis(int64_t /*match_id*/, const std::string& /*holder*/,
                                     const std::string& /*result*/) {
    return absl::UnimplementedError("this lobby's store keeps no analyses");
  }
  // Gives up the holder's claim (its analysis failed), for the next request to take.
  virtual void ReleaseAnalysis(int64_t /*match_id*/, const std::string& /*holder*/) {}
  // The stored analysis of a match, if there is one.
  virtual absl::StatusOr<std::optional<std::string>> LoadAnalysis(int64_t /*match_id*/) {
    return std::optional<std::string>();
  }
  // The best settled ratings of `game`.
  virtual absl::StatusOr<std::vector<LeaderboardRow>> Leaderboard(const std::string& /*game*/,
                                                                  int /*limit*/) {
    return absl::UnimplementedError("this lobby's store keeps no players");
  }
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_STORE_H_
