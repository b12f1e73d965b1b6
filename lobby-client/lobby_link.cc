#include "lobby-client/lobby_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/credentials.h"
#include "common/proto_convert.h"

namespace ply::client {
namespace {

constexpr absl::Duration kCallDeadline = absl::Seconds(10);

// The numeric addresses of one HOST:PORT entry of a list, IPv4 and IPv6 apart, each as gRPC's
// ipv4:/ipv6: schemes write them.
absl::Status Resolve(const std::string& entry, std::vector<std::string>* v4,
                     std::vector<std::string>* v6) {
  std::string host, port;
  if (absl::StartsWith(entry, "[")) {
    const size_t close = entry.find("]:");
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry, "' is not [IPV6]:PORT"));
    }
    host = entry.substr(1, close - 1);
    port = entry.substr(close + 2);
  } else {
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry, "' is not HOST:PORT"));
    }
    host = entry.substr(0, colon);
    port = entry.substr(colon + 1);
  }
  int port_number = 0;
  if (!absl::SimpleAtoi(port, &port_number) || port_number <= 0 || port_number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("'", entry, "' has no port number"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve '", host, "': ", gai_strerror(e)));
  }
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, text, sizeof(text));
      v4->push_back(absl::StrCat(text, ":", port_number));
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof(text));
      v6->push_back(absl::StrCat("[", text, "]:", port_number));
    }
  }
  freeaddrinfo(found);
  return absl::OkStatus();
}

void Dedupe(std::vector<std::string>& v) {
  std::vector<std::string> unique;
  for (std::string& s : v) {
    if (std::find(unique.begin(), unique.end(), s) == unique.end()) unique.push_back(s);
  }
  v = std::move(unique);
}

thread_local std::string forwarded_for;
thread_local std::string thread_player_key;
// Written once at start-up (SetProxyCredential), before any call reads it.
std::string proxy_credential;

void AddProxyCredential(grpc::ClientContext& context) {
  if (!proxy_credential.empty()) context.AddMetadata("x-ply-proxy", proxy_credential);
}

template <class Call>
auto Unary(Call call, const std::string& token = "", const std::string& player_key = "",
           absl::Duration deadline = kCallDeadline) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  if (!player_key.empty()) {
    context.AddMetadata("x-ply-player", player_key);
  } else if (!thread_player_key.empty()) {
    context.AddMetadata("x-ply-player", thread_player_key);
  }
  if (!forwarded_for.empty()) context.AddMetadata("x-forwarded-for", forwarded_for);
  AddProxyCredential(context);
  return call(&context);
}

}  // namespace

void SetForwardedFor(std::string address) { forwarded_for = std::move(address); }
const std::string& ForwardedFor() { return forwarded_for; }
void SetPlayerKeyFor(std::string key) { thread_player_key = std::move(key); }
void SetProxyCredential(std::string secret) { proxy_credential = std::move(secret); }

absl::StatusOr<LobbyTarget> ParseServers(const std::string& servers) {
  const std::string text(absl::StripAsciiWhitespace(servers));
  for (const char* scheme : {"dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:"}) {
    if (absl::StartsWith(text, scheme)) return LobbyTarget{.target = text, .key = text};
  }
  std::vector<std::string> entries =
      absl::StrSplit(text, absl::ByAnyChar(", "), absl::SkipWhitespace());
  Dedupe(entries);
  if (entries.empty()) return absl::InvalidArgumentError("no lobby address");
  if (entries.size() == 1) return LobbyTarget{.target = entries[0], .key = entries[0]};
  std::vector<std::string> v4, v6;
  for (const std::string& e : entries) {
    if (absl::Status s = Resolve(e, &v4, &v6); !s.ok()) return s;
  }
  Dedupe(v4);
  Dedupe(v6);
  // gRPC takes a list of one address family; IPv4 is what a lobby listens on by default.
  LobbyTarget t;
  t.target = !v4.empty() ? absl::StrCat("ipv4:", absl::StrJoin(v4, ","))
                         : absl::StrCat("ipv6:", absl::StrJoin(v6, ","));
  t.authority = entries[0];
  std::sort(entries.begin(), entries.end());
  t.key = absl::StrJoin(entries, ",");
  return t;
}

const char* LobbyServiceConfig() {
  // Three attempts, a few tens of milliseconds apart: enough to step past an instance that has
  // just gone, and a lobby that is down altogether is still reported at once. A retried
  // MakeMove cannot play twice: its expected_ply no longer matches once the first one landed,
  // and the lobby then answers it as played (same seat, ply and move) rather than refusing it.
  return R"json({
    "loadBalancingConfig": [{"round_robin": {}}],
    "methodConfig": [{
      "name": [{"service": "ply.v1.LobbyService"}],
      "retryPolicy": {
        "maxAttempts": 3,
        "initialBackoff": "0.05s",
        "maxBackoff": "0.2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"]
      }
    }]
  })json";
}

LobbyClient::LobbyClient(LobbyTarget target, std::shared_ptr<grpc::ChannelCredentials> credentials)
    : address_(target.key) {
  // gRPC's own reconnection backoff grows to two minutes; a player waiting for a restarted
  // lobby should be back within seconds of it.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 4000);
  // A watch stream may be quiet for minutes: pings notice a silently dropped link (the lobby
  // accepts one every 5 s at most), so the client reconnects instead of waiting forever.
  AddClientKeepalive(args);
  args.SetServiceConfigJSON(LobbyServiceConfig());
  // Ours, not one a DNS TXT record might carry.
  args.SetInt(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, 1);
  if (!target.authority.empty()) args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, target.authority);
  channel_ = grpc::CreateCustomChannel(
      target.target, credentials ? credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = v1::LobbyService::NewStub(channel_);
}

#define PLY_UNARY(Response, Method, request, token)                                              \
  Response response;                                                                             \
  grpc::Status status =                                                                          \
      Unary([&](grpc::ClientContext* c) { return stub_->Method(c, request, &response); }, token, \
            player_key_);                                                                        \
  if (!status.ok()) return ToAbslStatus(status);                                                 \
  return response

absl::StatusOr<v1::ListGamesResponse> LobbyClient::ListGames() {
  PLY_UNARY(v1::ListGamesResponse, ListGames, v1::ListGamesRequest(), "");
}
absl::StatusOr<v1::CreateMatchResponse> LobbyClient::CreateMatch(
    const v1::CreateMatchRequest& request) {
  PLY_UNARY(v1::CreateMatchResponse, CreateMatch, request, "");
}
absl::StatusOr<v1::ListMatchesResponse> LobbyClient::ListMatches(
    const v1::ListMatchesRequest& request) {
  PLY_UNARY(v1::ListMatchesResponse, ListMatches, request, "");
}
absl::StatusOr<v1::Match> LobbyClient::GetMatch(int64_t match_id) {
  v1::GetMatchRequest request;
  request.set_match_id(match_id);
  PLY_UNARY(v1::Match, GetMatch, request, "");
}
absl::StatusOr<std::optional<v1::MatchAnalysis>> LobbyClient::StoredAnalysis(int64_t match_id) {
  v1::AnalyzeMatchRequest request;
  request.set_match_id(match_id);
  request.set_stored_only(true);
  std::optional<v1::MatchAnalysis> analysis;
  grpc::Status status = Unary(
      [&](grpc::ClientContext* c) {
        auto reader = stub_->AnalyzeMatch(c, request);
        v1::AnalyzeMatchEvent e;
        while (reader->Read(&e)) {
          if (e.has_analysis()) analysis = e.analysis();
        }
        return reader->Finish();
      },
      "", player_key_);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) return std::optional<v1::MatchAnalysis>();
  if (!status.ok()) return ToAbslStatus(status);
  return analysis;
}
absl::StatusOr<v1::MatchAnalysis> LobbyClient::Analyze(
    int64_t match_id, const std::function<bool(const v1::AnalysisProgress&)>& on_progress) {
  v1::AnalyzeMatchRequest request;
  request.set_match_id(match_id);
  std::optional<v1::MatchAnalysis> analysis;
  bool left = false;
  grpc::Status status = Unary(
      [&](grpc::ClientContext* c) {
        auto reader = stub_->AnalyzeMatch(c, request);
        v1::AnalyzeMatchEvent e;
        while (reader->Read(&e)) {
          if (e.has_analysis()) {
            analysis = e.analysis();
          } else if (e.has_progress() && on_progress && !left && !on_progress(e.progress())) {
            left = true;
            c->TryCancel();
          }
        }
        return reader->Finish();
      },
      "", player_key_, absl::Minutes(15));
  if (left) return absl::CancelledError("the analysis was left before it ended");
  if (!status.ok()) return ToAbslStatus(status);
  if (!analysis) return absl::InternalError("the lobby ended the analysis without sending it");
  return *std::move(analysis);
}
absl::StatusOr<v1::JoinMatchResponse> LobbyClient::JoinMatch(const v1::JoinMatchRequest& request) {
  PLY_UNARY(v1::JoinMatchResponse, JoinMatch, request, "");
}
absl::StatusOr<v1::MakeMoveResponse> LobbyClient::MakeMove(const v1::MakeMoveRequest& request,
                                                           const std::string& token) {
  PLY_UNARY(v1::MakeMoveResponse, MakeMove, request, token);
}
absl::StatusOr<v1::Match> LobbyClient::Resign(int64_t match_id, const std::string& token) {
  v1::ResignRequest request;
  request.set_match_id(match_id);
  PLY_UNARY(v1::Match, Resign, request, token);
}
absl::StatusOr<v1::Match> LobbyClient::ClaimVictory(int64_t match_id, bool draw,
                                                    const std::string& token) {
  v1::ClaimVictoryRequest request;
  request.set_match_id(match_id);
  request.set_draw(draw);
  PLY_UNARY(v1::Match, ClaimVictory, request, token);
}

absl::StatusOr<v1::HereResponse> LobbyClient::Here(int64_t match_id, const std::string& token,
                                                   absl::Duration wait) {
  v1::HereRequest request;
  request.set_match_id(match_id);
  v1::HereResponse response;
  grpc::Status status =
      Unary([&](grpc::ClientContext* c) { return stub_->Here(c, request, &response); }, token,
            player_key_, wait);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

absl::StatusOr<v1::Match> LobbyClient::OfferDraw(int64_t match_id, const std::string& token) {
  v1::OfferDrawRequest request;
  request.set_match_id(match_id);
  PLY_UNARY(v1::Match, OfferDraw, request, token);
}
absl::StatusOr<v1::OfferRematchResponse> LobbyClient::OfferRematch(int64_t match_id,
                                                                   const std::string& token,
                                                                   bool decline) {
  v1::OfferRematchRequest request;
  request.set_match_id(match_id);
  request.set_decline(decline);
  PLY_UNARY(v1::OfferRematchResponse, OfferRematch, request, token);
}
absl::StatusOr<v1::LoginResponse> LobbyClient::Login(const std::string& name) {
  v1::LoginRequest request;
  request.set_name(name);
  PLY_UNARY(v1::LoginResponse, Login, request, "");
}
absl::StatusOr<v1::Player> LobbyClient::GetPlayer(const std::string& name) {
  v1::GetPlayerRequest request;
  request.set_name(name);
  PLY_UNARY(v1::Player, GetPlayer, request, "");
}
absl::StatusOr<v1::ListMatchesResponse> LobbyClient::ListPlayerMatches(
    const v1::ListPlayerMatchesRequest& request) {
  PLY_UNARY(v1::ListMatchesResponse, ListPlayerMatches, request, "");
}
absl::StatusOr<v1::LeaderboardResponse> LobbyClient::Leaderboard(const std::string& game,
                                                                 int limit) {
  v1::LeaderboardRequest request;
  request.set_game(game);
  request.set_limit(limit);
  PLY_UNARY(v1::LeaderboardResponse, Leaderboard, request, "");
}
#undef PLY_UNARY

void CallCanceller::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

void CallCanceller::Attach(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mu_);
  context_ = context;
  if (cancelled_) context_->TryCancel();
}

void CallCanceller::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  context_ = nullptr;
}

absl::Status LobbyClient::Pair(const v1::PairRequest& request,
                               const std::function<bool(const v1::PairEvent&)>& on_event,
                               absl::Duration wait, CallCanceller* canceller) {
  bool left = false;
  grpc::Status status = Unary(
      [&](grpc::ClientContext* c) {
        if (canceller != nullptr) canceller->Attach(c);
        auto reader = stub_->Pair(c, request);
        v1::PairEvent e;
        while (reader->Read(&e)) {
          if (!left && !on_event(e)) {
            // Closing the stream is how a player leaves the queue.
            left = true;
            c->TryCancel();
          }
        }
        grpc::Status finished = reader->Finish();
        if (canceller != nullptr) canceller->Detach();
        return finished;
      },
      "", player_key_, wait);
  if (left || status.error_code() == grpc::StatusCode::CANCELLED) {
    return absl::CancelledError("left the pairing queue");
  }
  return ToAbslStatus(status);
}

namespace {

// What gRPC's own words for a failed connection mean, said for people; "" when `message` is
// none of them (then the lobby itself answered, and its sentence is what to show).
std::string TransportProblem(const std::string& message, const std::string& address) {
  const auto has = [&](const char* part) { return message.find(part) != std::string::npos; };
  const std::string host = address.substr(0, address.rfind(':'));
  if (has("DNS resolution failed") || has("Domain name not found") || has("ARES_") ||
      has("Name or service not known")) {
    return absl::StrCat("cannot find the lobby's host ", host,
                        ": the name does not resolve (check --server or $PLY_SERVER)");
  }
  if (has("Connection refused")) {
    return absl::StrCat("nothing is listening at ", address,
                        " (connection refused): is the lobby running? (`make up` starts the "
                        "local stack)");
  }
  if (has("Network is unreachable") || has("No route to host")) {
    return absl::StrCat("cannot reach ", address, ": no network route to it");
  }
  if (has("Connection timed out") || has("Timeout occurred") || has("Deadline Exceeded")) {
    return absl::StrCat("cannot reach ", address, ": the connection timed out");
  }
  if (has("SSL") || has("ssl") || has("TLS") || has("handshake") || has("certificate")) {
    return absl::StrCat("the secure connection to ", address,
                        " failed: does the lobby use TLS, and does --tls_ca (or the system's "
                        "roots, --tls) vouch for its certificate?");
  }
  if (has("Socket closed") || has("Connection reset") || has("GOAWAY") || has("Broken pipe") ||
      has("failed to connect to all addresses") || has("connections to all backends failing") ||
      has("Failed to connect to remote host") || has("Connection lost")) {
    return absl::StrCat("cannot reach the lobby at ", address,
                        ": the connection failed; is it running? (`make up` starts the local "
                        "stack)");
  }
  return "";
}

}  // namespace

bool ReachedNoLobby(const absl::Status& status) {
  return (status.code() == absl::StatusCode::kUnavailable ||
          status.code() == absl::StatusCode::kInternal ||
          status.code() == absl::StatusCode::kUnknown) &&
         !TransportProblem(std::string(status.message()), "lobby").empty();
}

std::string Describe(const absl::Status& status, const std::string& address) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable: {
      const std::string transport = TransportProblem(std::string(status.message()), address);
      if (!transport.empty()) return transport;
      // The lobby answered: it cannot do this now (its database or bots are away).
      return absl::StrCat("the lobby cannot do this now: ", status.message(),
                          " (try again in a few seconds)");
    }
    case absl::StatusCode::kDeadlineExceeded:
      return absl::StrCat("the lobby at ", address, " did not answer in time; try again");
    case absl::StatusCode::kCancelled:
      return "the call was cancelled";
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown: {
      const std::string transport = TransportProblem(std::string(status.message()), address);
      if (!transport.empty()) return transport;
      return absl::StrCat("the lobby failed: ", status.message());
    }
    default:
      return std::string(status.message());
  }
}

MatchStream::MatchStream(LobbyClient* lobby, int64_t match_id, std::string token,
                         bool follow_rematch)
    : lobby_(lobby),
      match_id_(match_id),
      token_(std::move(token)),
      follow_rematch_(follow_rematch),
      forwarded_for_(token_.empty() ? "" : forwarded_for) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  // The destructor does not run for a constructor that throws: a thread that cannot start
  // (std::system_error) must not leave the pipe open. Everything else here cleans up itself.
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (...) {
    CloseWake();
    throw;
  }
}

void MatchStream::CloseWake() {
  for (int& fd : wake_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

MatchStream::~MatchStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  stop_cv_.notify_all();
  thread_.join();
  CloseWake();
}

std::vector<MatchStream::Item> MatchStream::Take() {
  char drain[64];
  while (read(wake_[0], drain, sizeof(drain)) > 0) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(items_);
}

void MatchStream::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(item));
  }
  const char one = 1;
  (void)!write(wake_[1], &one, 1);
}

bool MatchStream::Wait(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !stop_cv_.wait_for(lock, absl::ToChronoNanoseconds(d), [this] { return stopping_; });
}

void MatchStream::Run() {
  int seen = -1;  // the last ply delivered; -1 until the first snapshot
  absl::Duration backoff = absl::Milliseconds(250);
  bool lost = false;
  bool connected = false;  // some call of this stream has had an answer
  int gaps = 0;            // resumptions after a gap in a row
  for (;;) {
    grpc::ClientContext context;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      context_ = &context;
    }
    if (!token_.empty()) context.AddMetadata("authorization", "Bearer " + token_);
    if (!forwarded_for_.empty()) context.AddMetadata("x-forwarded-for", forwarded_for_);
    AddProxyCredential(context);
    v1::WatchMatchRequest request;
    request.set_match_id(match_id_);
    if (seen >= 0) request.set_after_ply(seen);
    request.set_follow_rematch(follow_rematch_);
    std::unique_ptr<grpc::ClientReader<v1::MatchEvent>> reader =
        lobby_->stub()->WatchMatch(&context, request);
    v1::MatchEvent event;
    bool got_any = false;
    bool gap = false;
    while (reader->Read(&event)) {
      if (!got_any && lost) {
        Push({.notice = "Reconnected to the lobby."});
        lost = false;
      }
      got_any = connected = true;
      backoff = absl::Milliseconds(250);
      if (event.has_move_applied()) {
        const int ply = event.move_applied().move().ply();
        // Another instance may repeat what the last one sent, or (a lobby bug) skip a move.
        if (seen >= 0 && ply <= seen) continue;
        if (seen >= 0 && ply != seen + 1) {
          gap = true;
          context.TryCancel();
          break;
        }
        seen = ply;
        gaps = 0;
      }
      if (event.has_snapshot()) seen = event.snapshot().moves_size();
      if (event.has_resync()) seen = event.resync().moves_size();
      Push({.event = event});
    }
    const grpc::Status status = reader->Finish();
    {
      std::lock_guard<std::mutex> lock(mu_);
      context_ = nullptr;
      if (stopping_) return;
    }
    if (gap) {
      // Resume after the last move delivered; if the lobby keeps skipping, start over from a
      // snapshot.
      if (++gaps > 2) seen = -1;
      continue;
    }
    if (status.ok()) {
      Push({.ended = true});
      return;
    }
    switch (status.error_code()) {
      case grpc::StatusCode::NOT_FOUND:
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::PERMISSION_DENIED:
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::UNIMPLEMENTED:
        Push({.ended = true, .error = ToAbslStatus(status)});
        return;
      case grpc::StatusCode::OUT_OF_RANGE:
        // Our after_ply is ahead of what the lobby has (a database restored from a backup?):
        // start over from a full snapshot.
        seen = -1;
        continue;
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        // We fell behind; pick up from the last move we have, at once.
        if (got_any) continue;
        break;
      default:
        break;
    }
    if (!connected) {
      // Never reached: a wrong address or a lobby that is down, said at once like any other
      // command does, not retried for ever.
      Push({.ended = true, .error = ToAbslStatus(status)});
      return;
    }
    lost = true;
    Push({.notice = absl::StrFormat("Connection to the lobby lost (%s); retrying in %.1f s...",
                                    status.error_message(), absl::ToDoubleSeconds(backoff))});
    if (!Wait(backoff)) return;
    backoff = std::min(backoff * 2, absl::Seconds(8));
  }
}

}  // namespace ply::client
