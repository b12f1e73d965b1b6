// What a client's screen shows for players new to a game: where they start (the lobby's
// NewcomerRating, lower than 1500 where the game's whole scale is) and where one rated game
// between two of them takes each, so that tests of screens follow the rules instead of
// repeating their numbers.
#ifndef PLY_TESTS_NEWCOMER_RATING_H_
#define PLY_TESTS_NEWCOMER_RATING_H_

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "lobby-server/rating/glicko2.h"
#include "lobby-server/rating/ratings.h"

namespace ply::testing {

// A newcomer's rating in `game`, as shown ("896").
inline std::string NewcomerText(const std::string& game) {
  return absl::StrCat(std::lround(lobby::NewcomerRating(game)));
}

// A newcomer's rating after one rated game in `game` against another newcomer: `score` 1 for a
// win, 0.5 a draw, 0 a loss.
inline std::string AfterFirstGameText(const std::string& game, double score) {
  const lobby::Glicko start{.rating = lobby::NewcomerRating(game)};
  return absl::StrCat(
      std::lround(lobby::GlickoUpdate(start, {{.opponent = start, .score = score}}).rating));
}

}  // namespace ply::testing

#endif  // PLY_TESTS_NEWCOMER_RATING_H_
