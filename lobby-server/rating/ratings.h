// What the end of a rated match does to its players' ratings: which results count, who moves,
// and by how much (Glicko-2). The store calls RateResult inside the transaction that ends the
// match, with the ratings it has locked, and stores what it returns, so that a result moves
// both ratings or neither.
//
// The rules, each against an attack on the scale:
// - A result that says nothing about anyone's strength (no result, cancelled, aborted, a bot
//   that could not move) moves no rating; nor does any result before each side has moved (a
//   resignation or an agreed draw at move 0 rated a game nobody played: an account farmed
//   1500 -> 1964 in 60 such games, 1.3 s, against a second account of its own).
// - Two people's rated games against each other move their ratings kRatedGamesPerPairPerDay
//   times in 24 hours, no more: the same farm with a few moves played before the resignation
//   needs a new account (registrations are bounded per address) every few games, and against
//   fresh accounts a win is worth a few points. Games against a bot level, which is what it
//   is whoever plays it, are not counted.
// - One player on both seats (a match played against oneself) moves no rating: otherwise the
//   winner's update is written last and a player farms points by resigning to themselves.
// - A newcomer to a game starts at 1500, or at its game's best bot level where the game's whole
//   scale lies below that (NewcomerRating): Tic-Tac-Toe's perfect player is rated about 900, so
//   a newcomer at 1500 who drew it, the best anyone can do there, lost 296 points and could
//   never win them back.
// - A bot level is a fixed point of the scale: its rating is the one its game's calibration
//   ladder measured, and games against people count in its record but never move it, so that
//   throwaway resignations cannot push a level up the scale (its rating drives the bot offers
//   of pairing and what `ply games` shows). The person's rating moves as against anyone.
#ifndef PLY_LOBBY_SERVER_RATING_RATINGS_H_
#define PLY_LOBBY_SERVER_RATING_RATINGS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "lobby-server/rating/glicko2.h"

namespace ply::lobby {

struct MatchResult;
struct MatchRecord;

// A seat of a rated match as the store read it, its rating locked.
struct RatedSeat {
  int64_t player_id = 0;
  bool bot = false;
  Glicko before;
};

// What a seat's row becomes: its rating after (the same as before for a bot level) and the
// score the game counts for it in the player's record.
struct SeatRating {
  Glicko after;
  // 1 win, 0.5 draw, 0 loss.
  double score = 0;
};

// Whether the player `player_id` (0: a guest) may take a seat of `match`: never a second seat
// of a rated match (FAILED_PRECONDITION, saying which seat it holds). A casual match may be
// played against oneself.
absl::Status CheckSeatOfRatedMatch(const MatchRecord& match, int64_t player_id);

inline constexpr int kRatedGamesPerPairPerDay = 5;

// Where a player with no rating in `game` yet starts: 1500, or the rating of the game's
// strongest level on its calibration ladder where that is lower (a game small enough to be
// played perfectly has a ceiling: no one starts above it). 1500 for a game unknown here.
double NewcomerRating(std::string_view game);

// Whether `result`, reached after `plies` moves, says anything about the players' strength.
bool ResultCounts(const MatchResult& result, int plies);

// Why a rated match's `result`, after `plies` moves, moves no rating, for people ("not rated:
// the game ended before each side had moved"); "" when it counts, and for no result at all
// (cancelled, aborted), which says so itself. (The daily bound of a pair's rated games is the
// store's to know: it keeps PairBoundNote in MatchResult::rating_note.)
std::string UnratedNote(const MatchResult& result, int plies);

// The rating note of a result the pair's bound kept from moving their ratings.
std::string PairBoundNote();

// Both seats' new ratings, or nothing when the result moves no rating (see the rules above).
// `pair_games_today`: the rated games between these two people that moved their ratings in the
// last 24 hours (the store counts them; 0 when a seat is a bot).
std::optional<std::array<SeatRating, 2>> RateResult(const std::array<RatedSeat, 2>& seats,
                                                    const MatchResult& result, int plies,
                                                    int pair_games_today = 0);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_RATING_RATINGS_H_
