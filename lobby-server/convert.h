// Conversion between the lobby's records (storage/store.h, match/live_match.h) and the ply.v1
// messages its callers see. The enums share their values with the proto's, so most of this is
// field by field; the clocks shown are those running at the time the caller passes.
#ifndef PLY_LOBBY_SERVER_CONVERT_H_
#define PLY_LOBBY_SERVER_CONVERT_H_

#include <cstdint>
#include <string>

#include "engine/registry/any_game.h"
#include "lobby-server/match/live_match.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/bot.pb.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

// The whole match as GetMatch answers it, clocks as they read at `now_ms`.
v1::Match ToProto(const LiveMatch& live, int64_t now_ms);
// A match as ListMatches lists it: no moves, clocks as stored.
v1::MatchSummary SummaryToProto(const MatchRecord& rec);
v1::GameRating RatingToProto(const GameRatingRecord& rating);
// With `hide_thinking`, a bot's move carries only which instance chose it: not its score,
// depth, nodes or principal variation (ThinkingHidden).
v1::MoveRecord MoveToProto(const MoveRecord& move, bool hide_thinking = false);
// Whether the bots' thinking is kept from everyone: while a match with a person in it is being
// played (or waits), what a bot's search saw would tell that person the bot's plan and how it
// judges the position. It is shown once the match is over. Bot-only matches show it live.
bool ThinkingHidden(const MatchRecord& match);
// The result of a finished match, with the note of a rated one its result does not rate.
v1::MatchResult ResultToProto(const MatchRecord& match);
// What a bot's search saw, as MoveRecord::bot_json keeps it.
std::string BotThinkingJson(const v1::ChooseMoveResponse& reply);
// The name of `seat`'s side in `info`'s game ("White", "X"), or "seat N" when it has none.
std::string SideName(const GameInfo* info, int seat);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_CONVERT_H_
