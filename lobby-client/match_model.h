// A client's picture of one match, kept up to date from the lobby's WatchMatch events, with the
// game replayed locally (for its legal moves and its rendering), and the rules both clients (the
// terminal and the web page) apply to what they show of it.
#ifndef PLY_LOBBY_CLIENT_MATCH_MODEL_H_
#define PLY_LOBBY_CLIENT_MATCH_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/registry/any_game.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

class MatchModel {
 public:
  // A whole match (a snapshot, a resync, an RPC's reply). Clocks count from `received`.
  absl::Status Reset(const v1::Match& match, absl::Time received);
  // One WatchMatch event. A move already seen is ignored; a move that skips one is an error (the
  // caller then reloads the match).
  absl::Status Apply(const v1::MatchEvent& event, absl::Time received);

  bool loaded() const { return game_ != nullptr; }
  const v1::Match& match() const { return match_; }
  const AnyGame& game() const { return *game_; }
  int plies() const { return match_.moves_size(); }
  bool over() const { return match_.status() == v1::MATCH_STATUS_FINISHED; }
  bool active() const { return match_.status() == v1::MATCH_STATUS_ACTIVE; }
  // A bot seat is to move in an active match.
  bool BotToMove() const;
  // Time left on `seat`'s clock at `now` (the side to move's clock runs); 0 without clocks.
  int64_t ClockMs(int seat, absl::Time now) const;
  // "Red", or "seat 1" when the lobby did not say.
  std::string Side(int seat) const;
  // "alice", "bot (hard)", or "(open)".
  std::string Player(int seat) const;
  // The side and who plays it in one set of parentheses, with `lead` first in them: "White (bot
  // hard, 1204)", "Red (seat 1, alice, 1500?)". Side(s) + " (" + Player(s) + ")" nested them:
  // "White (bot (hard) (1204))".
  std::string SideAndPlayer(int seat, std::string_view lead = "") const;
  // A bot's answer to the last draw offer ("Yellow (bot, hard) declines the draw: ..."), until
  // the next move or offer; "" for none.
  const std::string& draw_answer() const { return draw_answer_; }

 private:
  v1::Match match_;
  std::unique_ptr<AnyGame> game_;
  absl::Time clocks_at_;
  std::string draw_answer_;
};

// When the opponent of `seat` may claim (ms since the Unix epoch): `seat` is away and to move
// in an untimed match that takes claims, and every side has moved (before that, the lobby aborts
// instead); 0 otherwise.
int64_t ClaimAtMs(const v1::Match& match, int seat);
// Whether a viewer sees what the bots' searches saw (scores, depths, principal variations): a
// spectator always, a player (`viewer_plays`) only once the match is over, so that nobody gets
// the engine's verdict on their own game while it runs. The lobby itself sends none of it while
// a person plays (lobby-server/convert.h, ThinkingHidden); this is the clients' half of the rule,
// for what they already hold.
bool ShowsBotThinking(const v1::Match& match, bool viewer_plays);

// Whether the match ended with a result, a win or a draw: one cancelled (nobody came) or aborted
// (a side never moved) has none, whatever its winner field says.
bool HasResult(const v1::Match& match);

}  // namespace ply::client

#endif  // PLY_LOBBY_CLIENT_MATCH_MODEL_H_
