// The events of a match and who hears them: the watchers this instance streams to, each event
// built once and pushed to all of them in the same order, and the replays that bring a
// watcher (new, resuming with after_ply, or on a copy that was reloaded because another
// instance moved the match on) up to date without gaps or repeats.
#ifndef PLY_LOBBY_SERVER_EVENTS_FANOUT_H_
#define PLY_LOBBY_SERVER_EVENTS_FANOUT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "engine/registry/any_game.h"
#include "lobby-server/match/live_match.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

// An event stamped `now_ms`, its payload to be filled in.
v1::MatchEvent Event(int64_t now_ms);
// The move_applied event of `mv`, with every seat's clock after it and the game after it (a
// bot's thinking left out with `hide_thinking`: ThinkingHidden).
v1::MatchEvent MoveEvent(const MoveRecord& mv, const std::vector<int64_t>& clocks,
                         const AnyGame& after, int64_t now_ms, bool hide_thinking);
// The game_over event of a finished match, with its final clocks.
v1::MatchEvent GameOverEvent(const LiveMatch& live, int64_t now_ms);
// Where the rematch of a finished match stands (the offer open, or the rematch made).
v1::MatchEvent RematchEvent(const LiveMatch& live, int64_t now_ms);
// Every seat's clock now and who is to move, for watchers that run the clocks locally.
v1::MatchEvent ClockUpdateEvent(const LiveMatch& live, int64_t now_ms);

// Pushes `event` to every watcher; one that refuses it (closed, or too far behind) is forgotten.
void Broadcast(LiveMatch& live, const v1::MatchEvent& event);
// Adds a watcher, dropping those whose streams are over: a quiet match (waiting, or over) has no
// news to tell them by, so a client that opens and cancels watches would grow the list without
// bound.
void AddWatcher(LiveMatch& live, std::shared_ptr<EventSink> sink);
// Ends every watcher's stream with `status` and forgets them.
void CloseWatchers(LiveMatch& live, const absl::Status& status);
// The move just applied to `live` (its last move), to every watcher.
void BroadcastLastMove(LiveMatch& live, int64_t now_ms);

// After a reload replaced `before` with what the database has: the watchers get the moves they
// missed as they would have seen them here, or, for any other change (a seat taken, a draw
// offered, moves that do not replay), the whole match as a resync; a change of the rematch
// offer, or a rematch made, as a rematch event.
void CatchUp(LiveMatch& live, PastCopy before, int64_t now_ms);
// A new watcher's first events: the match as it is (a snapshot), or with `after_ply` the moves
// after that ply and then a resync; then game_over and the end of the stream if it is over
// (for a watcher that follows the rematch: where the rematch stands, and the end of the stream
// once it is made). Returns whether the watcher stays for later events. OUT_OF_RANGE for a ply
// not played.
absl::StatusOr<bool> Greet(const LiveMatch& live, std::optional<int> after_ply, EventSink& sink,
                           int64_t now_ms);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_EVENTS_FANOUT_H_
