// Quick pairing, the Lobby's part: a Pair stream queues its player (pairing_queue), ticks until
// a match is made for it here or on another instance, offers a bot level after a while, and
// delivers the seat. The queue's transactions are the store's (TryPair).
#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bot-service/log_text.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/lobby.h"
#include "lobby-server/match/rules.h"
#include "lobby-server/names.h"
#include "lobby-server/token.h"

namespace ply::lobby {

int64_t Lobby::QueueAliveSinceMs(int64_t now_ms) const {
  return now_ms - absl::ToInt64Milliseconds(options_.pair_entry_lifetime);
}

struct Lobby::PairState {
  v1::PairRequest request;
  GameOptions options;
  std::string game;
  PlayerRecord player;
  QueueEntry entry;
  std::shared_ptr<PairSink> sink;
  // The seat token for the match this entry is paired into: made here, kept in this stream
  // only (the queue row holds its hash).
  std::string seat_token;
  int64_t last_waiting_ms = 0;
  // When this stream last marked its entry alive.
  int64_t last_alive_ms = 0;
  bool offered = false;
};

absl::Status Lobby::Pair(const v1::PairRequest& req, const std::string& player_key,
                         std::shared_ptr<PairSink> sink) {
  if (stopping_) return absl::UnavailableError("this lobby instance is shutting down: pair again");
  absl::StatusOr<std::optional<PlayerRecord>> player = PlayerOf(player_key);
  if (!player.ok()) return player.status();
  if (!*player) return absl::UnauthenticatedError("pairing is for players: ply login NAME first");
  absl::StatusOr<std::unique_ptr<AnyGame>> game = GameOfSpec(req.spec());
  if (!game.ok()) return game.status();
  if (req.has_time_control()) {
    if (absl::Status s = CheckTimeControl(req.time_control()); !s.ok()) return s;
  }
  auto state = std::make_shared<PairState>();
  state->request = req;
  state->game = (*game)->Info().name;
  state->options = (*game)->Options();
  state->player = **player;
  state->sink = std::move(sink);
  // The pool: who can meet whom (the same game, options, time control and casual or not).
  std::string pool = state->game;
  for (const auto& [k, v] : state->options) absl::StrAppend(&pool, "|", k, "=", v);
  absl::StrAppend(&pool, "|",
                  req.has_time_control() ? absl::StrCat(req.time_control().initial_ms(), "+",
                                                        req.time_control().increment_ms())
                                         : "-",
                  req.casual() ? "|casual" : "|rated");
  double rating = 1500;
  if (absl::StatusOr<PlayerRecord> full = store_->LoadPlayer(state->player.name); full.ok()) {
    for (const GameRatingRecord& r : full->ratings) {
      if (r.game == state->game) rating = r.rating;
    }
  }
  state->seat_token = NewSeatToken();
  state->entry = {.player_id = state->player.id,
                  .name = state->player.name,
                  .pool = pool,
                  .rating = rating,
                  .joined_ms = NowMs(),
                  .token_hash = TokenHash(state->seat_token)};
  state->entry.alive_ms = state->entry.joined_ms;
  state->last_alive_ms = state->entry.joined_ms;
  absl::StatusOr<int64_t> id = store_->JoinQueue(state->entry, QueueAliveSinceMs(NowMs()));
  if (!id.ok()) return id.status();
  state->entry.id = *id;
  // Leaving the queue (the client closed the stream) takes the entry out at once.
  state->sink->OnGone([this, store = store_, entry = *id] {
    executor_->PostAt(absl::Now(), [store, entry] { store->LeaveQueue(entry); });
  });
  PairTick(state);
  return absl::OkStatus();
}

void Lobby::PairTick(std::shared_ptr<PairState> state) {
  if (state->sink->Gone()) return;
  if (stopping_) {
    store_->LeaveQueue(state->entry.id);
    state->sink->Finish(absl::UnavailableError("this lobby instance is shutting down: pair again"));
    return;
  }
  // The entry is marked alive every second while this stream waits: one that is not (its
  // stream or this instance is gone) is paired with nobody and removed.
  int64_t refresh = 0;
  if (NowMs() - state->last_alive_ms >= 1000) refresh = state->last_alive_ms = NowMs();
  absl::StatusOr<std::optional<Pairing>> found = store_->QueueResult(state->entry.id, refresh);
  if (absl::IsAborted(found.status())) {
    state->sink->Finish(found.status());
    return;
  }
  if (found.ok() && !*found) {
    found = store_->TryPair(state->entry, NowMs(), QueueAliveSinceMs(NowMs()),
                            options_.pair_base_gap, options_.pair_gap_per_s, options_.pair_max_gap,
                            [&](const QueueEntry& me, const QueueEntry& them) {
                              return MakePairedMatch(*state, me, them);
                            });
  }
  if (found.ok() && *found) return PairDelivered(*state, **found);
  const int64_t now = NowMs();
  const int64_t waited = now - state->entry.joined_ms;
  if (!state->offered && waited >= absl::ToInt64Milliseconds(options_.pair_bot_after)) {
    // The bot level whose rating is nearest the player's ("medium" while none has one).
    std::string level = "medium";
    double best = 1e9, level_rating = 1500;
    if (absl::StatusOr<std::vector<std::pair<std::string, double>>> bots =
            store_->BotRatings(state->game);
        bots.ok()) {
      for (const auto& [name, r] : *bots) {
        if (std::abs(r - state->entry.rating) < best) {
          best = std::abs(r - state->entry.rating);
          level = name.substr(name.find(':') + 1);
          level_rating = r;
        }
      }
    }
    v1::PairEvent e;
    e.mutable_bot_offer()->set_level(level);
    e.mutable_bot_offer()->set_rating(static_cast<int>(std::lround(level_rating)));
    state->offered = true;
    state->sink->Send(std::move(e));
  }
  if (now - state->last_waiting_ms >= 2000) {
    state->last_waiting_ms = now;
    v1::PairEvent e;
    e.mutable_waiting()->set_waited_ms(waited);
    e.mutable_waiting()->set_rating_gap(static_cast<int>(
        std::min(options_.pair_max_gap,
                 options_.pair_base_gap + options_.pair_gap_per_s * waited / 1000.0)));
    state->sink->Send(std::move(e));
  }
  executor_->PostAt(absl::Now() + absl::Milliseconds(250), [this, state] { PairTick(state); });
}

absl::StatusOr<PairedMatch> Lobby::MakePairedMatch(const PairState& state, const QueueEntry& me,
                                                   const QueueEntry& them) {
  // Colours by recent history: whoever began more of their last games moves second.
  const int mine = me.first_move_balance;
  const int theirs = them.first_move_balance;
  const int my_seat =
      mine != theirs ? (mine > theirs ? 1 : 0) : (me.joined_ms <= them.joined_ms ? 0 : 1);
  PairedMatch out;
  out.my_seat = my_seat;
  MatchRecord& rec = out.match;
  rec.game = state.game;
  rec.options = state.options;
  rec.created_ms = NowMs();
  rec.turn_started_ms = rec.created_ms;
  rec.status = MatchStatus::kActive;
  rec.bot_pacing_ms = options_.default_bot_pacing_ms;
  rec.rated = !state.request.casual();
  if (state.request.has_time_control()) {
    rec.time_initial_ms = state.request.time_control().initial_ms();
    rec.time_increment_ms = state.request.time_control().increment_ms();
  }
  for (int seat = 0; seat < 2; ++seat) {
    const QueueEntry& who = seat == my_seat ? me : them;
    SeatRecord s;
    s.kind = SeatKind::kHuman;
    s.display_name = who.name;
    s.player_id = who.player_id;
    s.player = who.name;
    s.clock_ms = rec.time_initial_ms.value_or(0);
    s.token_hash = who.token_hash;
    rec.seats.push_back(std::move(s));
  }
  return out;
}

void Lobby::PairDelivered(PairState& state, const Pairing& pairing) {
  v1::PairEvent e;
  v1::PairFound* found = e.mutable_paired();
  found->set_match_id(pairing.match_id);
  found->set_seat(pairing.seat);
  found->set_seat_token(state.seat_token);
  // Loaded here (its clock gets an owner at once) and the opponent named.
  (void)WithMatch(pairing.match_id, [&](LiveMatch& live) {
    cache_.TryOwn(live);
    AfterChange(live);
    const v1::Match m = ToProto(live, NowMs());
    if (m.seats_size() == 2) {
      found->set_opponent(m.seats(1 - pairing.seat).player());
      found->set_opponent_rating(m.seats(1 - pairing.seat).rating());
    }
    return absl::OkStatus();
  });
  store_->LeaveQueue(state.entry.id);
  state.sink->Send(std::move(e));
  state.sink->Finish(absl::OkStatus());
}

}  // namespace ply::lobby
