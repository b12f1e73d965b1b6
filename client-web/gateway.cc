#include "client-web/gateway.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "client-web/assets.h"
#include "client-web/board_model.h"
#include "client-web/http_reply.h"
#include "client-web/input_check.h"
#include "client-web/match_json.h"
#include "common/client_address.h"
#include "common/proto_convert.h"
#include "engine/registry/registry.h"
#include "nlohmann/json.hpp"

namespace ply::web {
namespace {

using nlohmann::json;

// Scripts and styles come only from this origin, in files: no inline script can run even if
// some text got into the page unescaped.
constexpr char kCsp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";
// Matches listed with their boards at most (each board may cost a GetMatch).
constexpr int kBoardsPerList = 24;
constexpr size_t kBoardCache = 2000;
// How long a list answer is served again, and how many different lists are kept.
constexpr absl::Duration kListFresh = absl::Seconds(1);
constexpr size_t kListCache = 256;

// What a seat's call brings: the match from the path, the seat's token from the Authorization
// header and, for calls that take one, the JSON body; each checked in that order.
struct SeatCall {
  int64_t id = 0;
  std::string token;
  json body;
};

absl::StatusOr<SeatCall> ReadSeatCall(const httplib::Request& req, bool with_body) {
  SeatCall call;
  absl::StatusOr<int64_t> id = MatchId(req.matches[1].str());
  if (!id.ok()) return id.status();
  call.id = *id;
  absl::StatusOr<std::string> token = BearerToken(req.get_header_value("Authorization"));
  if (!token.ok()) return token.status();
  call.token = *std::move(token);
  if (with_body) {
    absl::StatusOr<json> body = Body(req);
    if (!body.ok()) return body.status();
    call.body = *std::move(body);
  }
  return call;
}

void SecurityHeaders(httplib::Response& res, bool api) {
  res.set_header("Content-Security-Policy", kCsp);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
  // Answers carry seat tokens and live positions: never stored anywhere on the way.
  res.set_header("Cache-Control", api ? "no-store" : "no-cache");
}

}  // namespace

Gateway::Gateway(client::LobbyTarget lobby, std::shared_ptr<grpc::ChannelCredentials> credentials,
                 GatewayOptions options)
    : lobby_(std::move(lobby), std::move(credentials)),
      options_(options),
      limits_({.calls_per_second = options.client_rps,
               .burst = options.client_burst,
               .max_streams = options.client_streams}),
      // Every stream may have a feed of its own, and as many again may linger unread.
      hub_(&lobby_, options.linger, 2 * static_cast<size_t>(std::max(0, options.max_streams))),
      presence_(&lobby_, options.presence_hold, options.max_presence_holds) {}

std::string Gateway::ClientAddress(const httplib::Request& req) const {
  if (options_.trust_forwarded_for && req.has_header("X-Forwarded-For")) {
    // The last address is the one the proxy in front of us added; those before it came from the
    // client (a proxy appends to what it was sent), so any of them could be made up to get a
    // fresh allowance each request.
    std::vector<std::string> hops = absl::StrSplit(req.get_header_value("X-Forwarded-For"), ',');
    return std::string(absl::StripAsciiWhitespace(hops.back()));
  }
  return req.remote_addr;
}

std::string Gateway::ClientOf(const httplib::Request& req) const {
  return ClientAddressKey(ClientAddress(req));
}

void Gateway::Install(httplib::Server& server) {
  server.set_payload_max_length(options_.max_body);
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const bool api = absl::StartsWith(req.path, "/api/") || req.path == "/healthz";
    SecurityHeaders(res, api);
    // The lobby calls made for this request carry the browser's address, so that the lobby's
    // per-client rules apply to this person, not to the gateway (client::SetForwardedFor).
    client::SetForwardedFor(ClientAddress(req));
    if (req.path != "/healthz" && !limits_.AllowCall(ClientOf(req), absl::Now())) {
      res.set_header("Retry-After", "1");
      SendJson(res, 429, {{"error", "too many requests from your address; slow down"}});
      return httplib::Server::HandlerResponse::Handled;
    }
    // A browser logged in as a player sends its key as "Authorization: Player KEY" (never in a
    // URL or a cookie): this request's lobby calls carry it, so seats taken are the player's.
    absl::StatusOr<std::string> key = PlayerKey(req.get_header_value("Authorization"));
    if (!key.ok()) {
      SendError(res, key.status());
      return httplib::Server::HandlerResponse::Handled;
    }
    client::SetPlayerKeyFor(*key);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      SendJson(res, 413, {{"error", "the request is too large"}});
    } else if (absl::StartsWith(req.path, "/api/")) {
      // Not every error is a path that is not there: a body cut short is a bad request.
      SendJson(
          res, res.status,
          {{"error", res.status == 404   ? std::string("no such request")
                     : res.status == 400 ? std::string("malformed request (its headers or body)")
                                         : absl::StrCat("HTTP error ", res.status)}});
    } else {
      res.set_content("not found\n", "text/plain; charset=utf-8");
    }
  });

  server.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(absl::StrCat("ok ", lobby_.address(), " feeds=", hub_.size(),
                                 " holds=", presence_.size(), "\n"),
                    "text/plain; charset=utf-8");
  });
  server.Get("/api/games", [this](const httplib::Request&, httplib::Response& res) { Games(res); });
  server.Get("/api/matches",
             [this](const httplib::Request& req, httplib::Response& res) { List(req, res); });
  server.Post("/api/matches",
              [this](const httplib::Request& req, httplib::Response& res) { Create(req, res); });
  server.Get(R"(/api/matches/(\d{1,16}))",
             [this](const httplib::Request& req, httplib::Response& res) { Get(req, res); });
  server.Post(R"(/api/matches/(\d{1,16})/join)",
              [this](const httplib::Request& req, httplib::Response& res) { Join(req, res); });
  server.Post(R"(/api/matches/(\d{1,16})/move)",
              [this](const httplib::Request& req, httplib::Response& res) { Move(req, res); });
  server.Post(R"(/api/matches/(\d{1,16})/resign)",
              [this](const httplib::Request& req, httplib::Response& res) {
                Resign(req, res, /*draw=*/false);
              });
  server.Post(R"(/api/matches/(\d{1,16})/draw)",
              [this](const httplib::Request& req, httplib::Response& res) {
                Resign(req, res, /*draw=*/true);
              });
  server.Post(R"(/api/matches/(\d{1,16})/claim)",
              [this](const httplib::Request& req, httplib::Response& res) { Claim(req, res); });
  server.Post(R"(/api/matches/(\d{1,16})/rematch)",
              [this](const httplib::Request& req, httplib::Response& res) { Rematch(req, res); });
  server.Post(R"(/api/matches/(\d{1,16})/presence)",
              [this](const httplib::Request& req, httplib::Response& res) { Presence(req, res); });
  server.Get(R"(/api/matches/(\d{1,16})/replay)",
             [this](const httplib::Request& req, httplib::Response& res) { Replay(req, res); });
  server.Get(R"(/api/matches/(\d{1,16})/analysis)",
             [this](const httplib::Request& req, httplib::Response& res) { Analysis(req, res); });
  server.Post("/api/login",
              [this](const httplib::Request& req, httplib::Response& res) { Login(req, res); });
  server.Get(R"(/api/players/([A-Za-z0-9_.:\-]{1,40}))",
             [this](const httplib::Request& req, httplib::Response& res) { Player(req, res); });
  server.Get(
      R"(/api/players/([A-Za-z0-9_.:\-]{1,40})/matches)",
      [this](const httplib::Request& req, httplib::Response& res) { PlayerMatches(req, res); });
  server.Get("/api/leaderboard", [this](const httplib::Request& req, httplib::Response& res) {
    Leaderboard(req, res);
  });
  server.Post("/api/pair",
              [this](const httplib::Request& req, httplib::Response& res) { Pair(req, res); });
  server.Get(R"(/api/matches/(\d{1,16})/events)",
             [this](const httplib::Request& req, httplib::Response& res) { Events(req, res); });
  server.Get(R"(/([a-z0-9_.\-]*))", [](const httplib::Request& req, httplib::Response& res) {
    const Asset* asset =
        FindAsset(req.matches[1].str().empty() ? "index.html" : req.matches[1].str());
    if (asset == nullptr) {
      res.status = 404;
      return;
    }
    res.set_content(std::string(asset->data, asset->size), asset->type);
  });
}

void Gateway::Games(httplib::Response& res) {
  std::string cached;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cached = games_json_;
  }
  if (cached.empty()) {
    absl::StatusOr<v1::ListGamesResponse> games = lobby_.ListGames();
    if (!games.ok()) return SendError(res, games.status());
    cached = JsonText(GamesJson(*games));
    std::lock_guard<std::mutex> lock(mu_);
    games_json_ = cached;
  }
  res.set_content(cached, kJsonType);
}

std::string Gateway::BoardOf(int64_t id, int plies) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = boards_.find(id);
    if (it != boards_.end() && it->second.first == plies) return it->second.second;
  }
  absl::StatusOr<v1::Match> match = lobby_.GetMatch(id);
  if (!match.ok()) return "";
  std::lock_guard<std::mutex> lock(mu_);
  // Bounded: an old entry is only a GetMatch away.
  if (boards_.size() >= kBoardCache) boards_.clear();
  boards_[id] = {match->moves_size(), match->board()};
  return match->board();
}

void Gateway::List(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<v1::ListMatchesRequest> request = ListRequest({
      .status = req.get_param_value("status"),
      .game = req.get_param_value("game"),
      .limit = req.get_param_value("limit"),
      .open = req.get_param_value("open"),
      .page = req.get_param_value("page"),
  });
  if (!request.ok()) return SendError(res, request.status());
  const std::string key = request->SerializeAsString();
  const absl::Time now = absl::Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = lists_.find(key);
    if (it != lists_.end() && now - it->second.first < kListFresh) {
      return res.set_content(it->second.second, kJsonType);
    }
  }
  absl::StatusOr<v1::ListMatchesResponse> list = lobby_.ListMatches(*request);
  if (!list.ok()) return SendError(res, list.status());
  json matches = json::array();
  int boards = 0;
  for (const v1::MatchSummary& s : list->matches()) {
    const std::string board = boards++ < kBoardsPerList ? BoardOf(s.id(), s.moves_played()) : "";
    matches.push_back(SummaryJson(s, board));
  }
  const std::string body = JsonText(json{{"matches", matches}, {"next", list->next_page_token()}});
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lists_.size() >= kListCache) lists_.clear();
    lists_[key] = {now, body};
  }
  res.set_content(body, kJsonType);
}

void Gateway::Get(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<int64_t> id = MatchId(req.matches[1].str());
  if (!id.ok()) return SendError(res, id.status());
  absl::StatusOr<v1::Match> match = lobby_.GetMatch(*id);
  if (!match.ok()) return SendError(res, match.status());
  const Reader reader =
      req.get_param_value("view") == "player" ? Reader::kPlayer : Reader::kSpectator;
  SendJson(res, 200, MatchJson(*match, reader));
}

void Gateway::Create(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<json> body = Body(req);
  if (!body.ok()) return SendError(res, body.status());
  absl::StatusOr<v1::CreateMatchRequest> request = CreateRequest(*body);
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<v1::CreateMatchResponse> created = lobby_.CreateMatch(*request);
  if (!created.ok()) return SendError(res, created.status());
  json out = {{"match", MatchJson(created->match(), Reader::kPlayer)}};
  if (request->has_take_seat()) {
    // Only to the browser that asked: it keeps the token in its own storage.
    out["seat"] = request->take_seat();
    out["token"] = created->seat_token();
  }
  SendJson(res, 201, out);
}

void Gateway::Join(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<int64_t> id = MatchId(req.matches[1].str());
  if (!id.ok()) return SendError(res, id.status());
  absl::StatusOr<json> body = Body(req);
  if (!body.ok()) return SendError(res, body.status());
  absl::StatusOr<v1::JoinMatchRequest> request = JoinRequest(*id, *body);
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<v1::JoinMatchResponse> joined = lobby_.JoinMatch(*request);
  if (!joined.ok()) return SendError(res, joined.status());
  SendJson(res, 200,
           {{"match", MatchJson(joined->match(), Reader::kPlayer)},
            {"seat", joined->seat()},
            {"token", joined->seat_token()}});
}

void Gateway::Move(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<SeatCall> call = ReadSeatCall(req, /*with_body=*/true);
  if (!call.ok()) return SendError(res, call.status());
  absl::StatusOr<v1::MakeMoveRequest> request = MoveRequest(call->id, call->body);
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<v1::MakeMoveResponse> moved = lobby_.MakeMove(*request, call->token);
  if (!moved.ok()) return SendError(res, moved.status());
  SendJson(res, 200, {{"match", MatchJson(moved->match(), Reader::kPlayer)}});
}

void Gateway::Resign(const httplib::Request& req, httplib::Response& res, bool draw) {
  // The page sends no body; one that comes must say nothing (a field was ignored, and a draw
  // "declined" with {"decline": true} was an offer that accepted the opponent's).
  absl::StatusOr<SeatCall> call = ReadSeatCall(req, /*with_body=*/!req.body.empty());
  if (!call.ok()) return SendError(res, call.status());
  if (!req.body.empty()) {
    if (absl::Status s = NoFieldsRequest(call->body, draw ? "a draw offer" : "a resignation");
        !s.ok()) {
      return SendError(res, s);
    }
  }
  absl::StatusOr<v1::Match> match =
      draw ? lobby_.OfferDraw(call->id, call->token) : lobby_.Resign(call->id, call->token);
  if (!match.ok()) return SendError(res, match.status());
  SendJson(res, 200, {{"match", MatchJson(*match, Reader::kPlayer)}});
}

void Gateway::Claim(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<SeatCall> call = ReadSeatCall(req, /*with_body=*/true);
  if (!call.ok()) return SendError(res, call.status());
  absl::StatusOr<bool> draw = SwitchRequest(call->body, "draw", /*fallback=*/false);
  if (!draw.ok()) return SendError(res, draw.status());
  // The lobby decides: too early (with the time left), on your own move, a timed match...
  absl::StatusOr<v1::Match> match = lobby_.ClaimVictory(call->id, *draw, call->token);
  if (!match.ok()) return SendError(res, match.status());
  SendJson(res, 200, {{"match", MatchJson(*match, Reader::kPlayer)}});
}

void Gateway::Rematch(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<SeatCall> call = ReadSeatCall(req, /*with_body=*/true);
  if (!call.ok()) return SendError(res, call.status());
  absl::StatusOr<bool> decline = SwitchRequest(call->body, "decline", /*fallback=*/false);
  if (!decline.ok()) return SendError(res, decline.status());
  absl::StatusOr<v1::OfferRematchResponse> r = lobby_.OfferRematch(call->id, call->token, *decline);
  if (!r.ok()) return SendError(res, r.status());
  json out = {{"match", MatchJson(r->match(), Reader::kPlayer)}};
  if (r->rematch_id() > 0) {
    // The new match's seat, only to the player who asked (as JoinMatch's token).
    out["rematch"] = {{"id", r->rematch_id()}, {"seat", r->seat()}, {"token", r->seat_token()}};
  }
  SendJson(res, 200, out);
}

void Gateway::Presence(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<SeatCall> call = ReadSeatCall(req, /*with_body=*/true);
  if (!call.ok()) return SendError(res, call.status());
  absl::StatusOr<bool> here = SwitchRequest(call->body, "here", /*fallback=*/true);
  if (!here.ok()) return SendError(res, here.status());
  if (!*here) {
    presence_.Leave(call->id, call->token);
    return SendJson(res, 200, {{"here", false}});
  }
  absl::StatusOr<bool> held = presence_.Beat(call->id, call->token);
  if (!held.ok()) return SendError(res, held.status());
  // The page beats at a third of the hold, so one lost beat costs nothing. `held`: the lobby is
  // reading the seat's stream (false until it answers and while the stream reconnects; see
  // PresenceHolds::Beat for when a refusal comes).
  SendJson(res, 200,
           {{"here", true},
            {"held", *held},
            {"beat_ms", absl::ToInt64Milliseconds(options_.presence_hold) / 3},
            {"hold_ms", absl::ToInt64Milliseconds(options_.presence_hold)},
            // This gateway's clock, for the page's countdown to a claim (the browser's own may
            // be off by minutes). Not in the match's JSON: two readers of the same events get
            // the same text.
            {"now_ms", absl::ToUnixMillis(absl::Now())}});
}

void Gateway::Replay(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<int64_t> id = MatchId(req.matches[1].str());
  if (!id.ok()) return SendError(res, id.status());
  absl::StatusOr<v1::Match> match = lobby_.GetMatch(*id);
  if (!match.ok()) return SendError(res, match.status());
  // Replaying is for finished matches: the live page shows a running one.
  if (match->status() != v1::MATCH_STATUS_FINISHED) {
    return SendError(res, absl::FailedPreconditionError("the match is not over yet"));
  }
  absl::StatusOr<std::unique_ptr<AnyGame>> game =
      CreateGame(match->spec().name(), FromProto(match->spec()));
  if (!game.ok()) return SendError(res, game.status());
  // Every position from the start, so that the page steps through them without asking again.
  json boards = json::array({BoardModel(match->spec().name(), (*game)->Render())});
  for (const v1::MoveRecord& m : match->moves()) {
    if (absl::Status s = (*game)->Play(m.move()); !s.ok()) return SendError(res, s);
    boards.push_back(BoardModel(match->spec().name(), (*game)->Render()));
  }
  json out = MatchJson(*match, Reader::kSpectator);
  out["boards"] = boards;
  // Once the match is analysed (ply analyze), each move's mark and the best move; a replay
  // without it is still a replay.
  if (absl::StatusOr<std::optional<v1::MatchAnalysis>> a = lobby_.StoredAnalysis(*id);
      a.ok() && a->has_value()) {
    out["analysis"] = AnalysisJson(**a);
  }
  SendJson(res, 200, out);
}

std::optional<std::string> Gateway::OpenStream(const httplib::Request& req,
                                               httplib::Response& res) {
  if (streams_.fetch_add(1) >= options_.max_streams) {
    streams_.fetch_sub(1);
    res.set_header("Retry-After", "5");
    SendJson(res, 503, {{"error", "this server is watching all it can; try again soon"}});
    return std::nullopt;
  }
  std::string client = ClientOf(req);
  if (!limits_.OpenStream(client)) {
    streams_.fetch_sub(1);
    SendJson(res, 429, {{"error", "too many live matches open from your address"}});
    return std::nullopt;
  }
  return client;
}

void Gateway::CloseStream(const std::string& client) {
  limits_.CloseStream(client);
  streams_.fetch_sub(1);
}

void Gateway::Events(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<int64_t> id = MatchId(req.matches[1].str());
  if (!id.ok()) return SendError(res, id.status());
  // A reconnecting EventSource sends the id of the last event it had: the moves it holds.
  std::string last = req.get_header_value("Last-Event-ID");
  if (last.empty()) last = req.get_param_value("after");
  std::optional<int> after;
  if (!last.empty()) {
    absl::StatusOr<int> ply = PlyCount(last);
    if (!ply.ok()) return SendError(res, ply.status());
    after = *ply;
  }
  const Reader reader =
      req.get_param_value("view") == "player" ? Reader::kPlayer : Reader::kSpectator;
  const std::optional<std::string> client = OpenStream(req, res);
  if (!client) return;
  std::shared_ptr<MatchFeed> feed = hub_.Feed(*id);
  if (feed == nullptr) {
    CloseStream(*client);
    return SendError(
        res, absl::UnavailableError("this server follows all the matches it can just now; the page "
                                    "asks for the match instead"));
  }
  if (absl::Status loaded = feed->WaitLoaded(absl::Seconds(5)); !loaded.ok()) {
    CloseStream(*client);
    return SendError(res, loaded);
  }
  feed->AddReader();
  auto cursor =
      std::make_shared<MatchFeed::Cursor>(MatchFeed::Cursor{.reader = reader, .after_ply = after});
  auto first = std::make_shared<bool>(true);
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, feed, cursor, first](size_t, httplib::DataSink& sink) {
        std::string out;
        if (*first) {
          // How soon a browser reconnects after the stream breaks.
          out = "retry: 1000\n\n";
          *first = false;
        }
        // Waits for news a second at a time, and between them looks whether the page is still
        // there: one that left held its thread and its slot until the keep-alive (15 s).
        const absl::Time keepalive_at = absl::Now() + options_.keepalive;
        bool more = true;
        for (;;) {
          const absl::Duration left = keepalive_at - absl::Now();
          more = feed->Next(*cursor, std::min(left, absl::Seconds(1)), out);
          if (!out.empty() || !more || left <= absl::Seconds(1)) break;
          if (sink.is_writable && !sink.is_writable()) return false;
        }
        if (out.empty()) out = ": keep-alive\n\n";
        if (!sink.write(out.data(), out.size())) return false;
        if (!more) sink.done();
        return true;
      },
      [this, feed, client = *client](bool) {
        feed->DropReader();
        CloseStream(client);
      });
}

void Gateway::Analysis(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<int64_t> id = MatchId(req.matches[1].str());
  if (!id.ok()) return SendError(res, id.status());
  const std::optional<std::string> client = OpenStream(req, res);
  if (!client) return;
  res.set_header("X-Accel-Buffering", "no");
  // The whole analysis in one turn of the provider: the lobby's events are relayed as they come
  // (its queue tells a waiting analysis its place every second), and a page that leaves cancels
  // the lobby's call. The person's address goes with it (client::SetForwardedFor, this thread),
  // so that the lobby's per-client limits count them, not this gateway.
  const int64_t match_id = *id;
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, match_id](size_t, httplib::DataSink& sink) {
        auto send = [&sink](const char* event, const json& data) {
          return SendEvent(sink, event, data);
        };
        absl::StatusOr<v1::MatchAnalysis> a =
            lobby_.Analyze(match_id, [&](const v1::AnalysisProgress& p) {
              return send("progress", AnalysisProgressJson(p));
            });
        if (a.ok()) {
          // The analysis itself: a bot match's partial one is not stored, and is drawn from this.
          send("done", AnalysisJson(*a));
        } else if (a.status().code() != absl::StatusCode::kCancelled) {
          send("failed", {{"error", ErrorText(a.status())},
                          {"code", absl::StatusCodeToString(a.status().code())}});
        }
        sink.done();
        return true;
      },
      [this, client = *client](bool) { CloseStream(client); });
}

}  // namespace ply::web
