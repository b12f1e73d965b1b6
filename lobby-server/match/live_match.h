// A match as one lobby instance holds it in memory: the stored record, the game replayed from
// it, and what this instance does for it now (watchers, a bot request, a flag check). Every
// part of the lobby reads and writes it under its `mu`; the cache (match/cache.h) decides when
// it is loaded, reloaded and forgotten.
#ifndef PLY_LOBBY_SERVER_MATCH_LIVE_MATCH_H_
#define PLY_LOBBY_SERVER_MATCH_LIVE_MATCH_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/time/time.h"
#include "bot-service/bot_client.h"
#include "engine/registry/any_game.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

// One WatchMatch stream as the lobby sees it.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Queues `event` (the sink numbers it). False when the sink is closed or cannot keep up; the
  // lobby then forgets it.
  virtual bool Push(v1::MatchEvent event) = 0;
  // Ends the stream once the queued events are delivered.
  virtual void Close(const absl::Status& status) = 0;
  // The watcher stays after the end for the rematch events (WatchMatchRequest.follow_rematch).
  virtual bool FollowsRematch() const { return false; }
  // The stream is over (the client left): nothing more can reach it.
  virtual bool Closed() { return false; }
};

struct LiveMatch {
  std::mutex mu;
  // A move of this match is being committed without `mu` held (Lobby::TryMakeMove): until it
  // lands, everyone else waits on `settled`, so nobody sees the match half-way.
  bool committing = false;
  std::condition_variable settled;
  // Its first load failed and it left the map; a caller that still holds it must look again
  // (else a watcher could register on a copy nobody updates).
  bool dropped = false;
  // Memory is as the database has it and nothing is in flight: usable without waiting.
  bool Settled() const { return loaded && !stale && !committing; }
  int64_t id = 0;
  // False until the first load; true again when memory may disagree with the database.
  bool loaded = false;
  bool stale = false;
  MatchRecord rec;
  const GameInfo* info = nullptr;
  std::unique_ptr<AnyGame> game;
  std::vector<std::shared_ptr<EventSink>> watchers;
  // The ply a bot request is out for (-1: none), and how its attempts went (bots/driver.h).
  int bot_ply = -1;
  int bot_attempts = 0;
  int64_t bot_first_failure_ms = 0;
  std::shared_ptr<BotClient::PendingMove> bot_call;
  // The ply whose bot move waits for a place of its client's (-1: none), and since when: under
  // a clock that wait is given back to the bot (bots/driver.h's client_bot_calls).
  int bot_wait_ply = -1;
  int64_t bot_wait_since_ms = 0;
  // The ply whose flag check is scheduled (-1: none).
  int flag_ply = -1;
  // The ply at which a bot seat last declined a draw (-1: none): the same position is not
  // searched for the same person's offer again (each offer cost a bot search at a person's
  // priority, up to a second).
  int draw_declined_ply = -1;
  // This instance drives the match's timed work (its bot, its clock's flag).
  bool owned = false;
  // The store's ownership epoch when it was taken: losing that epoch's ownerships (a broken
  // owner connection) does not touch ones taken since.
  int64_t owned_epoch = 0;
  // A ClockTick is scheduled.
  bool clock_ticking = false;
  // Presence of each seat as this instance last looked (Lobby::PresenceTick), by seat: known
  // once looked at; present, or away since `since_ms` (last seen; 0: never).
  struct Presence {
    bool known = false;
    bool present = false;
    int64_t since_ms = 0;
  };
  std::vector<Presence> presence;
  // The lobby's claim bound for untimed matches (0: no claims), shown in the match.
  int64_t claim_after_ms = 0;
  // The watchers have been told that the match is over (those who follow the rematch stay).
  bool end_told = false;

  // The seat to move, or -1 when the match is not being played.
  int ToMove() const {
    return rec.status == MatchStatus::kActive && game != nullptr ? game->SideToMove() : -1;
  }
};

// What a cached copy showed before a reload replaced it, so that its watchers can be told what
// changed (events/fanout.h, CatchUp).
struct PastCopy {
  bool loaded = false;
  int ply = 0;
  MatchVersion version;
  // Each seat's stored clock (0 without clocks).
  std::vector<int64_t> clocks;
  std::unique_ptr<AnyGame> game;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_MATCH_LIVE_MATCH_H_
