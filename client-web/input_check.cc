#include "client-web/input_check.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/log_text.h"
#include "engine/registry/registry.h"

namespace ply::web {
namespace {

using nlohmann::json;

absl::string_view View(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status Bad(std::string_view what) { return absl::InvalidArgumentError(std::string(what)); }

// A game name the client sent, quoted in the error it gets back: cut short, control bytes
// escaped (bytes that are not UTF-8 become U+FFFD when the answer is written).
std::string EchoGame(std::string_view name) {
  return absl::StrCat("'", EchoBounded(absl::string_view(name.data(), name.size()), 32), "'");
}

bool AllOf(std::string_view s, std::string_view extra) {
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && extra.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The string member `key` of `body`, "" when absent; an error when it is there but not a string
// or longer than `max`.
// A key the request does not know is refused rather than dropped: "casual" was once read by the
// pairing request only, and a casual game created from the page was rated.
absl::Status OnlyKnownKeys(const json& body, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return Bad(absl::StrCat("'", EchoBounded(View(key), 24), "' is not a field of this request"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StringField(const json& body, const char* key, size_t max) {
  if (!body.contains(key) || body[key].is_null()) return std::string();
  if (!body[key].is_string()) return Bad(absl::StrCat("'", key, "' must be a string"));
  std::string value = body[key].get<std::string>();
  if (value.size() > max) return Bad(absl::StrCat("'", key, "' is too long"));
  return value;
}

// The integer member `key`, `fallback` when absent; an error outside [lo, hi].
absl::StatusOr<int64_t> IntField(const json& body, const char* key, int64_t lo, int64_t hi,
                                 int64_t fallback) {
  if (!body.contains(key) || body[key].is_null()) return fallback;
  if (!body[key].is_number_integer())
    return Bad(absl::StrCat("'", key, "' must be a whole number"));
  const int64_t v = body[key].get<int64_t>();
  if (v < lo || v > hi) return Bad(absl::StrCat("'", key, "' must be from ", lo, " to ", hi));
  return v;
}

absl::StatusOr<int64_t> Decimal(std::string_view text, int64_t lo, int64_t hi, const char* what) {
  int64_t v = 0;
  if (text.empty() || text.size() > 16 || !AllOf(text, "") || !absl::SimpleAtoi(View(text), &v) ||
      v < lo || v > hi) {
    return Bad(absl::StrCat(what, " must be a number from ", lo, " to ", hi));
  }
  return v;
}

// The game and its options: {"game", "options": {name: value}} into `spec`; the game's info.
absl::StatusOr<const GameInfo*> SpecField(const json& body, v1::GameSpec* spec) {
  absl::StatusOr<std::string> game = StringField(body, "game", 32);
  if (!game.ok()) return game.status();
  const GameInfo* info = FindGame(*game);
  if (info == nullptr) return Bad(absl::StrCat("no game ", EchoGame(*game)));
  spec->set_name(*game);
  if (body.contains("options") && !body["options"].is_null()) {
    const json& options = body["options"];
    if (!options.is_object() || options.size() > 16) return Bad("'options' must be an object");
    for (const auto& [name, value] : options.items()) {
      bool known = false;
      for (const OptionInfo& o : info->options) known = known || o.name == name;
      if (!known) return Bad(absl::StrCat(info->title, " has no option '", name, "'"));
      if (!value.is_string() || value.get<std::string>().size() > 256 ||
          !AllOf(value.get<std::string>(), "+-_,.:")) {
        return Bad(absl::StrCat("option '", name, "' must be a short text"));
      }
      (*spec->mutable_options())[name] = value.get<std::string>();
    }
  }
  return info;
}

// {"clock": {"initial_s", "increment_s"} | null} into the request's time control.
template <class Request>
absl::Status ClockField(const json& body, Request* request) {
  if (!body.contains("clock") || body["clock"].is_null()) return absl::OkStatus();
  const json& clock = body["clock"];
  if (!clock.is_object()) return Bad("'clock' must be an object");
  if (absl::Status s = OnlyKnownKeys(clock, {"initial_s", "increment_s"}); !s.ok()) return s;
  absl::StatusOr<int64_t> initial = IntField(clock, "initial_s", 10, 3 * 3600, 300);
  if (!initial.ok()) return initial.status();
  absl::StatusOr<int64_t> increment = IntField(clock, "increment_s", 0, 600, 0);
  if (!increment.ok()) return increment.status();
  request->mutable_time_control()->set_initial_ms(*initial * 1000);
  request->mutable_time_control()->set_increment_ms(*increment * 1000);
  return absl::OkStatus();
}

// A list's `limit=`: 20 when absent, else 1..`hi`.
absl::StatusOr<int64_t> Limit(std::string_view text, int64_t hi) {
  if (text.empty()) return 20;
  return Decimal(text, 1, hi, "limit");
}

// `casual` (true, false or absent: rated where the match can be) into `request`.
template <typename Request>
absl::Status CasualField(const json& body, Request* request) {
  if (body.contains("casual") && !body["casual"].is_null()) {
    if (!body["casual"].is_boolean()) return Bad("'casual' must be true or false");
    request->set_casual(body["casual"].get<bool>());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> MatchId(std::string_view text) {
  return Decimal(text, 1, int64_t{1} << 53, "a match number");
}

absl::StatusOr<int> PlyCount(std::string_view text) {
  absl::StatusOr<int64_t> v = Decimal(text, 0, 100000, "a ply count");
  if (!v.ok()) return v.status();
  return static_cast<int>(*v);
}

absl::Status CheckMove(std::string_view move) {
  if (move.empty()) return Bad("no move");
  if (move.size() > kMaxMoveText) return Bad("that move is too long");
  if (!AllOf(move, "-x:+")) return Bad("a move holds only letters, digits and - x : +");
  return absl::OkStatus();
}

absl::Status CheckName(std::string_view name) {
  if (name.size() > kMaxName) return Bad(absl::StrCat("a name has at most ", kMaxName, " bytes"));
  for (unsigned char c : name) {
    // Bytes from 0x80 are UTF-8 letters; the page escapes whatever it shows, but a name that
    // looks like markup or holds control characters is refused anyway.
    if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&' || c == '"') {
      return Bad("a name may not hold control characters or < > & \"");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> BearerToken(std::string_view header) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (header.substr(0, kPrefix.size()) != kPrefix) {
    return absl::UnauthenticatedError("this needs your seat's token (you hold no seat here)");
  }
  std::string_view token = header.substr(kPrefix.size());
  if (token.size() < 16 || token.size() > 128 || !AllOf(token, "-_")) {
    return absl::UnauthenticatedError("that is not a seat token");
  }
  return std::string(token);
}

absl::StatusOr<std::string> PlayerKey(std::string_view header) {
  constexpr std::string_view kPrefix = "Player ";
  if (header.substr(0, kPrefix.size()) != kPrefix) return std::string();
  std::string_view key = header.substr(kPrefix.size());
  if (key.size() < 16 || key.size() > 128 || !AllOf(key, "-_")) {
    return absl::UnauthenticatedError(
        "that is not a player key: log in again, or paste the key `ply login` showed you");
  }
  return std::string(key);
}

absl::Status CheckPlayerName(std::string_view name) {
  // A person's name (letters, digits, _ - .) or a bot level's ("bot:hard").
  if (name.size() < 2 || name.size() > 32 || !AllOf(name, "_-.:")) {
    return Bad("a player's name has 2 to 24 letters, digits, '_', '-' or '.'");
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::LoginRequest> LoginRequest(const json& body) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (absl::Status s = OnlyKnownKeys(body, {"name"}); !s.ok()) return s;
  absl::StatusOr<std::string> name = StringField(body, "name", kMaxName);
  if (!name.ok()) return name.status();
  if (!name->empty()) {
    if (absl::Status s = CheckPlayerName(*name); !s.ok()) return s;
  }
  v1::LoginRequest request;
  request.set_name(*name);
  return request;
}

absl::StatusOr<v1::PairRequest> PairRequest(const json& body) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (absl::Status s = OnlyKnownKeys(body, {"game", "options", "clock", "casual"}); !s.ok()) {
    return s;
  }
  v1::PairRequest request;
  absl::StatusOr<const GameInfo*> info = SpecField(body, request.mutable_spec());
  if (!info.ok()) return info.status();
  if (absl::Status s = ClockField(body, &request); !s.ok()) return s;
  if (absl::Status s = CasualField(body, &request); !s.ok()) return s;
  return request;
}

absl::StatusOr<v1::ListPlayerMatchesRequest> PlayerMatchesRequest(std::string_view name,
                                                                  const ListQuery& query) {
  if (absl::Status s = CheckPlayerName(name); !s.ok()) return s;
  v1::ListPlayerMatchesRequest request;
  request.set_name(std::string(name));
  if (!query.game.empty()) {
    if (FindGame(query.game) == nullptr) return Bad(absl::StrCat("no game ", EchoGame(query.game)));
    request.set_game(query.game);
  }
  absl::StatusOr<int64_t> limit = Limit(query.limit, kMaxPageSize);
  if (!limit.ok()) return limit.status();
  request.set_page_size(static_cast<int32_t>(*limit));
  if (!query.page.empty()) {
    if (query.page.size() > 32 || !AllOf(query.page, "")) return Bad("a bad page token");
    request.set_page_token(query.page);
  }
  return request;
}

absl::StatusOr<v1::LeaderboardRequest> LeaderboardRequest(const ListQuery& query) {
  if (FindGame(query.game) == nullptr) return Bad("name a game: leaderboard?game=connect4");
  v1::LeaderboardRequest request;
  request.set_game(query.game);
  absl::StatusOr<int64_t> limit = Limit(query.limit, 100);
  if (!limit.ok()) return limit.status();
  request.set_limit(static_cast<int32_t>(*limit));
  return request;
}

absl::StatusOr<v1::CreateMatchRequest> CreateRequest(const json& body) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (absl::Status s =
          OnlyKnownKeys(body, {"game", "options", "seats", "take_seat", "name", "clock", "casual"});
      !s.ok()) {
    return s;
  }
  v1::CreateMatchRequest request;
  absl::StatusOr<const GameInfo*> info = SpecField(body, request.mutable_spec());
  if (!info.ok()) return info.status();
  if (!body.contains("seats") || !body["seats"].is_array() || body["seats"].size() != 2) {
    return Bad("'seats' must list the two seats");
  }
  for (const json& seat : body["seats"]) {
    if (!seat.is_object()) return Bad("each seat must be an object");
    if (absl::Status s = OnlyKnownKeys(seat, {"bot", "level"}); !s.ok()) return s;
    // {"bot": "true"} made an open seat for a person.
    if (seat.contains("bot") && !seat["bot"].is_null() && !seat["bot"].is_boolean()) {
      return Bad("a seat's 'bot' must be true or false");
    }
    v1::SeatSpec* spec = request.add_seats();
    const bool bot = seat.contains("bot") && seat["bot"].is_boolean() && seat["bot"].get<bool>();
    spec->set_kind(bot ? v1::SEAT_KIND_BOT : v1::SEAT_KIND_HUMAN);
    if (bot) {
      absl::StatusOr<std::string> level = StringField(seat, "level", 16);
      if (!level.ok()) return level.status();
      if (!level->empty()) {
        bool known = false;
        for (const Difficulty& d : (*info)->levels) known = known || d.name == *level;
        if (!known) return Bad(absl::StrCat((*info)->title, " has no bot level '", *level, "'"));
      }
      spec->set_difficulty(*level);
    }
  }
  absl::StatusOr<int64_t> take = IntField(body, "take_seat", 0, 1, -1);
  if (!take.ok()) return take.status();
  if (*take >= 0) {
    if (request.seats(*take).kind() != v1::SEAT_KIND_HUMAN) return Bad("that seat is a bot's");
    request.set_take_seat(static_cast<int32_t>(*take));
  }
  absl::StatusOr<std::string> name = StringField(body, "name", kMaxName);
  if (!name.ok()) return name.status();
  if (absl::Status s = CheckName(*name); !s.ok()) return s;
  request.set_display_name(*name);
  if (absl::Status s = ClockField(body, &request); !s.ok()) return s;
  if (absl::Status s = CasualField(body, &request); !s.ok()) return s;
  return request;
}

absl::StatusOr<v1::JoinMatchRequest> JoinRequest(int64_t id, const json& body) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (absl::Status s = OnlyKnownKeys(body, {"seat", "name"}); !s.ok()) return s;
  v1::JoinMatchRequest request;
  request.set_match_id(id);
  absl::StatusOr<int64_t> seat = IntField(body, "seat", -1, 1, -1);
  if (!seat.ok()) return seat.status();
  request.set_seat(static_cast<int32_t>(*seat));
  absl::StatusOr<std::string> name = StringField(body, "name", kMaxName);
  if (!name.ok()) return name.status();
  if (absl::Status s = CheckName(*name); !s.ok()) return s;
  request.set_display_name(*name);
  return request;
}

absl::StatusOr<v1::MakeMoveRequest> MoveRequest(int64_t id, const json& body) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (absl::Status s = OnlyKnownKeys(body, {"ply", "move"}); !s.ok()) return s;
  v1::MakeMoveRequest request;
  request.set_match_id(id);
  absl::StatusOr<int64_t> ply = IntField(body, "ply", 0, 100000, -1);
  if (!ply.ok()) return ply.status();
  if (*ply < 0) return Bad("'ply' (the moves already played) is missing");
  request.set_expected_ply(static_cast<int32_t>(*ply));
  absl::StatusOr<std::string> move = StringField(body, "move", kMaxMoveText);
  if (!move.ok()) return move.status();
  if (absl::Status s = CheckMove(*move); !s.ok()) return s;
  request.set_move(*move);
  return request;
}

absl::Status NoFieldsRequest(const json& body, std::string_view what) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (body.empty()) return absl::OkStatus();
  return Bad(absl::StrCat("'", EchoBounded(View(body.begin().key()), 24),
                          "' is not a field of this request: ", View(what), " takes none"));
}

absl::StatusOr<bool> SwitchRequest(const json& body, const char* key, bool fallback) {
  if (!body.is_object()) return Bad("the request must be a JSON object");
  if (body.size() > 1 || (body.size() == 1 && !body.contains(key))) {
    return Bad(absl::StrCat("this request takes only '", key, "'"));
  }
  if (!body.contains(key) || body[key].is_null()) return fallback;
  if (!body[key].is_boolean()) return Bad(absl::StrCat("'", key, "' must be true or false"));
  return body[key].get<bool>();
}

absl::StatusOr<v1::ListMatchesRequest> ListRequest(const ListQuery& query) {
  v1::ListMatchesRequest request;
  if (query.status == "waiting") {
    request.set_status(v1::MATCH_STATUS_WAITING);
  } else if (query.status == "active") {
    request.set_status(v1::MATCH_STATUS_ACTIVE);
  } else if (query.status == "finished") {
    request.set_status(v1::MATCH_STATUS_FINISHED);
  } else if (!query.status.empty()) {
    return Bad("status is waiting, active or finished");
  }
  if (!query.game.empty()) {
    if (FindGame(query.game) == nullptr) return Bad(absl::StrCat("no game ", EchoGame(query.game)));
    request.set_game(query.game);
  }
  absl::StatusOr<int64_t> limit = Limit(query.limit, kMaxPageSize);
  if (!limit.ok()) return limit.status();
  request.set_page_size(static_cast<int32_t>(*limit));
  request.set_open_seats(query.open == "1");
  if (!query.page.empty()) {
    if (query.page.size() > 128 || !AllOf(query.page, "-_=")) return Bad("a bad page token");
    request.set_page_token(query.page);
  }
  return request;
}

}  // namespace ply::web
