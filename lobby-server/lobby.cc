#include "lobby-server/lobby.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/client_address.h"
#include "common/log_text.h"
#include "common/proto_convert.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/events/fanout.h"
#include "lobby-server/match/rules.h"
#include "lobby-server/names.h"
#include "lobby-server/rating/ratings.h"
#include "lobby-server/token.h"

namespace ply::lobby {

Lobby::Lobby(MatchStore* store, BotTargets* bots, Executor* executor, LobbyOptions options)
    : store_(store),
      executor_(executor),
      options_(std::move(options)),
      quotas_({.bot_seats = options_.client_bot_seats,
               .bot_matches = options_.client_bot_matches,
               .waiting_matches = options_.client_waiting_matches,
               .open_matches = options_.client_open_matches,
               .address_multiple = options_.address_quota_multiple,
               .registrations_per_hour = options_.client_registrations_per_hour}),
      cache_(store, executor, &metrics_,
             {.size = options_.cache_size,
              .claim_interval = options_.claim_interval,
              .claim_batch = options_.claim_batch},
             options_.now_ms, &stopping_,
             {.reloaded =
                  [this](LiveMatch& live, PastCopy before) {
                    live.claim_after_ms = absl::ToInt64Milliseconds(options_.claim_after);
                    CatchUp(live, std::move(before), NowMs());
                    // A match found finished is announced (and its watchers closed) here.
                    AfterChange(live);
                  },
              .claimed =
                  [this](LiveMatch& live) {
                    GiveBackReclaimedTurn(live);
                    AfterChange(live);
                  }}),
      bots_(this, store, bots, executor, &metrics_,
            {.deadline_margin_ms = options_.bot_deadline_margin_ms,
             .give_up_after = options_.bot_give_up_after,
             .bot_vs_bot_budget_ms = options_.bot_vs_bot_budget_ms,
             .client_bot_calls = options_.client_bot_calls,
             .network_bot_calls = options_.network_bot_calls},
            options_.now_ms, &stopping_),
      presence_(store, {.grace = options_.presence_grace, .beat = options_.presence_beat},
                options_.now_ms),
      matchmaker_(store,
                  {.base_gap = options_.pair_base_gap,
                   .gap_per_s = options_.pair_gap_per_s,
                   .max_gap = options_.pair_max_gap,
                   .bot_after = options_.pair_bot_after,
                   .entry_lifetime = options_.pair_entry_lifetime,
                   .no_show_cooldown = options_.no_show_cooldown},
                  options_.now_ms),
      accounts_(store, &quotas_, options_.now_ms),
      rematches_(store, &quotas_, options_.now_ms) {}

Lobby::~Lobby() { Shutdown(); }

void Lobby::Shutdown() {
  if (stopping_.exchange(true)) return;
  cache_.Leave();
  for (auto& live : cache_.All()) {
    std::lock_guard<std::mutex> l(live->mu);
    CloseWatchers(*live, absl::UnavailableError("this lobby instance is shutting down: reconnect "
                                                "(another instance serves the match)"));
  }
}

absl::Status Lobby::Resume() {
  if (absl::Status s = cache_.Start(); !s.ok()) return s;
  // Several instances starting at once may race to make a bot player: the loser tries again.
  absl::Status seeded = SeedBotRatings();
  if (!seeded.ok()) seeded = SeedBotRatings();
  if (!seeded.ok()) return seeded;
  if (options_.waiting_expiry > absl::ZeroDuration()) ExpireTick();
  if (options_.abort_after > absl::ZeroDuration()) AbortTick();
  if (options_.abandon_after > absl::ZeroDuration() || options_.max_turn > absl::ZeroDuration()) {
    AbandonTick();
  }
  PresenceTick();
  return absl::OkStatus();
}

void Lobby::GiveBackReclaimedTurn(LiveMatch& live) {
  if (!live.rec.time_initial_ms || live.rec.status != MatchStatus::kActive ||
      options_.reclaim_clock_floor <= absl::ZeroDuration()) {
    return;
  }
  const int mover = live.ToMove();
  if (mover < 0 || mover >= static_cast<int>(live.rec.seats.size())) return;
  const int64_t now = NowMs();
  const int64_t had = live.rec.seats[mover].clock_ms;
  const int64_t floor = std::min(had, absl::ToInt64Milliseconds(options_.reclaim_clock_floor));
  if (ClockNow(live.rec, mover, mover, now) >= floor) return;
  // Stored first, so that every instance's copy (and a later owner) sees the same turn.
  const int64_t started = now - (had - floor);
  if (store_->GiveBackTurn(live.id, live.rec.ply, started).ok()) {
    live.rec.turn_started_ms = started;
  }
}

void Lobby::AbortTick() {
  if (stopping_) return;
  // Any instance may sweep: the database aborts each match once. This also catches matches
  // abandoned before this rule existed.
  const std::string text = absl::StrCat("aborted: the first move did not come within ",
                                        SpanText(absl::ToInt64Milliseconds(options_.abort_after)));
  absl::StatusOr<std::vector<int64_t>> gone = store_->AbortUnstarted(
      NowMs() - absl::ToInt64Milliseconds(options_.abort_after), NowMs(), text, /*limit=*/500);
  if (gone.ok()) {
    for (int64_t id : *gone) {
      if (cache_.Find(id) != nullptr) {
        (void)cache_.With(
            id, [](LiveMatch&) { return absl::OkStatus(); }, MatchCache::Fresh::kReload);
      }
    }
  }
  const absl::Duration next =
      gone.ok() && gone->size() == 500
          ? absl::Milliseconds(100)
          : std::clamp(options_.abort_after / 4, absl::Milliseconds(10), absl::Seconds(10));
  executor_->PostAt(absl::Now() + next, [this] { AbortTick(); });
}

void Lobby::ExpireTick() {
  if (stopping_) return;
  // Any instance may sweep: the database cancels each match once.
  const std::string text = absl::StrCat("cancelled: nobody took the open seat within ",
                                        absl::FormatDuration(options_.waiting_expiry));
  absl::StatusOr<std::vector<int64_t>> gone = store_->ExpireWaiting(
      NowMs() - absl::ToInt64Milliseconds(options_.waiting_expiry), text, /*limit=*/500);
  if (gone.ok()) {
    for (int64_t id : *gone) {
      // A copy here (perhaps watched) learns of the end and tells its watchers.
      if (cache_.Find(id) != nullptr) {
        (void)cache_.With(
            id, [](LiveMatch&) { return absl::OkStatus(); }, MatchCache::Fresh::kReload);
      }
    }
  }
  // A full sweep means there may be more: go again soon.
  const absl::Duration next = gone.ok() && gone->size() == 500
                                  ? absl::Milliseconds(100)
                                  : std::min(options_.waiting_expiry / 10, absl::Seconds(30));
  executor_->PostAt(absl::Now() + next, [this] { ExpireTick(); });
}

absl::Status Lobby::CheckBotCapacity(const MatchRecord& rec, bool* scarce) {
  if (scarce != nullptr) *scarce = false;
  int bot_seats = 0;
  for (const SeatRecord& s : rec.seats) bot_seats += s.kind == SeatKind::kBot ? 1 : 0;
  if (bot_seats == 0 || options_.max_bot_seats <= 0) return absl::OkStatus();
  // A soft bound (creates at once may pass it together by a few seats): it keeps the bot tier
  // from being booked far beyond its cores, which a few seats do not change.
  absl::StatusOr<int> in_play = store_->BotSeatsInPlay();
  if (!in_play.ok()) return in_play.status();
  if (*in_play + bot_seats > options_.max_bot_seats) {
    return absl::ResourceExhaustedError(
        absl::StrCat("every bot is busy (", *in_play, " bot seats in play): try again shortly"));
  }
  if (scarce != nullptr) *scarce = 4 * (*in_play + bot_seats) > 3 * options_.max_bot_seats;
  return absl::OkStatus();
}

std::string Lobby::MetricsText() {
  LobbyGauges g;
  std::vector<std::shared_ptr<LiveMatch>> lives = cache_.All();
  g.cached_matches = static_cast<int64_t>(lives.size());
  for (auto& live : lives) {
    std::unique_lock<std::mutex> lock(live->mu, std::try_to_lock);
    if (!lock.owns_lock()) continue;
    g.active_matches += live->rec.status == MatchStatus::kActive ? 1 : 0;
    g.watchers += static_cast<int64_t>(live->watchers.size());
    g.leases_held += live->owned ? 1 : 0;
  }
  g.peers = cache_.Peers();
  const PeerCounters c = store_->peer_counters();
  g.notifications = c.notifications;
  g.db_errors = c.errors;
  g.db_reconnects = c.reconnects;
  g.db_settled_moves = c.settled_moves;
  return RenderMetrics(metrics_, g);
}

v1::ListGamesResponse Lobby::ListGames() {
  v1::ListGamesResponse response;
  for (const GameInfo& info : ply::ListGames()) {
    v1::GameInfo* g = response.add_games();
    ply::ToProto(info, g);
    // Levels a bot seat can use only when there are bots.
    if (!bots_.enabled()) g->clear_levels();
  }
  if (bots_.enabled()) ShowLiveBotRatings(response);
  return response;
}

absl::Status Lobby::WithMatch(int64_t id, const std::function<absl::Status(LiveMatch&)>& fn) {
  return cache_.With(id, fn);
}

size_t Lobby::CachedMatches() { return cache_.size(); }

absl::StatusOr<int> Lobby::Authenticate(const LiveMatch& live, const std::string& token) {
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "no seat token: send it as 'authorization: Bearer <token>' metadata");
  }
  if (!IsWellFormedToken(token)) {
    return absl::UnauthenticatedError("that is not a seat token of this lobby");
  }
  if (std::optional<int> seat = SeatOfToken(live.rec, token)) return *seat;
  absl::StatusOr<std::optional<std::pair<int64_t, int>>> owner =
      store_->FindToken(TokenHash(token));
  if (!owner.ok()) return owner.status();
  if (!owner->has_value()) {
    return absl::UnauthenticatedError("unknown seat token: no seat of this lobby has it");
  }
  return absl::PermissionDeniedError(absl::StrCat("that token holds a seat in match ",
                                                  (*owner)->first, ", not in match ", live.id));
}

absl::StatusOr<int> Lobby::SeatThatMayAct(LiveMatch& live, const std::string& token,
                                          int64_t now_ms) {
  absl::StatusOr<int> seat = Authenticate(live, token);
  if (!seat.ok()) return seat.status();
  // A flag that has fallen but was not yet noticed ends the match first ("over: ... ran out").
  FlagIfExpired(live, now_ms);
  if (absl::Status a = CheckActive(live.rec); !a.ok()) return a;
  return seat;
}

absl::StatusOr<v1::Match> Lobby::WithActingSeat(
    int64_t match_id, const std::string& token,
    const std::function<absl::Status(LiveMatch&, int, int64_t)>& act) {
  v1::Match match;
  absl::Status s = WithMatch(match_id, [&](LiveMatch& live) -> absl::Status {
    const int64_t now = NowMs();
    absl::StatusOr<int> seat = SeatThatMayAct(live, token, now);
    if (!seat.ok()) return seat.status();
    presence_.Seen(live.id, *seat);
    if (absl::Status a = act(live, *seat, now); !a.ok()) return a;
    match = ToProto(live, now);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return match;
}

absl::StatusOr<v1::CreateMatchResponse> Lobby::CreateMatch(const v1::CreateMatchRequest& req,
                                                           const std::string& client,
                                                           const std::string& player_key) {
  absl::StatusOr<std::optional<PlayerRecord>> player = PlayerOf(player_key);
  if (!player.ok()) return player.status();
  if (req.seats_size() > 16)
    return absl::InvalidArgumentError("that is not a game this lobby offers");
  absl::StatusOr<std::unique_ptr<AnyGame>> game = GameOfSpec(req.spec());
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
    if (absl::Status s = CheckTimeControl(req.time_control()); !s.ok()) return s;
    rec.time_initial_ms = req.time_control().initial_ms();
    rec.time_increment_ms = req.time_control().increment_ms();
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
      if (!bots_.enabled()) {
        return absl::FailedPreconditionError(
            "this lobby has no bot service (--bot_target), so it cannot seat bots");
      }
      seat.kind = SeatKind::kBot;
      seat.difficulty = spec.difficulty().empty() ? "medium" : spec.difficulty();
      if (FindLevel(info.levels, seat.difficulty) == nullptr) {
        std::vector<std::string> names;
        for (const Difficulty& d : info.levels) names.push_back(d.name);
        return absl::InvalidArgumentError(
            absl::StrCat(info.title, " has no difficulty '", seat.difficulty,
                         "'; its levels: ", absl::StrJoin(names, ", ")));
      }
      seat.display_name = absl::StrCat("bot (", seat.difficulty, ")");
    } else if (spec.kind() == v1::SEAT_KIND_HUMAN) {
      seat.kind = SeatKind::kHuman;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("seat ", i + 1, " needs a kind: human or bot"));
    }
    rec.seats.push_back(std::move(seat));
  }
  std::string token;
  if (req.has_take_seat() && req.take_seat() >= 0) {
    const int s = req.take_seat();
    if (s >= static_cast<int>(rec.seats.size()) || rec.seats[s].kind != SeatKind::kHuman) {
      return absl::InvalidArgumentError(
          absl::StrCat("seat ", s + 1, " (take_seat ", s, ") is not a human seat"));
    }
    absl::StatusOr<std::string> name =
        *player ? absl::StatusOr<std::string>((*player)->name) : GuestName(req.display_name());
    if (!name.ok()) return name.status();
    token = NewSeatToken();
    rec.seats[s].display_name = *name;
    rec.seats[s].token_hash = TokenHash(token);
    if (*player) {
      rec.seats[s].player_id = (*player)->id;
      rec.seats[s].player = (*player)->name;
    }
  }
  // Bot levels are players too, rated like people (a store without players has none).
  bool people = false;
  for (SeatRecord& seat : rec.seats) {
    people |= seat.kind == SeatKind::kHuman;
    if (seat.kind != SeatKind::kBot) continue;
    absl::StatusOr<int64_t> bot = store_->BotPlayer(seat.difficulty);
    if (bot.ok()) {
      seat.player_id = *bot;
      seat.player = absl::StrCat("bot:", seat.difficulty);
    } else if (!absl::IsUnimplemented(bot.status())) {
      return bot.status();
    }
  }
  // Rated unless asked not to, when a person plays and every seat taken is a player's (a guest
  // taking an open seat later makes it casual).
  rec.rated = !req.casual() && people &&
              std::all_of(rec.seats.begin(), rec.seats.end(),
                          [](const SeatRecord& s) { return !s.taken() || s.player_id != 0; });
  if (rec.rated && req.has_time_control()) {
    if (absl::Status s = CheckRatedClock(req.time_control()); !s.ok()) return s;
  }
  const bool full = std::all_of(rec.seats.begin(), rec.seats.end(),
                                [](const SeatRecord& s) { return s.taken(); });
  rec.status = full ? MatchStatus::kActive : MatchStatus::kWaiting;
  rec.turn_started_ms = rec.created_ms;
  // The quotas count against the player when the call has one (a player is the same client
  // from any address, and many players may share one behind a proxy), else the address.
  rec.creator = client.empty() || !*player ? client : absl::StrCat("player:", (*player)->id);
  rec.creator_address = client;
  rec.creator_network = ClientNetworkKey(client);
  const bool bots_only = std::all_of(rec.seats.begin(), rec.seats.end(),
                                     [](const SeatRecord& s) { return s.kind == SeatKind::kBot; });
  // Bot-vs-bot matches are for watching: people need not see them move faster than this.
  if (bots_only) {
    rec.bot_pacing_ms = std::max(rec.bot_pacing_ms, options_.bot_vs_bot_min_pacing_ms);
  }
  bool scarce = false;
  if (absl::Status capacity = CheckBotCapacity(rec, &scarce); !capacity.ok()) return capacity;
  // The creator's quotas are checked with the create, in one step for that creator.
  absl::StatusOr<int64_t> id = store_->CreateMatchWithin(rec, quotas_.For(rec, scarce));
  if (!id.ok()) return id.status();
  // Memory starts as what was just written, so the first use needs no reload.
  rec.id = *id;
  auto fresh = std::make_shared<LiveMatch>();
  fresh->id = *id;
  fresh->info = FindGame(rec.game);
  fresh->rec = std::move(rec);
  fresh->game = *std::move(game);
  fresh->loaded = fresh->info != nullptr;
  fresh->claim_after_ms = absl::ToInt64Milliseconds(options_.claim_after);
  // Players' ratings were read by the database as the seats were written: load them.
  fresh->stale = std::any_of(fresh->rec.seats.begin(), fresh->rec.seats.end(),
                             [](const SeatRecord& seat) { return seat.player_id != 0; });
  cache_.Add(std::move(fresh));
  v1::CreateMatchResponse response;
  absl::Status s = WithMatch(*id, [&](LiveMatch& live) {
    // What a load would have done next: arm the clock, ask a bot to move.
    cache_.TryOwn(live);
    AfterChange(live);
    *response.mutable_match() = ToProto(live, NowMs());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (!token.empty()) presence_.Seen(*id, req.take_seat());
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
  for (const MatchRecord& r : *found) *response.add_matches() = SummaryToProto(r);
  if (static_cast<int>(found->size()) == filter.limit) {
    response.set_next_page_token(absl::StrCat(found->back().id));
  }
  return response;
}

absl::StatusOr<v1::Match> Lobby::GetMatch(int64_t match_id) {
  v1::Match match;
  absl::Status s = cache_.With(
      match_id,
      [&](LiveMatch& live) {
        match = ToProto(live, NowMs());
        return absl::OkStatus();
      },
      Fresh::kChecked);
  if (!s.ok()) return s;
  return match;
}

bool Lobby::TryGetMatch(int64_t match_id, v1::Match* out) {
  // With other instances, memory may be a notification behind: GetMatch checks the version.
  if (HasPeers()) return false;
  std::shared_ptr<LiveMatch> live = cache_.Find(match_id);
  if (live == nullptr) return false;
  std::unique_lock<std::mutex> lock(live->mu, std::try_to_lock);
  if (!lock.owns_lock() || !live->Settled()) return false;
  *out = ToProto(*live, NowMs());
  return true;
}

absl::StatusOr<v1::JoinMatchResponse> Lobby::JoinMatch(const v1::JoinMatchRequest& req,
                                                       const std::string& player_key) {
  absl::StatusOr<std::optional<PlayerRecord>> player = PlayerOf(player_key);
  if (!player.ok()) return player.status();
  absl::StatusOr<std::string> name =
      *player ? absl::StatusOr<std::string>((*player)->name) : GuestName(req.display_name());
  if (!name.ok()) return name.status();
  const int64_t player_id = *player ? (*player)->id : 0;
  v1::JoinMatchResponse response;
  absl::Status s = WithMatch(req.match_id(), [&](LiveMatch& live) -> absl::Status {
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
          absl::StrCat("match ", live.id, " has seats 1 to ", seats.size()));
    }
    if (seats[seat].kind == SeatKind::kBot) {
      return absl::InvalidArgumentError(absl::StrCat("seat ", seat + 1, " is a bot's"));
    }
    if (seats[seat].taken()) {
      return absl::AlreadyExistsError(
          absl::StrCat("seat ", seat + 1, " of match ", live.id, " is already taken"));
    }
    if (live.rec.status != MatchStatus::kWaiting) return CheckActive(live.rec);
    if (absl::Status s = CheckSeatOfRatedMatch(live.rec, player_id); !s.ok()) return s;
    const std::string token = NewSeatToken();
    const std::string hash = TokenHash(token);
    const int64_t now = NowMs();
    SeatRecord taken;
    absl::StatusOr<bool> started =
        store_->TakeSeat(live.id, seat, *name, hash, now, player_id, &taken);
    if (!started.ok()) {
      live.stale = true;
      return started.status();
    }
    seats[seat].display_name = *name;
    seats[seat].token_hash = hash;
    seats[seat].player_id = player_id;
    if (*player) {
      seats[seat].player = (*player)->name;
      // The seat's rating, as the database read it, for the answer and the watchers' event
      // (they showed 0 for it).
      seats[seat].rating = taken.rating;
      seats[seat].provisional = taken.provisional;
    } else {
      live.rec.rated = false;
    }
    if (*started) {
      live.rec.status = MatchStatus::kActive;
      live.rec.turn_started_ms = now;
    }
    v1::MatchEvent e = Event(now);
    v1::Match snapshot = ToProto(live, now);
    *e.mutable_seat_joined()->mutable_seat() = snapshot.seats(seat);
    e.mutable_seat_joined()->set_status(snapshot.status());
    Broadcast(live, std::move(e));
    cache_.TryOwn(live);
    AfterChange(live);
    presence_.Seen(live.id, seat);
    *response.mutable_match() = std::move(snapshot);
    response.set_seat(seat);
    response.set_seat_token(token);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return response;
}

absl::Status Lobby::Watch(int64_t match_id, std::optional<int> after_ply,
                          std::shared_ptr<EventSink> sink, const std::string& token, int* seat) {
  if (seat != nullptr) *seat = -1;
  int held = -1;
  // A stream that arrives while this instance leaves would hear nothing more: elsewhere.
  if (stopping_) {
    return absl::UnavailableError(
        "this lobby instance is shutting down: reconnect (another instance serves the match)");
  }
  absl::Status s = cache_.With(
      match_id,
      [&](LiveMatch& live) -> absl::Status {
        if (!token.empty()) {
          absl::StatusOr<int> mine = Authenticate(live, token);
          if (!mine.ok()) return mine.status();
          held = *mine;
        }
        absl::StatusOr<bool> stays = Greet(live, after_ply, *sink, NowMs());
        if (!stays.ok()) return stays.status();
        if (*stays) {
          AddWatcher(live, std::move(sink));
          StartClockTicks(live);
        } else {
          held = -1;
        }
        return absl::OkStatus();
      },
      Fresh::kChecked);
  if (!s.ok() || held < 0) return s;
  // Written before the stream can end, so that the -1 of its end comes after this +1.
  presence_.StreamOpened(match_id, held);
  if (seat != nullptr) *seat = held;
  return s;
}

}  // namespace ply::lobby
