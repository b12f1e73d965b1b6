// Every value a browser sends, checked before anything reaches the lobby: numbers in range, names
// and moves short and of the characters they can hold, games and options the engine knows, seat
// tokens of the lobby's shape. A bad value is refused here with a sentence for people, so the
// lobby sees only well-formed requests.
#ifndef PLY_CLIENT_WEB_INPUT_CHECK_H_
#define PLY_CLIENT_WEB_INPUT_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "ply/v1/lobby.pb.h"

namespace ply::web {

inline constexpr size_t kMaxMoveText = 64;
inline constexpr size_t kMaxName = 32;
inline constexpr int kMaxPageSize = 50;

// A match id from a path segment: decimal, 1 .. 2^53 (what JavaScript numbers hold exactly).
absl::StatusOr<int64_t> MatchId(std::string_view text);
// A ply count (Last-Event-ID, after=, expected ply): decimal, 0 .. 100000.
absl::StatusOr<int> PlyCount(std::string_view text);
// A move as the games write it: letters, digits and - x : + only.
absl::Status CheckMove(std::string_view move);
// A display name: printable, no control characters or markup, at most kMaxName bytes.
absl::Status CheckName(std::string_view name);
// The token from "Authorization: Bearer <token>": letters, digits, - and _ only, 16..128 long.
absl::StatusOr<std::string> BearerToken(std::string_view header);

// "Authorization: Player <key>": the player key of a browser logged in as a player ("" when the
// header is absent or names another scheme, such as a seat's Bearer token).
absl::StatusOr<std::string> PlayerKey(std::string_view header);
// A player's name as a path holds it: 2..32 letters, digits and _ - . : ("bot:hard").
absl::Status CheckPlayerName(std::string_view name);
// POST /api/login: {"name"} (empty with a player key: who the key is).
absl::StatusOr<v1::LoginRequest> LoginRequest(const nlohmann::json& body);
// POST /api/pair: {"game", "options", "clock": {...} | null, "casual": bool}.
absl::StatusOr<v1::PairRequest> PairRequest(const nlohmann::json& body);

// POST /api/matches: {"game", "options": {name: value}, "seats": [{"bot": bool, "level"}] (two),
// "take_seat": 0|1|null, "name", "clock": {"initial_s", "increment_s"} | null}.
absl::StatusOr<v1::CreateMatchRequest> CreateRequest(const nlohmann::json& body);
// POST /api/matches/ID/join: {"seat": 0|1|-1, "name"}.
absl::StatusOr<v1::JoinMatchRequest> JoinRequest(int64_t id, const nlohmann::json& body);
// POST /api/matches/ID/move: {"ply": N, "move": "..."}.
absl::StatusOr<v1::MakeMoveRequest> MoveRequest(int64_t id, const nlohmann::json& body);
// POST /api/matches/ID/claim: {"draw": bool}; POST /api/matches/ID/rematch: {"decline": bool};
// POST /api/matches/ID/presence: {"here": bool}. The one switch `key` (`fallback` when absent).
absl::StatusOr<bool> SwitchRequest(const nlohmann::json& body, const char* key, bool fallback);
// POST /api/matches/ID/resign and /draw take no fields: a body, if any, is {} (the gateway
// ignored it, and {"decline": true} to the draw route accepted the opponent's offer).
// `what` names the call in the refusal ("a draw offer").
absl::Status NoFieldsRequest(const nlohmann::json& body, std::string_view what);
// GET /api/matches?status=&game=&limit=&open=&page=.
struct ListQuery {
  std::string status;
  std::string game;
  std::string limit;
  std::string open;
  std::string page;
};
absl::StatusOr<v1::ListMatchesRequest> ListRequest(const ListQuery& query);
// GET /api/players/NAME/matches?game=&limit=&page=.
absl::StatusOr<v1::ListPlayerMatchesRequest> PlayerMatchesRequest(std::string_view name,
                                                                  const ListQuery& query);
// GET /api/leaderboard?game=&limit= (1..100).
absl::StatusOr<v1::LeaderboardRequest> LeaderboardRequest(const ListQuery& query);

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_INPUT_CHECK_H_
