// Quick pairing, the Lobby's part: a Pair stream queues its player, looks at its ticket every
// 250 ms until a match is made for it here or on another instance (the rules are the
// Matchmaker's: players/matchmaker.h), tells it of the bot offer and its wait, and delivers the
// seat.
#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/log_text.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/lobby.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/match/rules.h"
#include "lobby-server/names.h"
#include "lobby-server/rating/ratings.h"
#include "lobby-server/token.h"

namespace ply::lobby {

struct Lobby::PairState {
  v1::PairRequest request;
  GameOptions options;
  QueueTicket ticket;
  std::shared_ptr<PairSink> sink;
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
    if (!req.casual()) {
      if (absl::Status s = CheckRatedClock(req.time_control()); !s.ok()) return s;
    }
  }
  auto state = std::make_shared<PairState>();
  state->request = req;
  state->options = (*game)->Options();
  state->sink = std::move(sink);
  const std::string name = (*game)->Info().name;
  const std::string pool = Matchmaker::Pool(
      name, state->options,
      req.has_time_control()
          ? absl::StrCat(req.time_control().initial_ms(), "+", req.time_control().increment_ms())
          : "",
      req.casual());
  double rating = NewcomerRating(name);
  if (absl::StatusOr<PlayerRecord> full = store_->LoadPlayer((*player)->name); full.ok()) {
    for (const GameRatingRecord& r : full->ratings) {
      if (r.game == name) rating = r.rating;
    }
  }
  absl::StatusOr<QueueTicket> ticket = matchmaker_.Join(**player, name, pool, rating);
  if (!ticket.ok()) return ticket.status();
  state->ticket = *std::move(ticket);
  // Leaving the queue (the client closed the stream) takes the entry out at once.
  state->sink->OnGone([this, ticket = state->ticket] {
    executor_->PostAt(absl::Now(), [this, ticket] { matchmaker_.Leave(ticket); });
  });
  PairTick(state);
  return absl::OkStatus();
}

void Lobby::PairTick(std::shared_ptr<PairState> state) {
  if (state->sink->Gone()) return;
  if (stopping_) {
    matchmaker_.Leave(state->ticket);
    state->sink->Finish(absl::UnavailableError("this lobby instance is shutting down: pair again"));
    return;
  }
  absl::StatusOr<QueueLook> look =
      matchmaker_.Look(state->ticket, [&](const QueueEntry& me, const QueueEntry& them) {
        return MakePairedMatch(*state, me, them);
      });
  if (!look.ok()) {
    state->sink->Finish(look.status());
    return;
  }
  if (look->paired) return PairDelivered(*state, *look->paired);
  if (look->bot_offer) {
    v1::PairEvent e;
    e.mutable_bot_offer()->set_level(look->bot_offer->first);
    e.mutable_bot_offer()->set_rating(look->bot_offer->second);
    state->sink->Send(std::move(e));
  }
  if (look->waiting) {
    v1::PairEvent e;
    e.mutable_waiting()->set_waited_ms(look->waiting->first);
    e.mutable_waiting()->set_rating_gap(look->waiting->second);
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
  rec.game = state.ticket.game;
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
  found->set_seat_token(state.ticket.seat_token);
  // Loaded here (its clock gets an owner at once) and the opponent named.
  (void)WithMatch(pairing.match_id, [&](LiveMatch& live) {
    cache_.TryOwn(live);
    AfterChange(live);
    const v1::Match m = ToProto(live, NowMs());
    if (m.seats_size() == 2) {
      found->set_opponent(m.seats(1 - pairing.seat).player());
      found->set_opponent_rating(m.seats(1 - pairing.seat).rating());
      found->set_opponent_provisional(m.seats(1 - pairing.seat).provisional());
    }
    return absl::OkStatus();
  });
  matchmaker_.Leave(state.ticket);
  state.sink->Send(std::move(e));
  state.sink->Finish(absl::OkStatus());
  // Each side's instance looks (the first to find a player missing ends the match).
  if (options_.no_show_after > absl::ZeroDuration()) {
    const int64_t id = pairing.match_id;
    executor_->PostAt(absl::Now() + options_.no_show_after, [this, id] { AbortIfNoShow(id); });
  }
  if (options_.paired_first_move > absl::ZeroDuration()) {
    const int64_t id = pairing.match_id;
    executor_->PostAt(absl::Now() + options_.paired_first_move,
                      [this, id] { AbortIfNoFirstMove(id); });
  }
}

namespace {

// Some side has not made its first move yet.
bool Unbegun(const LiveMatch& live) {
  return live.rec.status == MatchStatus::kActive &&
         live.rec.ply < static_cast<int>(live.rec.seats.size());
}

}  // namespace

void Lobby::AbortIfNoFirstMove(int64_t match_id) {
  if (stopping_) return;
  const int64_t bound_ms = absl::ToInt64Milliseconds(options_.paired_first_move);
  int64_t due_ms = -1;
  int idle_seat = -1;
  (void)WithMatch(match_id, [&](LiveMatch& live) -> absl::Status {
    if (!Unbegun(live)) return absl::OkStatus();
    // Pairing seats people only; a bot seat here would mean another kind of match.
    if (std::any_of(live.rec.seats.begin(), live.rec.seats.end(),
                    [](const SeatRecord& s) { return s.kind != SeatKind::kHuman; })) {
      return absl::OkStatus();
    }
    const int seat = live.game->SideToMove();
    const int64_t now = NowMs();
    if (now < live.rec.turn_started_ms + bound_ms) {
      due_ms = live.rec.turn_started_ms + bound_ms;
      return absl::OkStatus();
    }
    const SeatRecord& idle = live.rec.seats[seat];
    const std::string name =
        idle.display_name.empty() ? SideName(live.info, seat) : idle.display_name;
    const absl::Status ended = CommitFinish(
        live,
        MatchResult{.winner = -1,
                    .reason = EndReason::kAborted,
                    .text = absl::StrCat("aborted: ", name, " made no first move within ",
                                         SpanText(bound_ms), "; no result")},
        {});
    if (ended.ok() && live.rec.status == MatchStatus::kFinished) idle_seat = seat;
    return ended;
  });
  if (due_ms >= 0) {
    executor_->PostAt(absl::Now() + absl::Milliseconds(due_ms - NowMs()),
                      [this, match_id] { AbortIfNoFirstMove(match_id); });
  }
  // Written outside the match's lock, as AbortIfNoShow does.
  if (idle_seat >= 0) (void)store_->MarkNoShows(match_id, {idle_seat}, NowMs());
}

void Lobby::AbortIfNoShow(int64_t match_id) {
  if (stopping_) return;
  const auto unbegun = Unbegun;
  int64_t paired_ms = 0;
  bool look = false;
  (void)WithMatch(match_id, [&](LiveMatch& live) {
    look = unbegun(live);
    paired_ms = live.rec.created_ms;
    return absl::OkStatus();
  });
  if (!look) return;
  // Seen since the pairing by any instance, or a stream open now. Without the database (or a
  // store that keeps no presence) nobody is judged absent: the first-move abort still holds.
  absl::StatusOr<std::vector<SeatPresence>> found = presence_.Load({match_id}, paired_ms);
  if (!found.ok()) return;
  std::vector<int> absent_seats;
  bool aborted = false;
  (void)WithMatch(match_id, [&](LiveMatch& live) -> absl::Status {
    if (!unbegun(live)) return absl::OkStatus();
    std::vector<std::string> absent;
    for (size_t i = 0; i < live.rec.seats.size(); ++i) {
      const SeatRecord& seat = live.rec.seats[i];
      if (seat.kind != SeatKind::kHuman) continue;
      const bool came = std::any_of(found->begin(), found->end(), [&](const SeatPresence& p) {
        return p.seat == static_cast<int>(i) && p.connected;
      });
      if (!came) {
        absent_seats.push_back(static_cast<int>(i));
        absent.push_back(seat.display_name.empty() ? SideName(live.info, static_cast<int>(i))
                                                   : seat.display_name);
      }
    }
    if (absent.empty()) return absl::OkStatus();
    const absl::Status ended = CommitFinish(
        live,
        MatchResult{
            .winner = -1,
            .reason = EndReason::kAborted,
            .text = absl::StrCat("aborted: ", absl::StrJoin(absent, " and "),
                                 " did not come to the game within ",
                                 SpanText(absl::ToInt64Milliseconds(options_.no_show_after)),
                                 " of the pairing; no result")},
        {});
    aborted = ended.ok() && live.rec.status == MatchStatus::kFinished;
    return ended;
  });
  // Who did not come waits before pairing again (players/matchmaker.h); written outside the
  // match's lock.
  if (aborted) (void)store_->MarkNoShows(match_id, absent_seats, NowMs());
}

}  // namespace ply::lobby
