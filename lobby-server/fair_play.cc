// ply-fair-play: replays the fair-play attacks a player could try against a running lobby, as an
// ordinary client, and prints one line per attack saying whether the lobby held:
//
//   held  NAME: what was tried -> what the lobby answered
//   FAILED NAME: ...
//
// then `N passed, M failed` alone on a line; exits 1 when any attack got through. Each attack is
// bounded (seconds, at most a few hundred calls) and uses names of its own run, so reruns on the
// same database work. The attacks: a player rating itself (both seats of a rated match),
// sandbagging a bot level's rating, free accounts (registrations, and bot seats over many
// accounts of one address), bot seats through rematches, look-alike names, reading the bot's
// thinking during a match, a ghost left in the pairing queue by a dead instance (--lobby2), a
// bot game left alone (--abandon_after_s), and claiming a win against a player whose web page is
// still beating (--web).
//
// The lobby under attack must apply its per-client limits to this client (no
// --client_limit_exempt for loopback). The bounds it was started with are passed here too
// (--registrations_per_hour, --client_bot_seats, ...) so that "held" can be judged against them.
// deploy/local/fair-play starts such lobbies on the local stack's database and runs this.
//
// Example:
//   ply-fair-play --lobby=127.0.0.1:50060 --lobby2=127.0.0.1:50061 --web=127.0.0.1:8090
//       --setup_lobby=127.0.0.1:50050 --abandon_after_s=3
#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/core/flags_usage.h"
#include "ply/v1/lobby.grpc.pb.h"

ABSL_FLAG(std::string, lobby, "127.0.0.1:50050",
          "The lobby to attack (host:port); its per-client limits must apply to this client.");
ABSL_FLAG(std::string, lobby2, "",
          "A second instance on the same database, for ghost-pairing: the program prints "
          "KILL_LOBBY2_NOW and waits for whoever runs it to kill that instance. Empty: "
          "ghost-pairing is skipped.");
ABSL_FLAG(std::string, web, "",
          "ply-web (host:port) in front of --lobby, for claim-while-present; empty skips it.");
ABSL_FLAG(std::string, setup_lobby, "",
          "A lobby on the same database that exempts this client from the per-client limits "
          "(the local stack's): the players the attacks only need are registered there, so that "
          "the hourly registration bound (which free-accounts spends) does not refuse them on a "
          "rerun. Empty: --lobby.");
ABSL_FLAG(std::string, only, "", "Run only this attack (by name).");
ABSL_FLAG(int, registrations_per_hour, 10, "The attacked lobby's --client_registrations_per_hour.");
ABSL_FLAG(int, client_bot_seats, 8, "The attacked lobby's --client_bot_seats.");
ABSL_FLAG(int, address_quota_multiple, 4, "The attacked lobby's --address_quota_multiple.");
ABSL_FLAG(double, abandon_after_s, 0,
          "The attacked lobby's --abandon_after_s; abandoned-bot-game runs only when it is "
          "between 0 and 10 (it waits that long).");

namespace ply {
namespace {

using v1::LobbyService;
using Stub = LobbyService::Stub;

// An attack's outcome: it held, it got through, or it could not be tried with these flags.
enum class Outcome { kHeld, kFailed, kSkipped };

struct Verdict {
  Outcome outcome;
  std::string text;
};

Verdict Held(std::string text) { return {Outcome::kHeld, std::move(text)}; }
Verdict Failed(std::string text) { return {Outcome::kFailed, std::move(text)}; }
Verdict Skipped(std::string text) { return {Outcome::kSkipped, std::move(text)}; }
Verdict Judge(bool held, std::string text) {
  return {held ? Outcome::kHeld : Outcome::kFailed, std::move(text)};
}

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "ERROR";
  }
}

// A status as a reader of the report needs it: the code, and the lobby's sentence (shortened:
// one report line per attack).
std::string Describe(const grpc::Status& s) {
  if (s.ok()) return "OK";
  std::string message = s.error_message();
  if (message.size() > 90) message = message.substr(0, 87) + "...";
  return absl::StrCat(CodeName(s.error_code()), " (\"", message, "\")");
}

// What a call carries: a seat token (seat actions) and/or a player key (a registered player).
struct Auth {
  std::string seat_token;
  std::string player_key;
};

void Prepare(grpc::ClientContext& context, const Auth& auth, absl::Duration deadline) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  if (!auth.seat_token.empty()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", auth.seat_token));
  }
  if (!auth.player_key.empty()) context.AddMetadata("x-ply-player", auth.player_key);
}

// One unary call with a deadline and the caller's credentials.
template <typename Request, typename Response>
grpc::Status Call(Stub& stub,
                  grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                  const Request& request, Response* response, const Auth& auth = {},
                  absl::Duration deadline = absl::Seconds(10)) {
  grpc::ClientContext context;
  Prepare(context, auth, deadline);
  return (stub.*method)(&context, request, response);
}

std::unique_ptr<Stub> Connect(const std::string& address) {
  return LobbyService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

// What every attack works with: the lobbies, and this run's suffix for unique names.
struct Env {
  std::unique_ptr<Stub> lobby;
  std::unique_ptr<Stub> lobby2;
  std::unique_ptr<Stub> setup;
  std::string web;
  std::string suffix;
};

grpc::Status Register(Stub& stub, const std::string& name, std::string* key) {
  v1::LoginRequest request;
  request.set_name(name);
  v1::LoginResponse response;
  grpc::Status s = Call(stub, &Stub::Login, request, &response);
  if (s.ok()) *key = response.player_key();
  return s;
}

// A player an attack needs but is not about: registered on the setup lobby when there is one.
grpc::Status HelperPlayer(Env& env, const std::string& tag, std::string* key) {
  return Register(env.setup ? *env.setup : *env.lobby, absl::StrCat("fp", tag, env.suffix), key);
}

// A match of `game` whose seat 0 the caller takes (as `display_name`, or as the player whose key
// the call carries); seat 1 is a bot at `level`, or open for a person when `level` is empty.
v1::CreateMatchRequest NewMatch(const std::string& game, const std::string& level,
                                const std::string& display_name, bool casual) {
  v1::CreateMatchRequest request;
  request.mutable_spec()->set_name(game);
  request.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  v1::SeatSpec* second = request.add_seats();
  if (level.empty()) {
    second->set_kind(v1::SEAT_KIND_HUMAN);
  } else {
    second->set_kind(v1::SEAT_KIND_BOT);
    second->set_difficulty(level);
    // As fast as the bots go: the attacks wait for bots, never for people to follow.
    request.set_bot_pacing_ms(0);
  }
  request.set_take_seat(0);
  request.set_display_name(display_name);
  request.set_casual(casual);
  return request;
}

grpc::Status GetMatch(Stub& stub, int64_t id, v1::Match* out) {
  v1::GetMatchRequest request;
  request.set_match_id(id);
  return Call(stub, &Stub::GetMatch, request, out);
}

// Polls GetMatch (no token: what any spectator reads) until match `id` has `moves` moves or
// `wait` passes; the match as last read.
v1::Match AwaitMoves(Stub& stub, int64_t id, int moves, absl::Duration wait) {
  v1::Match m;
  for (const absl::Time end = absl::Now() + wait; absl::Now() < end;) {
    if (GetMatch(stub, id, &m).ok() && m.moves_size() >= moves) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return m;
}

grpc::Status Move(Stub& stub, int64_t id, int expected_ply, const std::string& move,
                  const std::string& token) {
  v1::MakeMoveRequest request;
  request.set_match_id(id);
  request.set_expected_ply(expected_ply);
  request.set_move(move);
  v1::MakeMoveResponse response;
  return Call(stub, &Stub::MakeMove, request, &response, {.seat_token = token});
}

grpc::Status Resign(Stub& stub, int64_t id, const std::string& token) {
  v1::ResignRequest request;
  request.set_match_id(id);
  v1::Match after;
  return Call(stub, &Stub::Resign, request, &after, {.seat_token = token});
}

// Ends a match an attack made, so that it holds no quota in the attacks after it (a waiting
// match is first filled by a guest: a match that has not started cannot be resigned).
void Discard(Env& env, int64_t id, const std::string& token) {
  v1::Match m;
  if (!GetMatch(*env.lobby, id, &m).ok() || m.status() == v1::MATCH_STATUS_FINISHED) return;
  if (m.status() == v1::MATCH_STATUS_WAITING) {
    v1::JoinMatchRequest join;
    join.set_match_id(id);
    join.set_seat(-1);
    join.set_display_name(absl::StrCat("fpclean", env.suffix));
    v1::JoinMatchResponse joined;
    (void)Call(*env.lobby, &Stub::JoinMatch, join, &joined);
  }
  (void)Resign(*env.lobby, id, token);
}

// Matches among `ids` still waiting or in play.
int Live(Stub& stub, const std::vector<int64_t>& ids) {
  int live = 0;
  for (int64_t id : ids) {
    v1::Match m;
    if (GetMatch(stub, id, &m).ok() && m.status() != v1::MATCH_STATUS_FINISHED) ++live;
  }
  return live;
}

// A player's rating in `game` (nullopt: the player has none there, or is unknown).
std::optional<int> RatingOf(Stub& stub, const std::string& player, const std::string& game) {
  v1::GetPlayerRequest request;
  request.set_name(player);
  v1::Player p;
  if (!Call(stub, &Stub::GetPlayer, request, &p).ok()) return std::nullopt;
  for (const v1::GameRating& r : p.ratings()) {
    if (r.game() == game) return r.rating();
  }
  return std::nullopt;
}

// A bot level's rating as ListGames shows it (nullopt: no such game or level).
std::optional<int> LevelRating(Stub& stub, const std::string& game, const std::string& level) {
  v1::ListGamesResponse games;
  if (!Call(stub, &Stub::ListGames, v1::ListGamesRequest(), &games).ok()) return std::nullopt;
  for (const v1::GameInfo& g : games.games()) {
    if (g.name() != game) continue;
    for (const v1::DifficultyLevel& l : g.levels()) {
      if (l.name() == level) return l.rating();
    }
  }
  return std::nullopt;
}

// --- The attacks -------------------------------------------------------------------------

Verdict SelfRated(Env& env) {
  std::string key;
  if (grpc::Status s = HelperPlayer(env, "sr", &key); !s.ok()) {
    return Failed(absl::StrCat("could not register a player: ", Describe(s)));
  }
  v1::CreateMatchResponse created;
  if (grpc::Status s = Call(*env.lobby, &Stub::CreateMatch, NewMatch("tictactoe", "", "", false),
                            &created, {.player_key = key});
      !s.ok()) {
    return Failed(absl::StrCat("could not create the rated match: ", Describe(s)));
  }
  const int64_t id = created.match().id();
  v1::JoinMatchRequest join;
  join.set_match_id(id);
  join.set_seat(1);
  v1::JoinMatchResponse joined;
  const grpc::Status s = Call(*env.lobby, &Stub::JoinMatch, join, &joined, {.player_key = key});
  Discard(env, id, created.seat_token());
  const std::string tried =
      "one player took seat 1 of a rated tictactoe match, then JoinMatch seat 2 with the same key";
  return Judge(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION,
               absl::StrCat(tried, " -> ", Describe(s)));
}

Verdict SandbagBot(Env& env) {
  constexpr int kLosses = 10;
  std::string key;
  if (grpc::Status s = HelperPlayer(env, "sb", &key); !s.ok()) {
    return Failed(absl::StrCat("could not register a player: ", Describe(s)));
  }
  const std::optional<int> level = LevelRating(*env.lobby, "connect4", "beginner");
  if (!level) return Failed("ListGames has no rating for connect4's beginner level");
  for (int i = 0; i < kLosses; ++i) {
    v1::CreateMatchResponse created;
    if (grpc::Status s =
            Call(*env.lobby, &Stub::CreateMatch, NewMatch("connect4", "beginner", "", false),
                 &created, {.player_key = key});
        !s.ok()) {
      return Failed(absl::StrCat("match ", i + 1, " of ", kLosses, " refused: ", Describe(s)));
    }
    // A move each first: a resignation before each side moved is not rated at all, and the
    // attack is against a level a rated loss would move.
    const int64_t id = created.match().id();
    if (grpc::Status s = Move(*env.lobby, id, 0, "4", created.seat_token()); !s.ok()) {
      return Failed(absl::StrCat("the first move of match ", i + 1, ": ", Describe(s)));
    }
    if (AwaitMoves(*env.lobby, id, 2, absl::Seconds(10)).moves_size() < 2)
      return Failed(absl::StrCat("bot:beginner never moved in match ", id));
    if (grpc::Status s = Resign(*env.lobby, id, created.seat_token()); !s.ok()) {
      return Failed(absl::StrCat("resigning match ", i + 1, ": ", Describe(s)));
    }
  }
  // A bot level that has never had a rating of its own shows its ladder rating in ListGames.
  const std::optional<int> after = RatingOf(*env.lobby, "bot:beginner", "connect4");
  const int now = after ? *after : LevelRating(*env.lobby, "connect4", "beginner").value_or(0);
  return Judge(
      now == *level,
      absl::StrCat("a player lost ", kLosses,
                   " rated connect4 matches to bot:beginner by resigning after a move each -> "
                   "bot:beginner's rating ",
                   *level, " before, ", now, after ? "" : " (no rating of its own)", " after"));
}

// Registration of a look-alike name: on the attacked lobby, unless this address has spent its
// hourly registrations there (an earlier run), then on the setup lobby (the look-alike rule does
// not depend on the address).
grpc::Status RegisterLookAlike(Env& env, const std::string& name, std::string* where) {
  std::string key;
  grpc::Status s = Register(*env.lobby, name, &key);
  if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED && env.setup) {
    *where = " (on the setup lobby: this address's registrations were spent)";
    s = Register(*env.setup, name, &key);
  }
  return s;
}

Verdict LookAlike(Env& env) {
  std::string key;
  const std::string alice = absl::StrCat("alice", env.suffix);
  if (grpc::Status s = Register(env.setup ? *env.setup : *env.lobby, alice, &key); !s.ok()) {
    return Failed(absl::StrCat("could not register ", alice, ": ", Describe(s)));
  }
  const auto refused = [](const grpc::Status& s) {
    return s.error_code() == grpc::StatusCode::ALREADY_EXISTS ||
           s.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
  };
  bool held = true;
  std::vector<std::string> answers;
  std::string where;
  const grpc::Status capital_i = RegisterLookAlike(env, absl::StrCat("aIice", env.suffix), &where);
  held = held && refused(capital_i);
  answers.push_back(absl::StrCat("register aIice: ", CodeName(capital_i.error_code()), where));
  // Guests under names that read as the player's, or as a bot seat's.
  const std::pair<std::string, std::string> guests[] = {
      {"Cyrillic a", absl::StrCat("\u0430lice", env.suffix)},
      {"fullwidth", absl::StrCat("\uff41\uff4c\uff49\uff43\uff45", env.suffix)},
      {"b\u043Et (hard)", "b\u043Et (hard)"},
  };
  for (const auto& [label, name] : guests) {
    v1::CreateMatchResponse created;
    const grpc::Status s =
        Call(*env.lobby, &Stub::CreateMatch, NewMatch("tictactoe", "", name, true), &created);
    if (s.ok()) Discard(env, created.match().id(), created.seat_token());
    held = held && refused(s);
    answers.push_back(absl::StrCat("guest ", label, ": ", CodeName(s.error_code())));
  }
  return Judge(held, absl::StrCat("look-alikes of player ", alice, " and of \"bot (hard)\" -> ",
                                  absl::StrJoin(answers, ", ")));
}

Verdict FreeAccounts(Env& env) {
  constexpr int kMaxAttempts = 30;
  const int bound = absl::GetFlag(FLAGS_registrations_per_hour);
  const int per_player = absl::GetFlag(FLAGS_client_bot_seats);
  const int per_address = per_player * absl::GetFlag(FLAGS_address_quota_multiple);
  std::vector<std::string> keys;
  grpc::Status refusal;
  for (int i = 0; i < kMaxAttempts; ++i) {
    std::string key;
    refusal = Register(*env.lobby, absl::StrCat("fpfa", env.suffix, "x", i), &key);
    if (!refusal.ok()) break;
    keys.push_back(key);
  }
  const int registered = static_cast<int>(keys.size());
  if (!refusal.ok() && refusal.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
    return Failed(absl::StrCat("registration ", registered + 1, ": ", Describe(refusal)));
  }
  const bool registrations_held = !refusal.ok() && registered <= bound;
  // The bot-seat half needs as many accounts as the bound lets one address have; when this
  // address spent its registrations in an earlier run, the rest come from the setup lobby.
  int topped_up = 0;
  while (static_cast<int>(keys.size()) < bound && env.setup) {
    std::string key;
    if (grpc::Status s =
            Register(*env.setup, absl::StrCat("fpfa", env.suffix, "y", topped_up), &key);
        !s.ok()) {
      return Failed(absl::StrCat("could not register a helper player: ", Describe(s)));
    }
    keys.push_back(key);
    ++topped_up;
  }
  std::vector<std::pair<int64_t, std::string>> made;
  for (const std::string& key : keys) {
    // One more than a player may have, so that every account meets a refusal.
    for (int i = 0; i <= per_player; ++i) {
      v1::CreateMatchResponse created;
      const grpc::Status s =
          Call(*env.lobby, &Stub::CreateMatch, NewMatch("tictactoe", "beginner", "", true),
               &created, {.player_key = key});
      if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) break;
      if (!s.ok()) {
        for (const auto& [id, token] : made) Discard(env, id, token);
        return Failed(absl::StrCat("creating a bot match: ", Describe(s)));
      }
      made.emplace_back(created.match().id(), created.seat_token());
    }
  }
  std::vector<int64_t> ids;
  for (const auto& [id, token] : made) ids.push_back(id);
  // Live, not made: a match abandoned meanwhile frees its seat, as it should.
  const int live = Live(*env.lobby, ids);
  for (const auto& [id, token] : made) Discard(env, id, token);
  const bool seats_held = live <= per_address;
  return Judge(
      registrations_held && seats_held,
      absl::StrCat(
          "registered players from one address until refused -> ", registered, " made, then ",
          refusal.ok() ? "no refusal" : Describe(refusal), " (bound ", bound, "); ", keys.size(),
          " accounts",
          topped_up > 0 ? absl::StrCat(" (", topped_up, " of them from the setup lobby)") : "",
          " made person-vs-bot matches until refused -> ", live, " bot seats live (address bound ",
          per_address, ", accounts x per-player bound ", keys.size() * per_player, ")"));
}

// Person-vs-bot matches (tictactoe, beginner) a guest makes until refused, at most `most`.
std::vector<std::pair<int64_t, std::string>> GuestBotMatches(Env& env, const std::string& guest,
                                                             int most, grpc::Status* last) {
  std::vector<std::pair<int64_t, std::string>> made;
  *last = grpc::Status::OK;
  while (static_cast<int>(made.size()) < most) {
    v1::CreateMatchResponse created;
    *last = Call(*env.lobby, &Stub::CreateMatch, NewMatch("tictactoe", "beginner", guest, true),
                 &created);
    if (!last->ok()) break;
    made.emplace_back(created.match().id(), created.seat_token());
  }
  return made;
}

Verdict RematchQuota(Env& env) {
  const int quota = absl::GetFlag(FLAGS_client_bot_seats);
  const std::string guest = absl::StrCat("fprq", env.suffix);
  grpc::Status last;
  std::vector<std::pair<int64_t, std::string>> first =
      GuestBotMatches(env, guest, quota + 1, &last);
  const auto cleanup = [&](const std::vector<std::pair<int64_t, std::string>>& matches) {
    for (const auto& [id, token] : matches) Discard(env, id, token);
  };
  if (last.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
    cleanup(first);
    return Failed(absl::StrCat("a guest made ", first.size(), " bot matches, then ", Describe(last),
                               " (quota ", quota, ")"));
  }
  for (const auto& [id, token] : first) {
    if (grpc::Status s = Resign(*env.lobby, id, token); !s.ok()) {
      cleanup(first);
      return Failed(absl::StrCat("resigning: ", Describe(s)));
    }
  }
  // The bot accepts a rematch at once: each offer makes a new live match.
  std::vector<std::pair<int64_t, std::string>> rematches;
  grpc::Status refused_rematch;
  for (const auto& [id, token] : first) {
    v1::OfferRematchRequest offer;
    offer.set_match_id(id);
    v1::OfferRematchResponse response;
    grpc::Status s = Call(*env.lobby, &Stub::OfferRematch, offer, &response, {.seat_token = token});
    if (s.ok() && response.rematch_id() > 0) {
      rematches.emplace_back(response.rematch_id(), response.seat_token());
    } else if (!s.ok()) {
      refused_rematch = s;
    }
  }
  // Then new matches until refused: the rematches must count against the same quota.
  std::vector<std::pair<int64_t, std::string>> after =
      GuestBotMatches(env, guest, quota + 1, &last);
  std::vector<int64_t> ids;
  for (const auto& [id, token] : rematches) ids.push_back(id);
  for (const auto& [id, token] : after) ids.push_back(id);
  const int live = Live(*env.lobby, ids);
  cleanup(rematches);
  cleanup(after);
  return Judge(
      static_cast<int>(first.size()) <= quota && live <= quota,
      absl::StrCat("a guest made ", first.size(),
                   " bot matches until refused, resigned them and offered rematches -> ",
                   rematches.size(), " rematches made",
                   refused_rematch.ok() ? "" : absl::StrCat(" (", Describe(refused_rematch), ")"),
                   ", then ", after.size(), " more matches before ",
                   last.ok() ? "no refusal" : CodeName(last.error_code()), ": ", live,
                   " live at once (quota ", quota, ")"));
}

Verdict BotThinking(Env& env) {
  v1::CreateMatchResponse created;
  if (grpc::Status s =
          Call(*env.lobby, &Stub::CreateMatch,
               NewMatch("connect4", "medium", absl::StrCat("fpbt", env.suffix), true), &created);
      !s.ok()) {
    return Failed(absl::StrCat("could not create the bot match: ", Describe(s)));
  }
  const int64_t id = created.match().id();
  const std::string& token = created.seat_token();
  if (grpc::Status s = Move(*env.lobby, id, 0, "4", token); !s.ok()) {
    Discard(env, id, token);
    return Failed(absl::StrCat("could not play 4: ", Describe(s)));
  }
  // Read without a token: what any spectator (or a second window) reads.
  const v1::Match m = AwaitMoves(*env.lobby, id, 2, absl::Seconds(20));
  Discard(env, id, token);
  if (m.moves_size() < 2) return Failed("the bot did not reply within 20 s");
  const v1::BotThinking& bot = m.moves(1).bot();
  const bool hidden = bot.pv_size() == 0 && bot.score_text().empty() && bot.depth() == 0;
  // Once the match is over the thinking is anyone's to read: shown, it proves the fields above
  // were the bot's to hide.
  v1::Match over;
  std::string shown;
  if (GetMatch(*env.lobby, id, &over).ok() && over.moves_size() >= 2) {
    shown = absl::StrCat("; after the end, depth ", over.moves(1).bot().depth(), ", score \"",
                         over.moves(1).bot().score_text(), "\"");
  }
  return Judge(hidden, absl::StrCat("GetMatch without a token while a person plays bot medium -> "
                                    "the bot's move shows pv [",
                                    absl::StrJoin(bot.pv(), " "), "], score \"", bot.score_text(),
                                    "\", depth ", bot.depth(), shown));
}

Verdict AbandonedBotGame(Env& env) {
  const double abandon_s = absl::GetFlag(FLAGS_abandon_after_s);
  if (abandon_s <= 0 || abandon_s > 10) {
    return Skipped("needs a lobby with a small --abandon_after_s (pass it here: 0 < s <= 10)");
  }
  v1::CreateMatchResponse created;
  if (grpc::Status s =
          Call(*env.lobby, &Stub::CreateMatch,
               NewMatch("connect4", "beginner", absl::StrCat("fpab", env.suffix), true), &created);
      !s.ok()) {
    return Failed(absl::StrCat("could not create the bot match: ", Describe(s)));
  }
  const int64_t id = created.match().id();
  if (grpc::Status s = Move(*env.lobby, id, 0, "4", created.seat_token()); !s.ok()) {
    Discard(env, id, created.seat_token());
    return Failed(absl::StrCat("could not play 4: ", Describe(s)));
  }
  // From here on the person makes no call; GetMatch (no token) is not the seat's sign of life.
  const absl::Time start = absl::Now();
  v1::Match m;
  while (absl::Now() - start < absl::Seconds(15)) {
    if (GetMatch(*env.lobby, id, &m).ok() && m.status() == v1::MATCH_STATUS_FINISHED) break;
    absl::SleepFor(absl::Milliseconds(250));
  }
  const bool ended =
      m.status() == v1::MATCH_STATUS_FINISHED && (m.result().reason() == v1::END_REASON_ABANDONED ||
                                                  m.result().reason() == v1::END_REASON_ABORTED);
  std::string what =
      m.status() == v1::MATCH_STATUS_FINISHED
          ? absl::StrFormat("finished after %.1f s: %s (%s)",
                            absl::ToDoubleSeconds(absl::Now() - start),
                            v1::EndReason_Name(m.result().reason()), m.result().text())
          : absl::StrCat("still ", v1::MatchStatus_Name(m.status()), " after 15 s");
  if (!ended) Discard(env, id, created.seat_token());
  return Judge(ended,
               absl::StrCat("a person played one move against bot beginner and left -> ", what));
}

// POST to ply-web with a seat token; returns the HTTP status (0: no answer).
int WebPost(httplib::Client& web, const std::string& path, const std::string& token) {
  httplib::Headers headers = {{"Authorization", absl::StrCat("Bearer ", token)}};
  httplib::Result r = web.Post(path, headers, "{}", "application/json");
  return r ? r->status : 0;
}

Verdict ClaimWhilePresent(Env& env) {
  if (env.web.empty()) return Skipped("needs --web");
  std::vector<std::string> host_port = absl::StrSplit(env.web, absl::MaxSplits(':', 1));
  int port = 0;
  if (host_port.size() != 2 || !absl::SimpleAtoi(host_port[1], &port)) {
    return Failed(absl::StrCat("--web=", env.web, " is not HOST:PORT"));
  }
  v1::CreateMatchResponse created;
  if (grpc::Status s =
          Call(*env.lobby, &Stub::CreateMatch,
               NewMatch("connect4", "", absl::StrCat("fpcw", env.suffix, "a"), true), &created);
      !s.ok()) {
    return Failed(absl::StrCat("could not create the match: ", Describe(s)));
  }
  const int64_t id = created.match().id();
  v1::JoinMatchRequest join;
  join.set_match_id(id);
  join.set_seat(1);
  join.set_display_name(absl::StrCat("fpcw", env.suffix, "b"));
  v1::JoinMatchResponse joined;
  if (grpc::Status s = Call(*env.lobby, &Stub::JoinMatch, join, &joined); !s.ok()) {
    Discard(env, id, created.seat_token());
    return Failed(absl::StrCat("could not join seat 2: ", Describe(s)));
  }
  const std::string tokens[2] = {created.seat_token(), joined.seat_token()};
  // Three moves: seat 2 is to move, so seat 1 may claim once seat 2 is gone long enough.
  for (int ply = 0; ply < 3; ++ply) {
    if (grpc::Status s = Move(*env.lobby, id, ply, "4", tokens[ply % 2]); !s.ok()) {
      Discard(env, id, tokens[0]);
      return Failed(absl::StrCat("move ", ply + 1, ": ", Describe(s)));
    }
  }
  v1::Match m;
  if (grpc::Status s = GetMatch(*env.lobby, id, &m); !s.ok()) {
    Discard(env, id, tokens[0]);
    return Failed(absl::StrCat("GetMatch: ", Describe(s)));
  }
  const int64_t claim_after_ms = m.claim_after_ms();
  if (claim_after_ms <= 0 || claim_after_ms > 10000) {
    Discard(env, id, tokens[0]);
    return Skipped(
        absl::StrCat("needs a lobby with a small --claim_after_s (it allows claims after ",
                     claim_after_ms, " ms)"));
  }
  httplib::Client web(host_port[0], port);
  web.set_connection_timeout(2);
  web.set_read_timeout(5);
  const std::string beat = absl::StrCat("/api/matches/", id, "/presence");
  int beats = 0, beats_ok = 0, claims = 0, claims_refused = 0;
  std::string odd_beat, odd_claim;
  const absl::Time end = absl::Now() + absl::Milliseconds(claim_after_ms + 2000);
  for (absl::Time next = absl::Now(); next < end; next += absl::Milliseconds(500)) {
    absl::SleepFor(next - absl::Now());
    ++beats;
    if (const int status = WebPost(web, beat, tokens[1]); status == 200) {
      ++beats_ok;
    } else if (odd_beat.empty()) {
      odd_beat = absl::StrCat(", a beat answered ", status);
    }
    ++claims;
    v1::ClaimVictoryRequest claim;
    claim.set_match_id(id);
    v1::Match after;
    const grpc::Status s =
        Call(*env.lobby, &Stub::ClaimVictory, claim, &after, {.seat_token = tokens[0]});
    if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      ++claims_refused;
    } else if (odd_claim.empty()) {
      odd_claim = absl::StrCat(", a claim answered ", Describe(s));
    }
    if (s.ok()) break;
  }
  Discard(env, id, tokens[0]);
  return Judge(
      beats == beats_ok && claims == claims_refused,
      absl::StrCat("seat 1 claimed every 0.5 s for ", (claim_after_ms + 2000) / 1000.0,
                   " s while seat 2's page beat through ply-web -> ", claims_refused, "/", claims,
                   " claims refused, ", beats_ok, "/", beats, " beats 200", odd_claim, odd_beat));
}

// A Pair stream read on a thread of its own, so that its events can be waited for with a bound.
class PairStream {
 public:
  PairStream(Stub& stub, const std::string& key) {
    v1::PairRequest request;
    request.mutable_spec()->set_name("connect4");
    request.set_casual(true);
    Prepare(context_, {.player_key = key}, absl::Seconds(60));
    reader_ = stub.Pair(&context_, request);
    thread_ = std::thread([this] { Read(); });
  }
  ~PairStream() {
    context_.TryCancel();
    thread_.join();
  }
  // Whether any event came within `wait`.
  bool WaitEvent(absl::Duration wait) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, absl::ToChronoMilliseconds(wait), [this] { return events_ > 0 || ended_; });
    return events_ > 0;
  }
  // The pairing, if it came within `wait`.
  std::optional<v1::PairFound> WaitPaired(absl::Duration wait) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, absl::ToChronoMilliseconds(wait),
                 [this] { return paired_.has_value() || ended_; });
    return paired_;
  }
  std::string Ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_ ? absl::StrCat(" (stream ended: ", Describe(status_), ")") : "";
  }

 private:
  void Read() {
    v1::PairEvent e;
    while (reader_->Read(&e)) {
      std::lock_guard<std::mutex> lock(mu_);
      ++events_;
      if (e.has_paired()) paired_ = e.paired();
      cv_.notify_all();
    }
    grpc::Status s = reader_->Finish();
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    status_ = s;
    cv_.notify_all();
  }

  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::PairEvent>> reader_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int events_ = 0;
  std::optional<v1::PairFound> paired_;
  bool ended_ = false;
  grpc::Status status_;
};

Verdict GhostPairing(Env& env) {
  if (!env.lobby2) return Skipped("needs --lobby2 (an instance the caller kills)");
  std::string key_a, key_b;
  if (grpc::Status s = HelperPlayer(env, "gpa", &key_a); !s.ok()) {
    return Failed(absl::StrCat("could not register a player: ", Describe(s)));
  }
  if (grpc::Status s = HelperPlayer(env, "gpb", &key_b); !s.ok()) {
    return Failed(absl::StrCat("could not register a player: ", Describe(s)));
  }
  const std::string name_a = absl::StrCat("fpgpa", env.suffix);
  const std::string name_b = absl::StrCat("fpgpb", env.suffix);
  {
    PairStream ghost(*env.lobby2, key_a);
    if (!ghost.WaitEvent(absl::Seconds(5))) {
      return Failed(absl::StrCat("A's Pair on lobby2 sent nothing within 5 s", ghost.Ended()));
    }
    // Whoever runs this kills lobby2 now: A's queue entry stays behind in the database.
    std::printf("KILL_LOBBY2_NOW\n");
    std::fflush(stdout);
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    bool gone = false;
    while (!gone && absl::Now() < give_up) {
      v1::ListGamesResponse games;
      gone = !Call(*env.lobby2, &Stub::ListGames, v1::ListGamesRequest(), &games, {},
                   absl::Milliseconds(500))
                  .ok();
      if (!gone) absl::SleepFor(absl::Milliseconds(200));
    }
    if (!gone) return Failed("lobby2 still answered 10 s after KILL_LOBBY2_NOW");
  }
  // Longer than a queue entry lives without its stream marking it alive.
  absl::SleepFor(absl::Seconds(6));
  PairStream b(*env.lobby, key_b);
  if (std::optional<v1::PairFound> found = b.WaitPaired(absl::Seconds(3))) {
    return Failed(absl::StrCat(
        "A queued on lobby2, lobby2 was killed; B queued on lobby 1 -> B "
        "was paired with ",
        found->opponent(), " (match ", found->match_id(), ") while A had no stream anywhere"));
  }
  PairStream a(*env.lobby, key_a);
  const std::optional<v1::PairFound> found_a = a.WaitPaired(absl::Seconds(5));
  const std::optional<v1::PairFound> found_b = b.WaitPaired(absl::Seconds(1));
  const bool together = found_a && found_b && found_a->match_id() == found_b->match_id() &&
                        found_a->opponent() == name_b && found_b->opponent() == name_a;
  if (found_a) {
    // Resigned over the same lobby instance the seat's token came from.
    (void)Resign(*env.lobby, found_a->match_id(), found_a->seat_token());
  }
  const std::string tried =
      "A queued on lobby2, lobby2 was killed; B queued on lobby 1 -> not paired within 3 s; then "
      "A queued on lobby 1 -> ";
  if (together) {
    return Held(
        absl::StrCat(tried, "A and B paired with each other (match ", found_a->match_id(), ")"));
  }
  return Failed(absl::StrCat(
      tried, "A ", found_a ? absl::StrCat("paired with ", found_a->opponent()) : "not paired",
      a.Ended(), ", B ", found_b ? absl::StrCat("paired with ", found_b->opponent()) : "not paired",
      b.Ended(), " within 5 s"));
}

struct Attack {
  const char* name;
  Verdict (*run)(Env&);
};

// In this order: look-alike registers before free-accounts spends the address's registrations,
// and ghost-pairing, which costs lobby2, comes last.
constexpr Attack kAttacks[] = {
    {"self-rated", SelfRated},
    {"sandbag-bot", SandbagBot},
    {"look-alike", LookAlike},
    {"free-accounts", FreeAccounts},
    {"rematch-quota", RematchQuota},
    {"bot-thinking", BotThinking},
    {"abandoned-bot-game", AbandonedBotGame},
    {"claim-while-present", ClaimWhilePresent},
    {"ghost-pairing", GhostPairing},
};

int Run() {
  const std::string only = absl::GetFlag(FLAGS_only);
  std::vector<std::string> names;
  for (const Attack& a : kAttacks) names.push_back(a.name);
  if (!only.empty() && std::find(names.begin(), names.end(), only) == names.end()) {
    std::fprintf(stderr, "ply-fair-play: no attack %s (there are: %s)\n", only.c_str(),
                 absl::StrJoin(names, ", ").c_str());
    return 2;
  }
  Env env;
  env.lobby = Connect(absl::GetFlag(FLAGS_lobby));
  if (!absl::GetFlag(FLAGS_lobby2).empty()) env.lobby2 = Connect(absl::GetFlag(FLAGS_lobby2));
  if (!absl::GetFlag(FLAGS_setup_lobby).empty()) {
    env.setup = Connect(absl::GetFlag(FLAGS_setup_lobby));
  }
  env.web = absl::GetFlag(FLAGS_web);
  // Names of this run only (lower-case hex: no two runs' names look alike either).
  std::random_device random;
  env.suffix = absl::StrFormat("%08x", random());

  int passed = 0, failed = 0;
  for (const Attack& a : kAttacks) {
    if (!only.empty() && only != a.name) continue;
    const Verdict v = a.run(env);
    const char* label = "skipped";
    if (v.outcome == Outcome::kHeld) {
      label = "held ";
      ++passed;
    } else if (v.outcome == Outcome::kFailed) {
      label = "FAILED";
      ++failed;
    }
    std::printf("%s %s: %s\n", label, a.name, v.text.c_str());
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  std::fflush(stdout);
  return failed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  ply::SetFlagsUsage(
      "Replays fair-play attacks against a running lobby and says of each whether it held.\n"
      "  ply-fair-play --lobby=HOST:PORT [--lobby2=HOST:PORT] [--web=HOST:PORT] [--only=NAME]");
  ply::ParseFlags(argc, argv);
  return ply::Run();
}
