#include "lobby-server/rating/ratings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

double NewcomerRating(std::string_view game) {
  constexpr double kStart = 1500;
  const GameInfo* info = ply::FindGame(game);
  if (info == nullptr || info->ladder.empty()) return kStart;
  double best = 0;
  for (const LadderRating& r : info->ladder.ratings) best = std::max(best, r.rating);
  return std::min(kStart, best);
}

absl::Status CheckSeatOfRatedMatch(const MatchRecord& match, int64_t player_id) {
  if (!match.rated || player_id == 0) return absl::OkStatus();
  for (size_t i = 0; i < match.seats.size(); ++i) {
    if (match.seats[i].player_id != player_id) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "you already hold seat ", i + 1, " of match ", match.id,
        ", a rated match: one player cannot hold both seats of a rated match (a casual one, "
        "--casual, may be played against yourself)"));
  }
  return absl::OkStatus();
}

bool ResultCounts(const MatchResult& result, int plies) {
  // Each side has moved once (two seats take turns).
  if (plies < 2) return false;
  switch (result.reason) {
    case EndReason::kNone:
    case EndReason::kBotFailure:
    case EndReason::kCancelled:
    case EndReason::kAborted:
      return false;
    case EndReason::kRules:
    case EndReason::kResignation:
    case EndReason::kTimeout:
    case EndReason::kAgreement:
    case EndReason::kAbandoned:
      return true;
  }
  return false;
}

std::string PairBoundNote() {
  return absl::StrCat("not rated: these two players have had ", kRatedGamesPerPairPerDay,
                      " rated games against each other in the last 24 hours");
}

std::string UnratedNote(const MatchResult& result, int plies) {
  if (!result.rating_note.empty()) return result.rating_note;
  switch (result.reason) {
    case EndReason::kNone:
    case EndReason::kCancelled:
    case EndReason::kAborted:
      return "";
    case EndReason::kBotFailure:
      return "not rated: the bot could not move";
    default:
      break;
  }
  return ResultCounts(result, plies) ? "" : "not rated: the game ended before each side had moved";
}

std::optional<std::array<SeatRating, 2>> RateResult(const std::array<RatedSeat, 2>& seats,
                                                    const MatchResult& result, int plies,
                                                    int pair_games_today) {
  if (!ResultCounts(result, plies)) return std::nullopt;
  if (seats[0].player_id == 0 || seats[1].player_id == 0) return std::nullopt;
  if (seats[0].player_id == seats[1].player_id) return std::nullopt;
  if (!seats[0].bot && !seats[1].bot && pair_games_today >= kRatedGamesPerPairPerDay) {
    return std::nullopt;
  }
  std::array<SeatRating, 2> out;
  for (int i = 0; i < 2; ++i) {
    out[i].score = result.winner < 0 ? 0.5 : result.winner == i ? 1.0 : 0.0;
    out[i].after = seats[i].bot
                       ? seats[i].before
                       : GlickoUpdate(seats[i].before,
                                      {{.opponent = seats[1 - i].before, .score = out[i].score}});
  }
  return out;
}

}  // namespace ply::lobby
