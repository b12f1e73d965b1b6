#include "lobby-server/lobby.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bot-service/proto_convert.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "lobby-server/token.h"

namespace ply::lobby {

struct Lobby::PendingMove {
  MoveCommit commit;
  // The game with the move played.
  std::unique_ptr<AnyGame> after;
};

struct Lobby::Live {
  std::mutex mu;
  // A move of this match is being committed without `mu` held (TryMakeMove): until it lands,
  // everyone else waits on `settled`, so nobody sees the match half-way.
  bool committing = false;
  std::condition_variable settled;
  // Its first load failed and it left the map; a caller that still holds it must look again
  // (else a watcher could register on a copy nobody updates).
  bool dropped = false;
  // Memory is as the database has it and nothing is in flight: usable without waiting.
  bool Settled() const { return loaded && !stale && !committing; }
  int64_t id = 0;
  // False until the first load; true again when memory may disagree with the database.
  bool loaded = false;
  bool stale = false;
  MatchRecord rec;
  const GameInfo* info = nullptr;
  std::unique_ptr<AnyGame> game;
  std::vector<std::shared_ptr<EventSink>> watchers;
  // The ply a bot request is out for (-1: none), and how its attempts went.
  int bot_ply = -1;
  int bot_attempts = 0;
  absl::Time bot_first_failure = absl::InfinitePast();
  std::shared_ptr<BotClient::PendingMove> bot_call;
  // The ply whose flag check is scheduled (-1: none).
  int flag_ply = -1;
  // This instance drives the match's timed work (its bot, its clock's flag).
  bool owned = false;
  // A ClockTick is scheduled.
  bool clock_ticking = false;
};

namespace {

constexpr size_t kMaxNameBytes = 40;
// Bounds on what a request may carry, so that errors never echo a huge text back.
constexpr int kMaxOptions = 32;
constexpr size_t kMaxTextBytes = 64;
constexpr int64_t kMaxInitialMs = 24LL * 3600 * 1000;
constexpr int64_t kMinInitialMs = 100;
constexpr int64_t kMaxIncrementMs = 3600 * 1000;

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

absl::StatusOr<std::string> CleanName(const std::string& raw) {
  std::string name;
  for (char c : raw) {
    // Control characters would garble other players' terminals.
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) continue;
    name += c;
  }
  const size_t first = name.find_first_not_of(' ');
  if (first == std::string::npos) return absl::InvalidArgumentError("a display name is required");
  name = name.substr(first, name.find_last_not_of(' ') - first + 1);
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a display name has at most ", kMaxNameBytes, " bytes"));
  }
  return name;
}

v1::MoveRecord MoveToProto(const MoveRecord& m) {
  v1::MoveRecord p;
  p.set_ply(m.ply);
  p.set_seat(m.seat);
  p.set_move(m.move);
  p.set_think_ms(m.think_ms);
  p.set_clock_ms(m.clock_ms);
  p.set_time_ms(m.time_ms);
  if (!m.bot_json.empty()) {
    (void)google::protobuf::util::JsonStringToMessage(m.bot_json, p.mutable_bot());
  }
  return p;
}

v1::MatchResult ResultToProto(const MatchResult& r) {
  v1::MatchResult p;
  p.set_winner(r.winner);
  p.set_reason(static_cast<v1::EndReason>(r.reason));
  p.set_text(r.text);
  return p;
}

v1::MatchEvent Event() {
  v1::MatchEvent e;
  e.set_time_ms(NowMs());
  return e;
}

// The move_applied event of `mv`, with every seat's clock after it and the game after it.
v1::MatchEvent MoveEvent(const MoveRecord& mv, const std::vector<int64_t>& clocks,
                         const AnyGame& after) {
  v1::MatchEvent e = Event();
  v1::MoveApplied* applied = e.mutable_move_applied();
  *applied->mutable_move() = MoveToProto(mv);
  for (int64_t c : clocks) applied->add_clocks_ms(c);
  applied->set_to_move(after.Status().over ? -1 : after.SideToMove());
  applied->set_board(after.Render());
  return e;
}

// The events of the moves after `from_ply` in `moves`, replayed on `game` (at `from_ply`, with
// `clocks` the seats' clocks then; both advance). Empty when a stored move does not replay.
std::vector<v1::MatchEvent> MovesAfter(int from_ply, const std::vector<MoveRecord>& moves,
                                       AnyGame& game, std::vector<int64_t>& clocks) {
  std::vector<v1::MatchEvent> events;
  for (const MoveRecord& mv : moves) {
    if (mv.ply <= from_ply) continue;
    if (!game.Play(mv.move).ok()) return {};
    if (mv.seat >= 0 && mv.seat < static_cast<int>(clocks.size())) clocks[mv.seat] = mv.clock_ms;
    events.push_back(MoveEvent(mv, clocks, game));
  }
  return events;
}

MatchVersion VersionOf(const MatchRecord& r) {
  int open = 0;
  for (const SeatRecord& s : r.seats) open += s.taken() ? 0 : 1;
  return {.ply = r.ply, .status = r.status, .draw_offer = r.draw_offer, .open_seats = open};
}

// A match with work that goes on without any call: a clock that can fall, or a bot seat.
bool HasTimedWork(const MatchRecord& r) {
  if (r.time_initial_ms) return true;
  return std::any_of(r.seats.begin(), r.seats.end(),
                     [](const SeatRecord& s) { return s.kind == SeatKind::kBot; });
}

}  // namespace

Lobby::Lobby(MatchStore* store, BotTargets* bots, Executor* executor, LobbyOptions options)
    : store_(store), bots_(bots), executor_(executor), options_(options) {}

Lobby::~Lobby() { Shutdown(); }

void Lobby::Shutdown() {
  if (stopping_.exchange(true)) return;
  std::vector<std::shared_ptr<Live>> lives;
  {
    std::lock_guard<std::mutex> lock(map_mu_);
    for (auto& [id, live] : matches_) lives.push_back(live);
  }
  // Bot calls end before the matches are handed back, so that the next owner's request for the
  // same ply is the only one.
  for (auto& live : lives) {
    std::lock_guard<std::mutex> l(live->mu);
    if (live->bot_call) live->bot_call->Cancel();
    live->owned = false;
  }
  store_->DisownAll();
  for (auto& live : lives) {
    std::lock_guard<std::mutex> l(live->mu);
    for (auto& w : live->watchers) {
      w->Close(absl::UnavailableError(
          "this lobby instance is shutting down: reconnect (another instance serves the match)"));
    }
    live->watchers.clear();
  }
}

absl::Status Lobby::Resume() {
  // The handlers run on the store's threads, which must not wait for a match's lock (its
  // holder may be inside the store): the work goes to the executor.
  PeerHandlers handlers{
      .changed =
          [this](const std::vector<MatchChange>& changes) {
            peers_.store(std::max(1, peers_.load()), std::memory_order_relaxed);
            if (changes.empty()) return;
            executor_->PostAt(absl::Now(), [this, changes] { OnPeerChanges(changes); });
          },
      .resync = [this] { executor_->PostAt(absl::Now(), [this] { ResyncAll(); }); },
      .released = [this] { executor_->PostAt(absl::Now(), [this] { ClaimOrphans(); }); },
      .ownership_lost = [this] { executor_->PostAt(absl::Now(), [this] { OwnershipLost(); }); },
  };
  if (absl::Status s = store_->StartPeers(std::move(handlers)); !s.ok()) return s;
  if (absl::StatusOr<int> peers = store_->Peers(); peers.ok()) peers_ = *peers;
  // Everything ownerless now, before serving: a restarted lobby goes on where it stopped.
  while (ClaimOrphans() >= options_.claim_batch) {
  }
  claim_scheduled_ = true;
  executor_->PostAt(absl::Now() + options_.claim_interval, [this] { ClaimTick(); });
  return absl::OkStatus();
}

int Lobby::ClaimOrphans() {
  if (stopping_) return 0;
  absl::StatusOr<std::vector<int64_t>> ids = store_->ClaimOrphans(options_.claim_batch);
  if (!ids.ok()) return 0;
  for (int64_t id : *ids) {
    metrics_.leases_taken.fetch_add(1, std::memory_order_relaxed);
    // Whatever is cached may be behind: the previous owner moved it on.
    absl::Status s = WithMatch(
        id,
        [&](Live& live) {
          live.owned = true;
          live.flag_ply = -1;
          if (live.bot_call == nullptr) live.bot_ply = -1;
          // Finished meanwhile: AfterChange hands it back.
          AfterChange(live);
          return absl::OkStatus();
        },
        Fresh::kReload);
    if (!s.ok()) store_->Disown(id);
  }
  return static_cast<int>(ids->size());
}

void Lobby::ClaimTick() {
  if (stopping_) return;
  ClaimOrphans();
  if (absl::StatusOr<int> peers = store_->Peers(); peers.ok()) peers_ = *peers;
  // Jitter, so that instances started together do not claim in step.
  const absl::Duration next =
      options_.claim_interval * (0.75 + 0.5 * static_cast<double>(Mix64(NowMs()) % 1000) / 1000);
  executor_->PostAt(absl::Now() + next, [this] { ClaimTick(); });
}

void Lobby::TryOwn(Live& live) {
  if (live.owned || stopping_ || live.rec.status != MatchStatus::kActive ||
      !HasTimedWork(live.rec)) {
    return;
  }
  absl::StatusOr<bool> owned = store_->Own(live.id);
  live.owned = owned.ok() && *owned;
}

void Lobby::OnPeerChanges(const std::vector<MatchChange>& changes) {
  for (const MatchChange& c : changes) {
    std::shared_ptr<Live> live = Cached(c.match_id);
    if (live == nullptr) continue;
    bool reload = false;
    {
      std::lock_guard<std::mutex> lock(live->mu);
      // Old news: this copy has seen that ply already and moved past it.
      if (live->loaded && c.ply < live->rec.ply) continue;
      live->stale = true;
      reload = !live->watchers.empty() || live->owned;
    }
    if (!reload) continue;
    bool watched = false;
    (void)WithMatch(c.match_id, [&](Live& l) {
      watched = !l.watchers.empty();
      return absl::OkStatus();
    });
    if (watched) {
      metrics_.peer_event_lag_ms.Observe(static_cast<double>(NowMs() - c.time_ms));
    }
  }
}

void Lobby::ResyncAll() {
  metrics_.resyncs.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::shared_ptr<Live>> lives;
  {
    std::lock_guard<std::mutex> lock(map_mu_);
    for (auto& [id, live] : matches_) lives.push_back(live);
  }
  for (auto& live : lives) {
    bool reload = false;
    {
      std::lock_guard<std::mutex> lock(live->mu);
      live->stale = true;
      reload = !live->watchers.empty() || live->owned;
    }
    if (reload) (void)WithMatch(live->id, [](Live&) { return absl::OkStatus(); });
  }
}

void Lobby::OwnershipLost() {
  std::vector<std::shared_ptr<Live>> lives;
  {
    std::lock_guard<std::mutex> lock(map_mu_);
    for (auto& [id, live] : matches_) lives.push_back(live);
  }
  for (auto& live : lives) {
    std::lock_guard<std::mutex> lock(live->mu);
    if (!live->owned) continue;
    // Another instance may own it already: its bot request must be the only one.
    live->owned = false;
    if (live->bot_call) live->bot_call->Cancel();
    live->bot_call = nullptr;
    live->bot_ply = -1;
    live->flag_ply = -1;
  }
}

std::string Lobby::MetricsText() {
  LobbyGauges g;
  std::vector<std::shared_ptr<Live>> lives;
  {
    std::lock_guard<std::mutex> lock(map_mu_);
    for (auto& [id, live] : matches_) lives.push_back(live);
  }
  g.cached_matches = static_cast<int64_t>(lives.size());
  for (auto& live : lives) {
    std::unique_lock<std::mutex> lock(live->mu, std::try_to_lock);
    if (!lock.owns_lock()) continue;
    g.active_matches += live->rec.status == MatchStatus::kActive ? 1 : 0;
    g.watchers += static_cast<int64_t>(live->watchers.size());
    g.leases_held += live->owned ? 1 : 0;
  }
  g.peers = peers_.load();
  const PeerCounters c = store_->peer_counters();
  g.notifications = c.notifications;
  g.db_errors = c.errors;
  g.db_reconnects = c.reconnects;
  return RenderMetrics(metrics_, g);
}

v1::ListGamesResponse Lobby::ListGames() const {
  v1::ListGamesResponse response;
  for (const GameInfo& info : ply::ListGames()) {
    v1::GameInfo* g = response.add_games();
    ply::ToProto(info, g);
    // Levels a bot seat can use only when there are bots.
    if (bots_ == nullptr) g->clear_levels();
  }
  return response;
}

absl::Status Lobby::WithMatch(int64_t id, const std::function<absl::Status(Live&)>& fn,
                              Fresh fresh) {
  if (id <= 0) return absl::InvalidArgumentError("a match id is a positive number");
  bool retried = false;
  bool reloaded = false;
  for (;;) {
    std::shared_ptr<Live> live;
    {
      std::lock_guard<std::mutex> lock(map_mu_);
      auto it = matches_.find(id);
      if (it == matches_.end()) {
        MakeRoomLocked();
        live = std::make_shared<Live>();
        live->id = id;
        matches_.emplace(id, live);
      } else {
        live = it->second;
      }
    }
    std::unique_lock<std::mutex> lock(live->mu);
    // A commit in flight lands within the statement timeout, unless the database link hangs.
    if (!live->settled.wait_for(lock, std::chrono::seconds(10),
                                [&] { return !live->committing; })) {
      return absl::UnavailableError(
          absl::StrCat("match ", id, " is still waiting for its last move to be stored; retry"));
    }
    // Its first load failed meanwhile and it left the map: look again.
    if (live->dropped) continue;
    if (live->loaded && !live->stale && fresh == Fresh::kReload) live->stale = true;
    if (live->loaded && !live->stale && fresh == Fresh::kChecked && HasPeers()) {
      absl::StatusOr<MatchVersion> version = store_->LoadVersion(id);
      if (!version.ok()) return version.status();
      if (!(*version == VersionOf(live->rec))) live->stale = true;
    }
    fresh = Fresh::kCached;
    reloaded = !live->loaded || live->stale;
    if (reloaded) {
      absl::Status s = Reload(*live);
      if (!s.ok()) {
        if (!live->loaded) {
          live->dropped = true;
          std::lock_guard<std::mutex> map_lock(map_mu_);
          auto it = matches_.find(id);
          if (it != matches_.end() && it->second == live) matches_.erase(it);
        }
        return s;
      }
      AfterChange(*live);
    }
    absl::Status s = fn(*live);
    // Another instance wrote first (ABORTED), or may have (a refusal because of the match's
    // state, from a copy that other instances can have moved on): once more, on the database's
    // state. `fn` writes nothing before such an answer, so running it again is safe.
    const bool maybe_behind =
        absl::IsAborted(s) || (absl::IsFailedPrecondition(s) && HasPeers() && !reloaded);
    if (maybe_behind && !retried) {
      retried = true;
      live->stale = true;
      continue;
    }
    return s;
  }
}

size_t Lobby::CachedMatches() {
  std::lock_guard<std::mutex> lock(map_mu_);
  return matches_.size();
}

void Lobby::MakeRoomLocked() {
  if (matches_.size() < options_.cache_size) return;
  for (auto i = matches_.begin(); i != matches_.end();) {
    std::unique_lock<std::mutex> l(i->second->mu, std::try_to_lock);
    const bool idle = l.owns_lock() && i->second->loaded &&
                      i->second->rec.status == MatchStatus::kFinished &&
                      i->second->watchers.empty();
    l = {};
    i = idle ? matches_.erase(i) : std::next(i);
  }
}

absl::Status Lobby::Reload(Live& live) {
  // A copy that is a few moves behind (another instance moved the match on) reads and replays
  // only the moves it lacks; anything else is loaded and replayed whole.
  const bool behind = live.loaded && live.game != nullptr;
  absl::StatusOr<MatchRecord> rec =
      behind ? store_->LoadMatchAfter(live.id, live.rec.ply) : store_->LoadMatch(live.id);
  if (!rec.ok()) return rec.status();
  const GameInfo* info = FindGame(rec->game);
  if (info == nullptr) {
    return absl::InternalError(absl::StrCat("match ", live.id, " is of game '", rec->game,
                                            "', which this lobby does not know"));
  }
  const int old_ply = behind ? live.rec.ply : -1;
  std::unique_ptr<AnyGame> game;
  // Its watchers get the moves they missed as they would have seen them here.
  std::vector<v1::MatchEvent> missed;
  if (behind && rec->ply >= old_ply && static_cast<int>(rec->moves.size()) == rec->ply - old_ply) {
    game = live.game->Clone();
    std::vector<int64_t> clocks;
    for (const SeatRecord& seat : live.rec.seats) clocks.push_back(seat.clock_ms);
    if (!live.rec.time_initial_ms) clocks.assign(clocks.size(), 0);
    missed = MovesAfter(old_ply, rec->moves, *game, clocks);
    // A stored move that does not follow this copy: load the match whole below.
    if (missed.size() != rec->moves.size()) game = nullptr;
  }
  if (game != nullptr) {
    if (live.watchers.empty()) missed.clear();
    std::vector<MoveRecord> moves = live.rec.moves;
    for (MoveRecord& m : rec->moves) moves.push_back(std::move(m));
    rec->moves = std::move(moves);
  } else {
    missed.clear();
    if (behind) rec = store_->LoadMatch(live.id);
    if (!rec.ok()) return rec.status();
    std::vector<std::string> moves;
    for (const MoveRecord& m : rec->moves) moves.push_back(m.move);
    absl::StatusOr<std::unique_ptr<AnyGame>> replayed = ReplayGame(rec->game, rec->options, moves);
    if (!replayed.ok()) {
      return absl::InternalError(
          absl::StrCat("match ", live.id, " cannot be replayed: ", replayed.status().message()));
    }
    game = *std::move(replayed);
  }
  const std::optional<MatchVersion> old_version =
      live.loaded ? std::optional<MatchVersion>(VersionOf(live.rec)) : std::nullopt;
  live.rec = *std::move(rec);
  live.info = info;
  live.game = std::move(game);
  live.loaded = true;
  live.stale = false;
  live.bot_ply = -1;
  live.flag_ply = -1;
  for (v1::MatchEvent& e : missed) Broadcast(live, std::move(e));
  // Anything else (a seat taken, a draw offered): the whole match.
  if (old_version && !(*old_version == VersionOf(live.rec)) && missed.empty() &&
      !live.watchers.empty()) {
    v1::MatchEvent e = Event();
    *e.mutable_resync() = ToProto(live, NowMs());
    Broadcast(live, std::move(e));
  }
  // A match found finished is announced (and its watchers closed) by AfterChange, which every
  // caller runs after a reload.
  return absl::OkStatus();
}

std::string Lobby::SideName(const Live& live, int seat) const {
  if (live.info != nullptr && seat >= 0 &&
      seat < static_cast<int>(live.info->player_names.size())) {
    return live.info->player_names[seat];
  }
  return absl::StrCat("seat ", seat);
}

int64_t Lobby::ClockNow(const Live& live, int seat, int64_t now_ms) const {
  const SeatRecord& s = live.rec.seats[seat];
  if (!live.rec.time_initial_ms) return 0;
  if (live.rec.status == MatchStatus::kActive && live.game->SideToMove() == seat) {
    return std::max<int64_t>(0, s.clock_ms - (now_ms - live.rec.turn_started_ms));
  }
  return s.clock_ms;
}

std::vector<int64_t> Lobby::ClocksNow(const Live& live, int64_t now_ms) const {
  std::vector<int64_t> clocks;
  for (size_t i = 0; i < live.rec.seats.size(); ++i) {
    clocks.push_back(ClockNow(live, static_cast<int>(i), now_ms));
  }
  return clocks;
}

v1::Match Lobby::ToProto(const Live& live, int64_t now_ms) const {
  const MatchRecord& r = live.rec;
  v1::Match m;
  m.set_id(r.id);
  m.mutable_spec()->set_name(r.game);
  for (const auto& [k, v] : r.options) (*m.mutable_spec()->mutable_options())[k] = v;
  m.set_status(static_cast<v1::MatchStatus>(r.status));
  for (size_t i = 0; i < r.seats.size(); ++i) {
    const SeatRecord& s = r.seats[i];
    v1::Seat* p = m.add_seats();
    p->set_index(static_cast<int>(i));
    p->set_kind(static_cast<v1::SeatKind>(s.kind));
    p->set_difficulty(s.difficulty);
    p->set_display_name(s.display_name);
    p->set_taken(s.taken());
    p->set_clock_ms(ClockNow(live, static_cast<int>(i), now_ms));
    p->set_side(SideName(live, static_cast<int>(i)));
  }
  for (const MoveRecord& mv : r.moves) *m.add_moves() = MoveToProto(mv);
  if (r.time_initial_ms) {
    m.mutable_time_control()->set_initial_ms(*r.time_initial_ms);
    m.mutable_time_control()->set_increment_ms(r.time_increment_ms);
  }
  m.set_bot_pacing_ms(r.bot_pacing_ms);
  const bool active = r.status == MatchStatus::kActive;
  m.set_to_move(active ? live.game->SideToMove() : -1);
  if (r.status == MatchStatus::kFinished) *m.mutable_result() = ResultToProto(r.result);
  m.set_draw_offer(r.draw_offer);
  m.set_created_ms(r.created_ms);
  m.set_server_time_ms(now_ms);
  m.set_board(live.game->Render());
  if (active) {
    for (std::string& mv : live.game->LegalMoves()) m.add_legal_moves(std::move(mv));
  }
  return m;
}

void Lobby::Broadcast(Live& live, v1::MatchEvent event) {
  // A watcher that refuses the event (closed, or too far behind) is forgotten.
  std::erase_if(live.watchers,
                [&](const std::shared_ptr<EventSink>& w) { return !w->Push(event); });
}

void Lobby::CloseWatchers(Live& live) {
  for (auto& w : live.watchers) w->Close(absl::OkStatus());
  live.watchers.clear();
}

absl::StatusOr<int> Lobby::SeatThatMayAct(Live& live, const std::string& token, int64_t now_ms) {
  absl::StatusOr<int> seat = Authenticate(live, token);
  if (!seat.ok()) return seat.status();
  if (absl::Status a = CheckActive(live); !a.ok()) return a;
  // A flag that has fallen but was not yet noticed ends the match first ("over: ... ran out").
  if (FlagIfExpired(live, now_ms)) return CheckActive(live);
  return seat;
}

absl::Status Lobby::CheckActive(const Live& live) const {
  switch (live.rec.status) {
    case MatchStatus::kWaiting:
      return absl::FailedPreconditionError(
          absl::StrCat("match ", live.id, " has not started: a seat is still open"));
    case MatchStatus::kFinished:
      return absl::FailedPreconditionError(
          absl::StrCat("match ", live.id, " is over: ", live.rec.result.text));
    case MatchStatus::kActive:
      return absl::OkStatus();
  }
  return absl::InternalError("unknown match status");
}

absl::StatusOr<int> Lobby::Authenticate(Live& live, const std::string& token) {
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "no seat token: send it as 'authorization: Bearer <token>' metadata");
  }
  if (!IsWellFormedToken(token)) {
    return absl::UnauthenticatedError("that is not a seat token of this lobby");
  }
  const std::string hash = TokenHash(token);
  for (size_t i = 0; i < live.rec.seats.size(); ++i) {
    if (SameTokenHash(live.rec.seats[i].token_hash, hash)) return static_cast<int>(i);
  }
  absl::StatusOr<std::optional<std::pair<int64_t, int>>> owner = store_->FindToken(hash);
  if (!owner.ok()) return owner.status();
  if (!owner->has_value()) {
    return absl::UnauthenticatedError("unknown seat token: no seat of this lobby has it");
  }
  return absl::PermissionDeniedError(absl::StrCat("that token holds a seat in match ",
                                                  (*owner)->first, ", not in match ", live.id));
}

absl::StatusOr<v1::CreateMatchResponse> Lobby::CreateMatch(const v1::CreateMatchRequest& req) {
  if (req.spec().options_size() > kMaxOptions) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxOptions, " game options"));
  }
  for (const auto& [k, v] : req.spec().options()) {
    if (k.size() > kMaxTextBytes || v.size() > kMaxTextBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("option names and values have at most ", kMaxTextBytes, " bytes"));
    }
  }
  if (req.spec().name().size() > kMaxTextBytes || req.seats_size() > 16) {
    return absl::InvalidArgumentError("that is not a game this lobby offers");
  }
  absl::StatusOr<std::unique_ptr<AnyGame>> game =
      CreateGame(req.spec().name(), FromProto(req.spec()));
  if (!game.ok()) return game.status();
  const GameInfo& info = (*game)->Info();
  const size_t players = info.player_names.size();
  if (static_cast<size_t>(req.seats_size()) != players) {
    return absl::InvalidArgumentError(
        absl::StrCat(info.title, " has ", players, " seats; the request names ", req.seats_size()));
  }
  MatchRecord rec;
  rec.game = info.name;
  rec.options = (*game)->Options();
  rec.created_ms = NowMs();
  if (req.has_time_control()) {
    const v1::TimeControl& tc = req.time_control();
    if (tc.initial_ms() < kMinInitialMs || tc.initial_ms() > kMaxInitialMs) {
      return absl::InvalidArgumentError(
          absl::StrCat("initial time must be between ", kMinInitialMs, " ms and 24 hours"));
    }
    if (tc.increment_ms() < 0 || tc.increment_ms() > kMaxIncrementMs) {
      return absl::InvalidArgumentError("the increment must be between 0 and one hour");
    }
    rec.time_initial_ms = tc.initial_ms();
    rec.time_increment_ms = tc.increment_ms();
  }
  rec.bot_pacing_ms =
      req.has_bot_pacing_ms() ? req.bot_pacing_ms() : options_.default_bot_pacing_ms;
  if (rec.bot_pacing_ms < 0 || rec.bot_pacing_ms > options_.max_bot_pacing_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat("bot pacing must be between 0 and ", options_.max_bot_pacing_ms, " ms"));
  }
  for (int i = 0; i < req.seats_size(); ++i) {
    const v1::SeatSpec& spec = req.seats(i);
    SeatRecord seat;
    seat.clock_ms = rec.time_initial_ms.value_or(0);
    if (spec.kind() == v1::SEAT_KIND_BOT) {
      if (bots_ == nullptr) {
        return absl::FailedPreconditionError(
            "this lobby has no bot service (--bot_target), so it cannot seat bots");
      }
      seat.kind = SeatKind::kBot;
      seat.difficulty = spec.difficulty().empty() ? "medium" : spec.difficulty();
      if (FindLevel(info.levels, seat.difficulty) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(info.title, " has no difficulty '", seat.difficulty, "'"));
      }
      seat.display_name = absl::StrCat("bot (", seat.difficulty, ")");
    } else if (spec.kind() == v1::SEAT_KIND_HUMAN) {
      seat.kind = SeatKind::kHuman;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("seat ", i, " needs a kind: human or bot"));
    }
    rec.seats.push_back(std::move(seat));
  }
  std::string token;
  if (req.has_take_seat() && req.take_seat() >= 0) {
    const int s = req.take_seat();
    if (s >= static_cast<int>(rec.seats.size()) || rec.seats[s].kind != SeatKind::kHuman) {
      return absl::InvalidArgumentError(absl::StrCat("take_seat ", s, " is not a human seat"));
    }
    absl::StatusOr<std::string> name = CleanName(req.display_name());
    if (!name.ok()) return name.status();
    token = NewSeatToken();
    rec.seats[s].display_name = *name;
    rec.seats[s].token_hash = TokenHash(token);
  }
  const bool full = std::all_of(rec.seats.begin(), rec.seats.end(),
                                [](const SeatRecord& s) { return s.taken(); });
  rec.status = full ? MatchStatus::kActive : MatchStatus::kWaiting;
  rec.turn_started_ms = rec.created_ms;
  absl::StatusOr<int64_t> id = store_->CreateMatch(rec);
  if (!id.ok()) return id.status();
  // Memory starts as what was just written, so the first use needs no reload.
  rec.id = *id;
  auto fresh = std::make_shared<Live>();
  fresh->id = *id;
  fresh->info = FindGame(rec.game);
  fresh->rec = std::move(rec);
  fresh->game = *std::move(game);
  fresh->loaded = fresh->info != nullptr;
  {
    std::lock_guard<std::mutex> lock(map_mu_);
    // Someone may have asked for the new id already and loaded it: that copy is as good.
    MakeRoomLocked();
    matches_.emplace(*id, fresh);
  }
  v1::CreateMatchResponse response;
  absl::Status s = WithMatch(*id, [&](Live& live) {
    // What a load would have done next: arm the clock, ask a bot to move.
    TryOwn(live);
    AfterChange(live);
    *response.mutable_match() = ToProto(live, NowMs());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  response.set_seat_token(token);
  return response;
}

absl::StatusOr<v1::ListMatchesResponse> Lobby::ListMatches(const v1::ListMatchesRequest& req) {
  MatchFilter filter;
  filter.game = req.game();
  if (req.status() != v1::MATCH_STATUS_UNSPECIFIED) {
    if (!v1::MatchStatus_IsValid(req.status())) {
      return absl::InvalidArgumentError("unknown match status");
    }
    filter.status = static_cast<MatchStatus>(req.status());
  }
  filter.open_seats = req.open_seats();
  filter.bots_only = req.bots_only();
  filter.limit = req.page_size() <= 0 ? 20 : std::min(req.page_size(), 200);
  if (!req.page_token().empty() &&
      (!absl::SimpleAtoi(req.page_token(), &filter.before_id) || filter.before_id <= 0)) {
    return absl::InvalidArgumentError("that page token did not come from ListMatches");
  }
  absl::StatusOr<std::vector<MatchRecord>> found = store_->ListMatches(filter);
  if (!found.ok()) return found.status();
  v1::ListMatchesResponse response;
  for (const MatchRecord& r : *found) {
    v1::MatchSummary* m = response.add_matches();
    m->set_id(r.id);
    m->mutable_spec()->set_name(r.game);
    for (const auto& [k, v] : r.options) (*m->mutable_spec()->mutable_options())[k] = v;
    m->set_status(static_cast<v1::MatchStatus>(r.status));
    const GameInfo* info = FindGame(r.game);
    for (size_t i = 0; i < r.seats.size(); ++i) {
      const SeatRecord& s = r.seats[i];
      v1::Seat* p = m->add_seats();
      p->set_index(static_cast<int>(i));
      p->set_kind(static_cast<v1::SeatKind>(s.kind));
      p->set_difficulty(s.difficulty);
      p->set_display_name(s.display_name);
      p->set_taken(s.taken());
      p->set_clock_ms(s.clock_ms);
      if (info != nullptr && i < info->player_names.size()) p->set_side(info->player_names[i]);
    }
    m->set_moves_played(r.ply);
    if (r.status == MatchStatus::kFinished) *m->mutable_result() = ResultToProto(r.result);
    m->set_created_ms(r.created_ms);
  }
  if (static_cast<int>(found->size()) == filter.limit) {
    response.set_next_page_token(absl::StrCat(found->back().id));
  }
  return response;
}

absl::StatusOr<v1::Match> Lobby::GetMatch(int64_t match_id) {
  v1::Match match;
  absl::Status s = WithMatch(
      match_id,
      [&](Live& live) {
        match = ToProto(live, NowMs());
        return absl::OkStatus();
      },
      Fresh::kChecked);
  if (!s.ok()) return s;
  return match;
}

std::shared_ptr<Lobby::Live> Lobby::Cached(int64_t id) {
  std::lock_guard<std::mutex> lock(map_mu_);
  auto it = matches_.find(id);
  return it == matches_.end() ? nullptr : it->second;
}

bool Lobby::TryGetMatch(int64_t match_id, v1::Match* out) {
  // With other instances, memory may be a notification behind: GetMatch checks the version.
  if (HasPeers()) return false;
  std::shared_ptr<Live> live = Cached(match_id);
  if (live == nullptr) return false;
  std::unique_lock<std::mutex> lock(live->mu, std::try_to_lock);
  if (!lock.owns_lock() || !live->Settled()) return false;
  *out = ToProto(*live, NowMs());
  return true;
}

absl::StatusOr<v1::JoinMatchResponse> Lobby::JoinMatch(const v1::JoinMatchRequest& req) {
  absl::StatusOr<std::string> name = CleanName(req.display_name());
  if (!name.ok()) return name.status();
  v1::JoinMatchResponse response;
  absl::Status s = WithMatch(req.match_id(), [&](Live& live) -> absl::Status {
    std::vector<SeatRecord>& seats = live.rec.seats;
    int seat = req.seat();
    if (seat == -1) {
      for (size_t i = 0; i < seats.size() && seat == -1; ++i) {
        if (!seats[i].taken()) seat = static_cast<int>(i);
      }
      if (seat == -1) {
        return absl::AlreadyExistsError(absl::StrCat("every seat of match ", live.id, " is taken"));
      }
    }
    if (seat < 0 || seat >= static_cast<int>(seats.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("match ", live.id, " has seats 0 to ", seats.size() - 1));
    }
    if (seats[seat].kind == SeatKind::kBot) {
      return absl::InvalidArgumentError(absl::StrCat("seat ", seat, " is a bot's"));
    }
    if (seats[seat].taken()) {
      return absl::AlreadyExistsError(
          absl::StrCat("seat ", seat, " of match ", live.id, " is already taken"));
    }
    if (live.rec.status != MatchStatus::kWaiting) return CheckActive(live);
    const std::string token = NewSeatToken();
    const std::string hash = TokenHash(token);
    const int64_t now = NowMs();
    absl::StatusOr<bool> started = store_->TakeSeat(live.id, seat, *name, hash, now);
    if (!started.ok()) {
      live.stale = true;
      return started.status();
    }
    seats[seat].display_name = *name;
    seats[seat].token_hash = hash;
    if (*started) {
      live.rec.status = MatchStatus::kActive;
      live.rec.turn_started_ms = now;
    }
    v1::MatchEvent e = Event();
    v1::Match snapshot = ToProto(live, now);
    *e.mutable_seat_joined()->mutable_seat() = snapshot.seats(seat);
    e.mutable_seat_joined()->set_status(snapshot.status());
    Broadcast(live, std::move(e));
    TryOwn(live);
    AfterChange(live);
    *response.mutable_match() = std::move(snapshot);
    response.set_seat(seat);
    response.set_seat_token(token);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return response;
}

bool Lobby::FlagIfExpired(Live& live, int64_t now_ms) {
  if (!live.rec.time_initial_ms || live.rec.status != MatchStatus::kActive) return false;
  const int mover = live.game->SideToMove();
  if (ClockNow(live, mover, now_ms) > 0) return false;
  // The mover's clock reads 0: it has run out.
  std::vector<int64_t> clocks = ClocksNow(live, now_ms);
  const int winner = 1 - mover;
  (void)CommitFinish(live,
                     {.winner = winner,
                      .reason = EndReason::kTimeout,
                      .text = absl::StrCat(SideName(live, mover), " ran out of time; ",
                                           SideName(live, winner), " wins")},
                     std::move(clocks));
  return true;
}

absl::StatusOr<v1::MakeMoveResponse> Lobby::MakeMove(const v1::MakeMoveRequest& req,
                                                     const std::string& token) {
  if (req.move().size() > kMaxTextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a move is at most ", kMaxTextBytes, " bytes of text"));
  }
  v1::MakeMoveResponse response;
  absl::Status s = WithMatch(req.match_id(), [&](Live& live) -> absl::Status {
    const int64_t now = NowMs();
    absl::StatusOr<int> seat = SeatThatMayAct(live, token, now);
    if (!seat.ok()) return seat.status();
    const int mover = live.game->SideToMove();
    if (*seat != mover) {
      return absl::FailedPreconditionError(
          absl::StrCat("not your turn: ", SideName(live, mover), " (seat ", mover, ") is to move"));
    }
    if (req.expected_ply() != live.rec.ply) {
      return absl::FailedPreconditionError(absl::StrCat("the match is at ply ", live.rec.ply,
                                                        ", not ", req.expected_ply(),
                                                        ": your view is out of date"));
    }
    std::unique_ptr<AnyGame> after = live.game->Clone();
    if (absl::Status played = after->Play(req.move()); !played.ok()) {
      return absl::InvalidArgumentError(played.message());
    }
    absl::StatusOr<MoveRecord> committed =
        CommitMove(live, *seat, std::move(after), now - live.rec.turn_started_ms, "");
    if (!committed.ok()) return committed.status();
    *response.mutable_move() = MoveToProto(*committed);
    *response.mutable_match() = ToProto(live, NowMs());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return response;
}

bool Lobby::TryMakeMove(const v1::MakeMoveRequest& req, const std::string& token,
                        std::function<void(absl::StatusOr<v1::MakeMoveResponse>)> done) {
  if (stopping_ || req.match_id() <= 0 || req.move().size() > kMaxTextBytes ||
      !IsWellFormedToken(token)) {
    return false;
  }
  std::shared_ptr<Live> live = Cached(req.match_id());
  if (live == nullptr) return false;
  std::unique_lock<std::mutex> lock(live->mu, std::try_to_lock);
  if (!lock.owns_lock() || !live->Settled() || live->rec.status != MatchStatus::kActive ||
      req.expected_ply() != live->rec.ply) {
    return false;
  }
  // Only the plain case: the caller holds the seat to move, its clock has time left, and the
  // move is legal. Anything else has an error to explain or a flag to record: MakeMove does.
  const int mover = live->game->SideToMove();
  if (mover < 0 || mover >= static_cast<int>(live->rec.seats.size()) ||
      !SameTokenHash(live->rec.seats[mover].token_hash, TokenHash(token))) {
    return false;
  }
  const int64_t now = NowMs();
  if (live->rec.time_initial_ms && ClockNow(*live, mover, now) <= 0) return false;
  auto pending = std::make_shared<PendingMove>();
  pending->after = live->game->Clone();
  if (!pending->after->Play(req.move()).ok()) return false;
  pending->commit =
      PrepareMove(*live, mover, *pending->after, now - live->rec.turn_started_ms, "", now);
  live->committing = true;
  lock.unlock();
  store_->AppendMoveAsync(
      live->id, pending->commit,
      [this, live, pending, req, token, done = std::move(done)](absl::Status s) mutable {
        absl::StatusOr<v1::MakeMoveResponse> answer = Landed(*live, *pending, s);
        if (absl::IsAborted(answer.status()) && !stopping_) {
          // Another instance moved this match on first: MakeMove decides on the stored state
          // (the writer's thread must not wait for that).
          executor_->PostAt(absl::Now(), [this, req, token, done = std::move(done)] {
            done(MakeMove(req, token));
          });
          return;
        }
        done(std::move(answer));
      });
  return true;
}

void Lobby::MakeMoveAsync(const v1::MakeMoveRequest& req, const std::string& token,
                          std::function<void(absl::StatusOr<v1::MakeMoveResponse>)> done) {
  // Any error of the load is MakeMove's to report. A caller that has seen a later ply than
  // this copy proves it behind, even before the announcement of that ply arrives: WithMatch
  // reloads it on ABORTED.
  bool checked = false;
  (void)WithMatch(req.match_id(), [&](Live& live) {
    const bool behind = req.expected_ply() > live.rec.ply && !std::exchange(checked, true);
    return behind ? absl::AbortedError("behind") : absl::OkStatus();
  });
  if (TryMakeMove(req, token, done)) return;
  done(MakeMove(req, token));
}

absl::StatusOr<v1::MakeMoveResponse> Lobby::Landed(Live& live, PendingMove& move,
                                                   const absl::Status& stored) {
  absl::StatusOr<v1::MakeMoveResponse> answer;
  {
    std::lock_guard<std::mutex> lock(live.mu);
    live.committing = false;
    if (stored.ok()) {
      ApplyMove(live, move.commit, std::move(move.after));
      v1::MakeMoveResponse response;
      *response.mutable_move() = MoveToProto(move.commit.move);
      *response.mutable_match() = ToProto(live, NowMs());
      answer = std::move(response);
    } else {
      // Nothing is acknowledged; whether or not the write landed, the next use reloads.
      live.stale = true;
      ReloadSoon(live.id, stored);
      answer = stored;
    }
  }
  live.settled.notify_all();
  return answer;
}

MoveCommit Lobby::PrepareMove(const Live& live, int seat, const AnyGame& after, int64_t think_ms,
                              std::string bot_json, int64_t now_ms) const {
  MoveCommit commit;
  MoveRecord& mv = commit.move;
  mv.ply = live.rec.ply + 1;
  mv.seat = seat;
  mv.move = after.History().back();
  mv.think_ms = std::max<int64_t>(0, think_ms);
  mv.time_ms = now_ms;
  mv.bot_json = std::move(bot_json);
  const GameStatus status = after.Status();
  if (live.rec.time_initial_ms) {
    // No increment for the move that ends the match: the clock stops at what was left.
    mv.clock_ms = std::max<int64_t>(0, live.rec.seats[seat].clock_ms - mv.think_ms) +
                  (status.over ? 0 : live.rec.time_increment_ms);
  }
  commit.mover_clock_ms = mv.clock_ms;
  commit.clocked = live.rec.time_initial_ms.has_value();
  commit.turn_started_ms = now_ms;
  commit.draw_offer = live.rec.draw_offer == seat ? seat : -1;
  if (status.over) {
    MatchResult r{.winner = status.winner, .reason = EndReason::kRules};
    r.text = status.winner < 0
                 ? absl::StrCat("draw: ", status.reason)
                 : absl::StrCat(SideName(live, status.winner), " wins: ", status.reason);
    commit.result = r;
  }
  return commit;
}

absl::StatusOr<MoveRecord> Lobby::CommitMove(Live& live, int seat, std::unique_ptr<AnyGame> after,
                                             int64_t think_ms, std::string bot_json) {
  const MoveCommit commit = PrepareMove(live, seat, *after, think_ms, std::move(bot_json), NowMs());
  if (absl::Status s = store_->AppendMove(live.id, commit); !s.ok()) {
    // Nothing is acknowledged; whether or not the write landed, the next use reloads.
    live.stale = true;
    ReloadSoon(live.id, s);
    return s;
  }
  ApplyMove(live, commit, std::move(after));
  return commit.move;
}

void Lobby::ApplyMove(Live& live, const MoveCommit& commit, std::unique_ptr<AnyGame> after) {
  metrics_.moves_committed.fetch_add(1, std::memory_order_relaxed);
  const MoveRecord& mv = commit.move;
  live.rec.moves.push_back(mv);
  live.rec.ply = mv.ply;
  live.rec.turn_started_ms = commit.turn_started_ms;
  live.rec.seats[mv.seat].clock_ms = commit.mover_clock_ms;
  live.rec.draw_offer = commit.draw_offer;
  live.game = std::move(after);
  live.bot_ply = -1;
  live.bot_attempts = 0;
  live.bot_first_failure = absl::InfinitePast();
  if (commit.result) {
    live.rec.status = MatchStatus::kFinished;
    live.rec.result = *commit.result;
  }
  if (!live.watchers.empty()) {
    std::vector<int64_t> clocks;
    for (const SeatRecord& s : live.rec.seats) clocks.push_back(s.clock_ms);
    Broadcast(live, MoveEvent(mv, clocks, *live.game));
  }
  AfterChange(live);
}

absl::Status Lobby::CommitFinish(Live& live, MatchResult result, std::vector<int64_t> clocks) {
  FinishCommit commit{.expected_ply = live.rec.ply, .result = result, .clocks_ms = clocks};
  if (absl::Status s = store_->Finish(live.id, commit); !s.ok()) {
    live.stale = true;
    // A flag that could not be written is tried again shortly.
    if (result.reason == EndReason::kTimeout) RetryLater(live.id, absl::Seconds(1));
    return s;
  }
  live.rec.status = MatchStatus::kFinished;
  live.rec.result = std::move(result);
  live.rec.draw_offer = -1;
  for (size_t i = 0; i < clocks.size() && i < live.rec.seats.size(); ++i) {
    live.rec.seats[i].clock_ms = clocks[i];
  }
  if (live.bot_call) live.bot_call->Cancel();
  AfterChange(live);
  return absl::OkStatus();
}

v1::MatchEvent Lobby::GameOverEvent(const Live& live) const {
  v1::MatchEvent e = Event();
  v1::GameOver* over = e.mutable_game_over();
  *over->mutable_result() = ResultToProto(live.rec.result);
  // A finished match's stored clocks are final: the finishing move or the end wrote them.
  if (live.rec.time_initial_ms) {
    for (const SeatRecord& s : live.rec.seats) over->add_clocks_ms(s.clock_ms);
  }
  return e;
}

void Lobby::AfterChange(Live& live) {
  if (live.rec.status == MatchStatus::kFinished) {
    if (!live.watchers.empty()) {
      Broadcast(live, GameOverEvent(live));
      CloseWatchers(live);
    }
    if (live.owned) {
      live.owned = false;
      store_->Disown(live.id);
    }
    return;
  }
  if (live.rec.status != MatchStatus::kActive || stopping_) return;
  if (live.rec.time_initial_ms && !live.clock_ticking &&
      options_.clock_event_interval > absl::ZeroDuration()) {
    live.clock_ticking = true;
    const int64_t id = live.id;
    executor_->PostAt(absl::Now() + options_.clock_event_interval, [this, id] { ClockTick(id); });
  }
  // The clock's flag and the bot are the owner's work.
  if (!live.owned) return;
  if (live.rec.time_initial_ms && live.flag_ply != live.rec.ply) {
    live.flag_ply = live.rec.ply;
    const int mover = live.game->SideToMove();
    const absl::Time due =
        absl::FromUnixMillis(live.rec.turn_started_ms + live.rec.seats[mover].clock_ms + 1);
    const int64_t id = live.id;
    const int ply = live.rec.ply;
    executor_->PostAt(due, [this, id, ply] { CheckFlag(id, ply); });
  }
  RequestBot(live);
}

void Lobby::CheckFlag(int64_t id, int ply) {
  if (stopping_) return;
  absl::Status s = WithMatch(id, [&](Live& live) {
    if (live.rec.ply == ply) FlagIfExpired(live, NowMs());
    return absl::OkStatus();
  });
  if (!s.ok() && absl::IsUnavailable(s)) RetryLater(id, absl::Seconds(1));
}

void Lobby::ClockTick(int64_t id) {
  if (stopping_) return;
  (void)WithMatch(id, [&](Live& live) {
    live.clock_ticking = false;
    if (live.rec.status != MatchStatus::kActive) return absl::OkStatus();
    if (!live.watchers.empty()) {
      v1::MatchEvent e = Event();
      v1::ClockUpdate* update = e.mutable_clock_update();
      for (int64_t c : ClocksNow(live, e.time_ms())) update->add_clocks_ms(c);
      update->set_to_move(live.game->SideToMove());
      Broadcast(live, std::move(e));
    }
    AfterChange(live);  // schedules the next tick
    return absl::OkStatus();
  });
}

void Lobby::ReloadSoon(int64_t id, const absl::Status& failure) {
  // A lost connection may have stored the move after all: reload without waiting for the next
  // call, so that watchers get a resync (or nothing, if it did not land) and timers re-arm.
  if (absl::IsUnavailable(failure)) RetryLater(id, absl::Milliseconds(500));
}

void Lobby::RetryLater(int64_t id, absl::Duration delay) {
  if (stopping_) return;
  executor_->PostAt(absl::Now() + delay, [this, id] {
    if (stopping_) return;
    absl::Status s = WithMatch(id, [&](Live& live) {
      if (live.rec.status == MatchStatus::kActive) {
        // Re-arm from scratch: the flag check and the bot request of the current ply.
        live.flag_ply = -1;
        if (live.bot_call == nullptr) live.bot_ply = -1;
        AfterChange(live);
      }
      return absl::OkStatus();
    });
    if (!s.ok() && absl::IsUnavailable(s)) RetryLater(id, absl::Seconds(1));
  });
}

void Lobby::RequestBot(Live& live) {
  if (bots_ == nullptr || stopping_ || live.rec.status != MatchStatus::kActive) return;
  const int mover = live.game->SideToMove();
  const SeatRecord& seat = live.rec.seats[mover];
  if (seat.kind != SeatKind::kBot || live.bot_ply == live.rec.ply) return;
  const Difficulty* level = FindLevel(live.info->levels, seat.difficulty);
  if (level == nullptr) return;
  live.bot_ply = live.rec.ply;
  // The level's own time, cut so that the bot never loses on time: about a twentieth of what
  // is left plus most of the increment.
  int64_t budget = level->time_ms;
  if (live.rec.time_initial_ms) {
    const int64_t left = ClockNow(live, mover, NowMs());
    budget = std::min<int64_t>(
        budget, std::max<int64_t>(10, left / 20 + live.rec.time_increment_ms * 3 / 4));
  }
  v1::ChooseMoveRequest request;
  request.mutable_position()->mutable_spec()->set_name(live.rec.game);
  for (const auto& [k, v] : live.rec.options) {
    (*request.mutable_position()->mutable_spec()->mutable_options())[k] = v;
  }
  for (const MoveRecord& m : live.rec.moves) request.mutable_position()->add_moves(m.move);
  request.set_difficulty(seat.difficulty);
  request.set_budget_ms(budget);
  // Different games between the same levels, yet the same answer if a move is asked again.
  request.set_seed(Mix64(static_cast<uint64_t>(live.id) * 1000003u + live.rec.ply) | 1);
  const int64_t id = live.id;
  const int ply = live.rec.ply;
  // Ownership makes a second instance asking for this ply impossible; the database counts it.
  if (absl::StatusOr<bool> duplicate = store_->RecordBotRequest(id, ply);
      duplicate.ok() && *duplicate) {
    metrics_.duplicate_bot_requests.fetch_add(1, std::memory_order_relaxed);
    std::fprintf(stderr, "ply-lobby: match %lld ply %d: another live instance asked a bot too\n",
                 static_cast<long long>(id), ply);
  }
  metrics_.bot_calls.fetch_add(1, std::memory_order_relaxed);
  const absl::Time asked = absl::Now();
  // The client stays alive until its call is done, even if the instance list changes meanwhile.
  std::shared_ptr<BotClient> client = bots_->Current();
  live.bot_call = client->ChooseMoveAsync(
      request, absl::Milliseconds(budget + options_.bot_deadline_margin_ms),
      [this, id, ply, asked, client](absl::StatusOr<v1::ChooseMoveResponse> reply) {
        const int64_t think = absl::ToInt64Milliseconds(absl::Now() - asked);
        // gRPC's thread must not block: the reply is handled on the executor.
        executor_->PostAt(absl::Now(), [this, id, ply, think, reply = std::move(reply)] {
          OnBotReply(id, ply, std::move(reply), think);
        });
      });
}

void Lobby::OnBotReply(int64_t id, int ply, absl::StatusOr<v1::ChooseMoveResponse> reply,
                       int64_t think_ms) {
  if (stopping_) return;
  absl::Status s = WithMatch(id, [&](Live& live) -> absl::Status {
    // An answer for a position that is gone (a move, a result, a reload), or for a match this
    // instance no longer drives, is dropped.
    if (live.rec.status != MatchStatus::kActive || live.rec.ply != ply || live.bot_ply != ply ||
        !live.owned) {
      return absl::OkStatus();
    }
    const int seat = live.game->SideToMove();
    std::unique_ptr<AnyGame> after;
    absl::Status problem = reply.status();
    if (problem.ok()) {
      after = live.game->Clone();
      if (absl::Status played = after->Play(reply->move()); !played.ok()) {
        problem = absl::InternalError(
            absl::StrCat("ply-bot answered an illegal move: ", played.message()));
      }
    }
    if (!problem.ok()) {
      metrics_.bot_failures.fetch_add(1, std::memory_order_relaxed);
      live.bot_call = nullptr;
      const absl::Time now = absl::Now();
      if (live.bot_attempts++ == 0) live.bot_first_failure = now;
      v1::MatchEvent e = Event();
      v1::BotTrouble* trouble = e.mutable_bot_trouble();
      trouble->set_seat(seat);
      trouble->set_attempts(live.bot_attempts);
      trouble->set_message(
          absl::StrCat("no move from ply-bot: ", absl::StatusCodeToString(problem.code()), ": ",
                       problem.message()));
      Broadcast(live, std::move(e));
      if (now - live.bot_first_failure > options_.bot_give_up_after) {
        std::vector<int64_t> clocks = ClocksNow(live, NowMs());
        return CommitFinish(live,
                            {.winner = 1 - seat,
                             .reason = EndReason::kBotFailure,
                             .text = absl::StrCat(SideName(live, seat),
                                                  "'s bot could not move: ", problem.message())},
                            std::move(clocks));
      }
      const absl::Duration backoff = std::min(
          absl::Milliseconds(100) * (1 << std::min(live.bot_attempts, 6)), absl::Seconds(5));
      // bot_ply stays reserved until the retry, so that no other path asks meanwhile.
      executor_->PostAt(now + backoff, [this, id, ply] {
        (void)WithMatch(id, [&](Live& l) {
          if (l.rec.ply == ply && l.bot_ply == ply) {
            l.bot_ply = -1;
            RequestBot(l);
          }
          return absl::OkStatus();
        });
      });
      return absl::OkStatus();
    }
    // Pacing: the move appears no earlier than pacing after the position arose.
    const int64_t due = live.rec.turn_started_ms + live.rec.bot_pacing_ms;
    if (NowMs() < due) {
      executor_->PostAt(absl::FromUnixMillis(due),
                        [this, id, ply, think_ms, reply] { OnBotReply(id, ply, reply, think_ms); });
      return absl::OkStatus();
    }
    live.bot_call = nullptr;
    v1::BotThinking thinking;
    thinking.set_depth(reply->depth());
    thinking.set_score(reply->score());
    thinking.set_score_text(reply->score_text());
    thinking.set_nodes(reply->nodes());
    for (const std::string& m : reply->pv()) thinking.add_pv(m);
    thinking.set_instance(reply->instance());
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(thinking, &json);
    absl::StatusOr<MoveRecord> committed =
        CommitMove(live, seat, std::move(after), think_ms, std::move(json));
    if (!committed.ok()) {
      // The database is away: ask again once it may be back (the match reloads first).
      live.bot_ply = -1;
      RetryLater(id, absl::Milliseconds(500));
    }
    return absl::OkStatus();
  });
  if (!s.ok() && (absl::IsUnavailable(s) || absl::IsInternal(s))) {
    RetryLater(id, absl::Milliseconds(500));
  }
}

absl::StatusOr<v1::Match> Lobby::Resign(int64_t match_id, const std::string& token) {
  v1::Match match;
  absl::Status s = WithMatch(match_id, [&](Live& live) -> absl::Status {
    const int64_t now = NowMs();
    absl::StatusOr<int> seat = SeatThatMayAct(live, token, now);
    if (!seat.ok()) return seat.status();
    std::vector<int64_t> clocks = ClocksNow(live, now);
    const int winner = 1 - *seat;
    absl::Status f = CommitFinish(live,
                                  {.winner = winner,
                                   .reason = EndReason::kResignation,
                                   .text = absl::StrCat(SideName(live, *seat), " resigned; ",
                                                        SideName(live, winner), " wins")},
                                  std::move(clocks));
    if (!f.ok()) return f;
    match = ToProto(live, now);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return match;
}

absl::StatusOr<v1::Match> Lobby::OfferDraw(int64_t match_id, const std::string& token) {
  v1::Match match;
  absl::Status s = WithMatch(match_id, [&](Live& live) -> absl::Status {
    const int64_t now = NowMs();
    absl::StatusOr<int> seat = SeatThatMayAct(live, token, now);
    if (!seat.ok()) return seat.status();
    if (live.rec.draw_offer >= 0 && live.rec.draw_offer != *seat) {
      std::vector<int64_t> clocks = ClocksNow(live, now);
      absl::Status f = CommitFinish(
          live, {.winner = -1, .reason = EndReason::kAgreement, .text = "draw by agreement"},
          std::move(clocks));
      if (!f.ok()) return f;
    } else if (live.rec.draw_offer != *seat) {
      if (absl::Status d = store_->SetDrawOffer(live.id, live.rec.ply, *seat); !d.ok()) {
        live.stale = true;
        return d;
      }
      live.rec.draw_offer = *seat;
      v1::MatchEvent e = Event();
      e.mutable_draw_offered()->set_seat(*seat);
      Broadcast(live, std::move(e));
    }
    match = ToProto(live, now);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return match;
}

absl::Status Lobby::Watch(int64_t match_id, std::optional<int> after_ply,
                          std::shared_ptr<EventSink> sink) {
  return WithMatch(
      match_id,
      [&](Live& live) -> absl::Status {
        const int64_t now = NowMs();
        if (!after_ply) {
          v1::MatchEvent e = Event();
          *e.mutable_snapshot() = ToProto(live, now);
          sink->Push(std::move(e));
        } else {
          if (*after_ply < 0 || *after_ply > live.rec.ply) {
            return absl::OutOfRangeError(absl::StrCat("match ", live.id, " has ", live.rec.ply,
                                                      " moves; after_ply ", *after_ply,
                                                      " is not one of them"));
          }
          // Replays the moves to rebuild each missed event as it was first sent.
          absl::StatusOr<std::unique_ptr<AnyGame>> game =
              CreateGame(live.rec.game, live.rec.options);
          if (!game.ok()) return game.status();
          std::vector<int64_t> clocks(live.rec.seats.size(), live.rec.time_initial_ms.value_or(0));
          for (v1::MatchEvent& e : MovesAfter(0, live.rec.moves, **game, clocks)) {
            if (e.move_applied().move().ply() > *after_ply) sink->Push(std::move(e));
          }
          v1::MatchEvent e = Event();
          *e.mutable_resync() = ToProto(live, now);
          sink->Push(std::move(e));
        }
        if (live.rec.status == MatchStatus::kFinished) {
          sink->Push(GameOverEvent(live));
          sink->Close(absl::OkStatus());
          return absl::OkStatus();
        }
        live.watchers.push_back(std::move(sink));
        return absl::OkStatus();
      },
      Fresh::kChecked);
}

}  // namespace ply::lobby
