// What the lobby does with presence (players/presence.h keeps it): each tick the sightings and
// beats are written, the watched matches' seats are read back and a change is announced to
// their watchers; a player whose opponent has gone (no stream, no call, for --claim_after_s in
// an untimed match) may claim the game or a draw; and a game against a bot whose person has
// gone for --abandon_after_s ends by rule.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lobby-server/convert.h"
#include "lobby-server/events/fanout.h"
#include "lobby-server/lobby.h"
#include "lobby-server/match/clock.h"

namespace ply::lobby {

void Lobby::PresenceTick() {
  if (stopping_) return;
  const int64_t now = NowMs();
  // Sightings and (on the beat) this instance's open streams, written; retried when they fail.
  presence_.Write();
  std::vector<std::shared_ptr<LiveMatch>> watched;
  std::vector<int64_t> ids;
  for (std::shared_ptr<LiveMatch>& live : cache_.All()) {
    std::lock_guard<std::mutex> lock(live->mu);
    if (live->dropped || live->rec.status != MatchStatus::kActive || live->watchers.empty() ||
        std::none_of(live->rec.seats.begin(), live->rec.seats.end(),
                     [](const SeatRecord& s) { return s.kind == SeatKind::kHuman; })) {
      continue;
    }
    ids.push_back(live->id);
    watched.push_back(std::move(live));
  }
  if (!ids.empty()) {
    absl::StatusOr<std::vector<SeatPresence>> found =
        presence_.Load(ids, presence_.SeenSinceMs(now));
    if (found.ok()) {
      for (std::shared_ptr<LiveMatch>& live : watched) {
        std::vector<SeatPresence> mine;
        for (const SeatPresence& p : *found) {
          if (p.match_id == live->id) mine.push_back(p);
        }
        std::lock_guard<std::mutex> lock(live->mu);
        if (!live->dropped && live->rec.status == MatchStatus::kActive) {
          UpdatePresence(*live, mine, now);
        }
      }
    }
  }
  executor_->PostAt(absl::Now() + options_.presence_poll, [this] { PresenceTick(); });
}

void Lobby::UpdatePresence(LiveMatch& live, const std::vector<SeatPresence>& found,
                           int64_t now_ms) {
  live.presence.resize(live.rec.seats.size());
  const int to_move = live.ToMove();
  for (size_t i = 0; i < live.rec.seats.size(); ++i) {
    const SeatRecord& seat = live.rec.seats[i];
    if (seat.kind != SeatKind::kHuman || !seat.taken()) continue;
    SeatPresence p;
    for (const SeatPresence& f : found) {
      if (f.seat == static_cast<int>(i)) p = f;
    }
    LiveMatch::Presence& state = live.presence[i];
    if (state.known && state.present == p.connected) continue;
    // A seat first looked at is announced only when it is away (its presence is the rule).
    const bool announce = state.known || !p.connected;
    state = {.known = true, .present = p.connected, .since_ms = p.connected ? 0 : p.last_seen_ms};
    if (!announce) continue;
    v1::MatchEvent e = Event(now_ms);
    v1::PresenceChanged* change = e.mutable_presence();
    change->set_seat(static_cast<int>(i));
    change->set_present(p.connected);
    change->set_name(seat.display_name);
    if (!p.connected) {
      change->set_away_since_ms(state.since_ms);
      if (to_move == static_cast<int>(i) && !live.rec.time_initial_ms &&
          live.rec.ply >= static_cast<int>(live.rec.seats.size()) &&
          options_.claim_after > absl::ZeroDuration()) {
        change->set_claim_from_ms(std::max(state.since_ms, live.rec.turn_started_ms) +
                                  absl::ToInt64Milliseconds(options_.claim_after));
      }
    }
    Broadcast(live, std::move(e));
  }
}

absl::StatusOr<v1::HereResponse> Lobby::Here(int64_t match_id, const std::string& token) {
  v1::HereResponse response;
  int seat = -1;
  absl::Status s = WithMatch(match_id, [&](LiveMatch& live) -> absl::Status {
    absl::StatusOr<int> mine = Authenticate(live, token);
    if (!mine.ok()) return mine.status();
    seat = *mine;
    response.set_active(live.rec.status != MatchStatus::kFinished);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (response.active()) presence_.Seen(match_id, seat);
  return response;
}

void Lobby::WatchEnded(int64_t match_id, int seat) {
  // The write waits for the database: off the gRPC thread.
  auto closed = [this, match_id, seat] { presence_.StreamClosed(match_id, seat); };
  if (!executor_->Post(closed)) closed();
}

bool Lobby::TurnOverlong(const LiveMatch& live, int64_t now_ms) const {
  const int64_t max_turn = absl::ToInt64Milliseconds(options_.max_turn);
  return max_turn > 0 && now_ms - live.rec.turn_started_ms >= max_turn;
}

std::optional<MatchResult> Lobby::AbandonedResult(const LiveMatch& live,
                                                  const std::vector<SeatPresence>* found,
                                                  int64_t now_ms) {
  const int64_t bound = absl::ToInt64Milliseconds(options_.abandon_after);
  const int mover = live.ToMove();
  // Timed or not: a clock of a day (which the lobby allows) held a bot seat for that day after
  // its person had gone, past these rules, when they skipped timed matches.
  if (!live.owned || mover < 0 || live.rec.seats[mover].kind != SeatKind::kHuman) {
    return std::nullopt;
  }
  const int64_t on_move = now_ms - live.rec.turn_started_ms;
  const bool overlong = TurnOverlong(live, now_ms);
  if (!overlong && (bound <= 0 || on_move < bound)) return std::nullopt;
  int people = 0, bots = 0;
  for (const SeatRecord& seat : live.rec.seats) {
    people += seat.kind == SeatKind::kHuman ? 1 : 0;
    bots += seat.kind == SeatKind::kBot ? 1 : 0;
  }
  if (bots == 0) return std::nullopt;
  // Every person must be gone: no stream open on a live instance, not seen within the bound
  // (Presence::Load: by any instance, or by a call here not yet written). A move past
  // max_turn ends the match whoever is there.
  if (found != nullptr && !overlong) {
    for (const SeatPresence& p : *found) {
      if (p.connected && p.seat >= 0 && p.seat < static_cast<int>(live.rec.seats.size()) &&
          live.rec.seats[p.seat].kind == SeatKind::kHuman) {
        return std::nullopt;
      }
    }
  }
  const SeatRecord& gone = live.rec.seats[mover];
  const std::string name =
      gone.display_name.empty() ? SideName(live.info, mover) : gone.display_name;
  const std::string left =
      overlong
          ? absl::StrCat(name, " took over ",
                         SpanText(absl::ToInt64Milliseconds(options_.max_turn)), " on one move")
          : absl::StrCat(name, " left the game (gone ", SpanText(bound), ")");
  // Rated against a bot: the person loses, as a claim would have it. Casual: no result.
  if (live.rec.rated && people == 1 && live.rec.seats.size() == 2) {
    return MatchResult{
        .winner = 1 - mover,
        .reason = EndReason::kAbandoned,
        .text = absl::StrCat(left, "; ", SideName(live.info, 1 - mover), " wins by abandonment")};
  }
  return MatchResult{.winner = -1,
                     .reason = EndReason::kAborted,
                     .text = absl::StrCat("aborted: ", left, "; no result")};
}

void Lobby::AbandonTick() {
  if (stopping_) return;
  const int64_t now = NowMs();
  const int64_t bound = absl::ToInt64Milliseconds(options_.abandon_after);
  // Only this instance's own matches (each match with a bot has one owner): what is looked at
  // grows with the matches that may be abandoned, and none is ended by two instances.
  std::vector<int64_t> ids;
  for (std::shared_ptr<LiveMatch>& live : cache_.All()) {
    std::lock_guard<std::mutex> lock(live->mu);
    if (live->dropped || !live->Settled() || live->rec.status != MatchStatus::kActive) continue;
    if (AbandonedResult(*live, nullptr, now).has_value()) ids.push_back(live->id);
  }
  if (!ids.empty()) {
    absl::StatusOr<std::vector<SeatPresence>> found = presence_.Load(ids, now - bound);
    // Without the database nobody is judged gone; a store without presence judges by the turn.
    if (found.ok() || absl::IsUnimplemented(found.status())) {
      for (int64_t id : ids) {
        std::vector<SeatPresence> mine;
        if (found.ok()) {
          for (const SeatPresence& p : *found) {
            if (p.match_id == id) mine.push_back(p);
          }
        }
        (void)WithMatch(id, [&](LiveMatch& live) -> absl::Status {
          if (live.rec.status != MatchStatus::kActive) return absl::OkStatus();
          std::optional<MatchResult> result =
              AbandonedResult(live, found.ok() ? &mine : nullptr, NowMs());
          if (!result) return absl::OkStatus();
          return CommitFinish(live, *std::move(result), {});
        });
      }
    }
  }
  // A quarter of the shorter bound, so that neither is overrun by much.
  absl::Duration shorter = options_.abandon_after;
  if (shorter <= absl::ZeroDuration() ||
      (options_.max_turn > absl::ZeroDuration() && options_.max_turn < shorter)) {
    shorter = options_.max_turn;
  }
  executor_->PostAt(
      absl::Now() + std::clamp(shorter / 4, absl::Milliseconds(10), absl::Seconds(10)),
      [this] { AbandonTick(); });
}

absl::StatusOr<v1::Match> Lobby::ClaimVictory(int64_t match_id, bool draw,
                                              const std::string& token) {
  return WithActingSeat(
      match_id, token, [&](LiveMatch& live, int seat, int64_t now) -> absl::Status {
        if (live.rec.time_initial_ms) {
          return absl::FailedPreconditionError(
              absl::StrCat("match ", live.id,
                           " has clocks: a side that has gone loses on time, there is nothing to "
                           "claim"));
        }
        if (options_.claim_after <= absl::ZeroDuration()) {
          return absl::FailedPreconditionError("this lobby takes no claims (--claim_after_s=0)");
        }
        const int mover = live.ToMove();
        if (mover == seat) {
          return absl::FailedPreconditionError(
              "it is your move: a claim is for when the side to move has gone");
        }
        const SeatRecord& them = live.rec.seats[mover];
        const std::string name =
            them.display_name.empty() ? SideName(live.info, mover) : them.display_name;
        if (them.kind == SeatKind::kBot) {
          return absl::FailedPreconditionError(
              absl::StrCat(name, " is a bot: it does not leave (the lobby gives up on it itself)"));
        }
        // A side that never moved has not started the game: such a match is aborted, not won.
        if (live.rec.ply < static_cast<int>(live.rec.seats.size())) {
          return absl::FailedPreconditionError(absl::StrCat(
              name, " has not made a first move: there is no game to claim yet (a match whose ",
              "first move does not come in time is aborted, with no result)"));
        }
        const std::string left = absl::StrCat(SideName(live.info, mover), " left the game; ");
        const auto claimed = [&](const std::string& why) {
          return draw ? MatchResult{.winner = -1,
                                    .reason = EndReason::kAbandoned,
                                    .text = absl::StrCat(why, "draw claimed by ",
                                                         SideName(live.info, seat))}
                      : MatchResult{
                            .winner = seat,
                            .reason = EndReason::kAbandoned,
                            .text = absl::StrCat(why, SideName(live.info, seat), " wins by claim")};
        };
        // Present or not, a side may not sit on one move for ever.
        const int64_t max_turn = absl::ToInt64Milliseconds(options_.max_turn);
        if (TurnOverlong(live, now)) {
          return CommitFinish(live,
                              claimed(absl::StrCat(SideName(live.info, mover), " took over ",
                                                   SpanText(max_turn), " on one move; ")),
                              {});
        }
        // Every instance's view, and this one's calls not written yet. Only an open stream
        // counts as connected here: a call is when the side was last seen, and the bound runs
        // from it (a refusal right after one call said "still connected" and named the move's
        // bound, half an hour, instead of the two minutes to come).
        SeatPresence p;
        absl::StatusOr<std::vector<SeatPresence>> found =
            presence_.Load({live.id}, Presence::kStreamsOnly);
        if (found.ok()) {
          for (const SeatPresence& f : *found) {
            if (f.seat == mover) p = f;
          }
        } else if (!absl::IsUnimplemented(found.status())) {
          return found.status();
        }
        if (p.connected) {
          const std::string until =
              max_turn > 0
                  ? absl::StrCat(", or that has spent ", SpanText(max_turn), " on one move (in ",
                                 SpanText(max_turn - (now - live.rec.turn_started_ms) + 999), ")")
                  : "";
          return absl::FailedPreconditionError(absl::StrCat(
              name, " is still connected to the match: a claim is for a side that has gone",
              until));
        }
        const int64_t gone = now - std::max(p.last_seen_ms, live.rec.turn_started_ms);
        // A side seen within the presence grace is present, whatever the claim bound.
        const int64_t bound = std::max(absl::ToInt64Milliseconds(options_.claim_after),
                                       now - presence_.SeenSinceMs(now));
        if (gone < bound) {
          return absl::FailedPreconditionError(
              absl::StrCat(name, " has been gone ", SpanText(gone), "; you can claim after ",
                           SpanText(bound), " (in ", SpanText(bound - gone + 999), ")"));
        }
        return CommitFinish(live, claimed(left), {});
      });
}

}  // namespace ply::lobby
