// ply-web's player routes: login, the player pages and leaderboard, and quick pairing (its SSE
// stream relayed from a worker thread). The match routes are gateway.cc's.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client-web/gateway.h"
#include "client-web/http_reply.h"
#include "client-web/input_check.h"
#include "client-web/match_json.h"

namespace ply::web {
namespace {

using nlohmann::json;

// How often a pairing stream with nothing to say writes a comment, to find a page that has gone.
constexpr std::chrono::milliseconds kPairBeat(250);

}  // namespace

void Gateway::Login(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<json> body = Body(req);
  if (!body.ok()) return SendError(res, body.status());
  absl::StatusOr<v1::LoginRequest> request = LoginRequest(*body);
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<v1::LoginResponse> login = lobby_.Login(request->name());
  if (!login.ok()) return SendError(res, login.status());
  json out = {{"player", PlayerJson(login->player())}};
  // Only when the name was just registered: the page keeps it in its own storage.
  if (!login->player_key().empty()) out["key"] = login->player_key();
  SendJson(res, 200, out);
}

void Gateway::Player(const httplib::Request& req, httplib::Response& res) {
  const std::string name = req.matches[1].str();
  if (absl::Status s = CheckPlayerName(name); !s.ok()) return SendError(res, s);
  absl::StatusOr<v1::Player> player = lobby_.GetPlayer(name);
  if (!player.ok()) return SendError(res, player.status());
  SendJson(res, 200, PlayerJson(*player));
}

void Gateway::PlayerMatches(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<v1::ListPlayerMatchesRequest> request =
      PlayerMatchesRequest(req.matches[1].str(), {.game = req.get_param_value("game"),
                                                  .limit = req.get_param_value("limit"),
                                                  .page = req.get_param_value("page")});
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<v1::ListMatchesResponse> list = lobby_.ListPlayerMatches(*request);
  if (!list.ok()) return SendError(res, list.status());
  json matches = json::array();
  for (const v1::MatchSummary& s : list->matches()) matches.push_back(SummaryJson(s, ""));
  SendJson(res, 200, {{"matches", matches}, {"next", list->next_page_token()}});
}

void Gateway::Leaderboard(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<v1::LeaderboardRequest> request = LeaderboardRequest(
      {.game = req.get_param_value("game"), .limit = req.get_param_value("limit")});
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<v1::LeaderboardResponse> board =
      lobby_.Leaderboard(request->game(), request->limit());
  if (!board.ok()) return SendError(res, board.status());
  SendJson(res, 200, LeaderboardJson(*board));
}

void Gateway::Pair(const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<std::string> key = PlayerKey(req.get_header_value("Authorization"));
  if (!key.ok()) return SendError(res, key.status());
  if (key->empty()) {
    return SendError(res, absl::UnauthenticatedError(
                              "quick pairing is for players: log in (or register a name) first"));
  }
  absl::StatusOr<json> body = Body(req);
  if (!body.ok()) return SendError(res, body.status());
  absl::StatusOr<v1::PairRequest> request = PairRequest(*body);
  if (!request.ok()) return SendError(res, request.status());
  const std::optional<std::string> client = OpenStream(req, res);
  if (!client) return;
  res.set_header("X-Accel-Buffering", "no");
  // The queue's events relayed as they come, as server-sent events: "queued", "waiting",
  // "bot_offer", then "paired" (with the seat's token) or "failed". The lobby's stream runs on
  // a thread of its own while this one writes its events, and a comment when there are none
  // for kPairBeat: a page that has gone (its tab closed) fails a write within two beats, and its
  // player leaves the lobby's queue then, not at the lobby's next event (a ghost entry would be
  // paired with the next person who asks).
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, request = *request, key = *key, address = ClientAddress(req)](
          size_t, httplib::DataSink& sink) {
        struct Relay {
          std::mutex mu;
          std::condition_variable cv;
          std::deque<json> events;
          bool ended = false;
          absl::Status status;
        };
        auto relay = std::make_shared<Relay>();
        auto canceller = std::make_shared<client::CallCanceller>();
        std::thread lobby_call([this, relay, canceller, request, key, address] {
          client::SetForwardedFor(address);
          client::SetPlayerKeyFor(key);
          absl::Status s = lobby_.Pair(
              request,
              [&](const v1::PairEvent& e) {
                std::lock_guard<std::mutex> lock(relay->mu);
                relay->events.push_back(PairEventJson(e));
                relay->cv.notify_all();
                return true;
              },
              absl::Hours(1), canceller.get());
          std::lock_guard<std::mutex> lock(relay->mu);
          relay->ended = true;
          relay->status = s;
          relay->cv.notify_all();
        });
        auto write = [&sink](const std::string& text) {
          return sink.write(text.data(), text.size());
        };
        auto send = [&sink](const std::string& event, const json& data) {
          return SendEvent(sink, event, data);
        };
        bool open = send("queued", json::object());
        while (open) {
          std::deque<json> events;
          bool ended = false;
          absl::Status status;
          {
            std::unique_lock<std::mutex> lock(relay->mu);
            relay->cv.wait_for(lock, kPairBeat,
                               [&] { return !relay->events.empty() || relay->ended; });
            events.swap(relay->events);
            ended = relay->ended;
            status = relay->status;
          }
          for (const json& e : events) {
            open = open && send(e.begin().key(), e.begin().value());
          }
          if (!open) break;
          if (ended) {
            if (!status.ok() && status.code() != absl::StatusCode::kCancelled) {
              send("failed", {{"error", ErrorText(status)},
                              {"code", absl::StatusCodeToString(status.code())}});
            }
            break;
          }
          if (events.empty()) open = write(": still looking\n\n");
        }
        // Out of the lobby's queue (a no-op once the stream has ended by itself).
        canceller->Cancel();
        lobby_call.join();
        sink.done();
        return true;
      },
      [this, client = *client](bool) { CloseStream(client); });
}

}  // namespace ply::web
