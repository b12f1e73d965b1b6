// Lobby's play: moves (synchronous and from the bots), their commit to the store and what
// follows it (broadcasts, the next bot turn, the game's end), the clocks and their flags,
// resignation and draw offers. Matches' creation, joining, listing and watching are in
// lobby.cc.
#include <utility>

#include "absl/strings/str_cat.h"
#include "lobby-server/convert.h"
#include "lobby-server/events/fanout.h"
#include "lobby-server/lobby.h"
#include "lobby-server/match/rules.h"

namespace ply::lobby {

struct Lobby::PendingMove {
  MoveCommit commit;
  // The game with the move played.
  std::unique_ptr<AnyGame> after;
};

bool Lobby::FlagIfExpired(LiveMatch& live, int64_t now_ms) {
  const int mover = live.ToMove();
  // A bot move the lobby holds back (its client's places are taken: bots/driver.h) does not run
  // the bot's clock: the wait is given back once the move is asked.
  if (live.bot_wait_ply == live.rec.ply) return false;
  if (!HasFlagged(live.rec, mover, now_ms)) return false;
  const int winner = 1 - mover;
  // A bot budgets its moves so as never to run out of time: when it does, the bot service did
  // not answer (down, overloaded, unreachable), and the result says so and is not rated (a
  // person whose opponent's ply-bot was killed mid-game won on time, rated: 1500 -> 1930).
  const bool bot = live.rec.seats[mover].kind == SeatKind::kBot;
  (void)CommitFinish(live,
                     {.winner = winner,
                      .reason = bot ? EndReason::kBotFailure : EndReason::kTimeout,
                      .text = absl::StrCat(SideName(live.info, mover), " ran out of time",
                                           bot ? " (the bot service did not answer in time)" : "",
                                           "; ", SideName(live.info, winner), " wins")},
                     ClocksNow(live.rec, mover, now_ms));
  return true;
}

absl::StatusOr<v1::MakeMoveResponse> Lobby::MakeMove(const v1::MakeMoveRequest& req,
                                                     const std::string& token) {
  if (absl::Status t = CheckMoveText(req.move()); !t.ok()) return t;
  v1::MakeMoveResponse response;
  absl::Status s = WithMatch(req.match_id(), [&](LiveMatch& live) -> absl::Status {
    const int64_t now = NowMs();
    // The same move sent again, because the answer to the first was lost (the connection
    // dropped, the database failed over while it was committed): it was played, and that is
    // the answer, not "your view is out of date" (nor "the match is over" for a last move).
    if (const std::optional<int> mover = SeatOfToken(live.rec, token)) {
      if (const MoveRecord* played =
              AlreadyPlayed(live.rec, *mover, req.expected_ply(), req.move());
          played != nullptr) {
        presence_.Seen(live.id, *mover);
        *response.mutable_move() = MoveToProto(*played);
        *response.mutable_match() = ToProto(live, now);
        return absl::OkStatus();
      }
    }
    absl::StatusOr<int> seat = SeatThatMayAct(live, token, now);
    if (!seat.ok()) return seat.status();
    presence_.Seen(live.id, *seat);
    absl::StatusOr<std::unique_ptr<AnyGame>> after = CheckMove(
        live,
        {.seat = *seat, .expected_ply = req.expected_ply(), .move = req.move(), .now_ms = now});
    if (!after.ok()) return after.status();
    absl::StatusOr<MoveRecord> committed =
        CommitMove(live, *seat, *std::move(after), now - live.rec.turn_started_ms, "");
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
  if (stopping_ || req.match_id() <= 0) return false;
  std::shared_ptr<LiveMatch> live = cache_.Find(req.match_id());
  if (live == nullptr) return false;
  std::unique_lock<std::mutex> lock(live->mu, std::try_to_lock);
  if (!lock.owns_lock() || !live->Settled()) return false;
  // Only the plain case, by the same rules as MakeMove: anything else has an error to explain
  // (with a database lookup for a stranger's token) or a flag to record, which MakeMove does.
  const std::optional<int> seat = SeatOfToken(live->rec, token);
  if (!seat) return false;
  presence_.Seen(live->id, *seat);
  const int64_t now = NowMs();
  absl::StatusOr<std::unique_ptr<AnyGame>> after = CheckMove(
      *live,
      {.seat = *seat, .expected_ply = req.expected_ply(), .move = req.move(), .now_ms = now});
  if (!after.ok()) return false;
  auto pending = std::make_shared<PendingMove>();
  pending->after = *std::move(after);
  pending->commit =
      PrepareMove(*live, *seat, *pending->after, now - live->rec.turn_started_ms, "", now);
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
  // this copy proves it behind, even before the announcement of that ply arrives: the cache
  // reloads it on ABORTED.
  bool checked = false;
  (void)WithMatch(req.match_id(), [&](LiveMatch& live) {
    const bool behind = req.expected_ply() > live.rec.ply && !std::exchange(checked, true);
    return behind ? absl::AbortedError("behind") : absl::OkStatus();
  });
  if (TryMakeMove(req, token, done)) return;
  done(MakeMove(req, token));
}

absl::StatusOr<v1::MakeMoveResponse> Lobby::Landed(LiveMatch& live, PendingMove& move,
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
      CommitFailed(live, stored);
      answer = stored;
    }
  }
  live.settled.notify_all();
  return answer;
}

absl::StatusOr<MoveRecord> Lobby::CommitMove(LiveMatch& live, int seat,
                                             std::unique_ptr<AnyGame> after, int64_t think_ms,
                                             std::string bot_json) {
  const MoveCommit commit = PrepareMove(live, seat, *after, think_ms, std::move(bot_json), NowMs());
  if (absl::Status s = store_->AppendMove(live.id, commit); !s.ok()) {
    CommitFailed(live, s);
    return s;
  }
  ApplyMove(live, commit, std::move(after));
  return commit.move;
}

void Lobby::CommitFailed(LiveMatch& live, const absl::Status& failure) {
  live.stale = true;
  ReloadSoon(live.id, failure);
}

void Lobby::ApplyMove(LiveMatch& live, const MoveCommit& commit, std::unique_ptr<AnyGame> after) {
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
  live.bot_first_failure_ms = 0;
  if (commit.result) {
    live.rec.status = MatchStatus::kFinished;
    live.rec.result = *commit.result;
  }
  BroadcastLastMove(live, NowMs());
  AfterChange(live);
}

absl::Status Lobby::CommitFinish(LiveMatch& live, MatchResult result, std::vector<int64_t> clocks) {
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

void Lobby::AfterChange(LiveMatch& live) {
  if (live.rec.status == MatchStatus::kFinished) {
    // The transaction that ended a rated match moved the ratings. The game-over event and the
    // answer to the call that ended it (a resignation, a draw agreed) show them, so they are
    // read now, watched or not (the event went out with none, and an answer said rating_after
    // 0 beside a rated result); if the read fails, or the result moved none, the next read
    // loads the match again.
    if (live.rec.rated && live.rec.seats.size() == 2 && live.rec.seats[0].rating_after == 0) {
      if (!live.end_told) {
        // The seats alone: no move after the last one this copy has.
        absl::StatusOr<MatchRecord> stored = store_->LoadMatchAfter(live.id, live.rec.ply);
        if (stored.ok() && stored->seats.size() == live.rec.seats.size()) {
          for (size_t i = 0; i < stored->seats.size(); ++i) {
            live.rec.seats[i].rating_after = stored->seats[i].rating_after;
          }
          // Or why none moved, where the store decided it (the pair's games of the day).
          live.rec.result.rating_note = stored->result.rating_note;
        }
      }
      if (live.rec.seats[0].rating_after == 0) live.stale = true;
    }
    if (!live.end_told && !live.watchers.empty()) {
      Broadcast(live, GameOverEvent(live, NowMs()));
      // Those who follow the rematch stay until it is made (a cancelled match has none).
      const bool rematch = live.rec.result.reason != EndReason::kCancelled;
      std::erase_if(live.watchers, [&](const std::shared_ptr<EventSink>& w) {
        if (rematch && w->FollowsRematch()) return false;
        w->Close(absl::OkStatus());
        return true;
      });
    }
    live.end_told = true;
    if (live.rec.rematch_id != 0) CloseWatchers(live, absl::OkStatus());
    cache_.Disown(live);
    return;
  }
  if (live.rec.status != MatchStatus::kActive || stopping_) return;
  StartClockTicks(live);
  // The clock's flag and the bot are the owner's work.
  if (!live.owned) return;
  if (live.rec.time_initial_ms && live.flag_ply != live.rec.ply) {
    live.flag_ply = live.rec.ply;
    const int64_t id = live.id;
    const int ply = live.rec.ply;
    // Due by the lobby's time source, waited for on the executor's wall clock.
    const int64_t wait_ms = FlagDueMs(live.rec, live.ToMove()) - NowMs();
    executor_->PostAt(absl::Now() + absl::Milliseconds(wait_ms),
                      [this, id, ply] { CheckFlag(id, ply); });
  }
  bots_.Request(live);
}

void Lobby::CheckFlag(int64_t id, int ply) {
  if (stopping_) return;
  absl::Status s = WithMatch(id, [&](LiveMatch& live) {
    const int64_t now = NowMs();
    if (live.rec.ply != ply || FlagIfExpired(live, now)) return absl::OkStatus();
    // Not yet: the flag's time moved on (a bot's wait for its client's place, given back to its
    // clock: bots/driver.h). Looked at again then.
    if (live.rec.status == MatchStatus::kActive && live.owned) {
      const int64_t wait_ms = live.bot_wait_ply == ply
                                  ? 100
                                  : std::max<int64_t>(1, FlagDueMs(live.rec, live.ToMove()) - now);
      executor_->PostAt(absl::Now() + absl::Milliseconds(wait_ms),
                        [this, id, ply] { CheckFlag(id, ply); });
    }
    return absl::OkStatus();
  });
  if (!s.ok() && absl::IsUnavailable(s)) RetryLater(id, absl::Seconds(1));
}

void Lobby::StartClockTicks(LiveMatch& live) {
  if (!live.rec.time_initial_ms || live.clock_ticking || live.watchers.empty() ||
      live.rec.status != MatchStatus::kActive || stopping_ ||
      options_.clock_event_interval <= absl::ZeroDuration()) {
    return;
  }
  std::shared_ptr<LiveMatch> copy = cache_.Find(live.id);
  if (copy.get() != &live) return;
  live.clock_ticking = true;
  executor_->PostAt(absl::Now() + options_.clock_event_interval,
                    [this, weak = std::weak_ptr<LiveMatch>(copy)] { ClockTick(weak); });
}

void Lobby::ClockTick(const std::weak_ptr<LiveMatch>& copy) {
  std::shared_ptr<LiveMatch> live = copy.lock();
  if (live == nullptr || stopping_) return;
  std::lock_guard<std::mutex> lock(live->mu);
  live->clock_ticking = false;
  // Never a load: a copy that left the cache has nobody to tell.
  if (live->dropped || live->rec.status != MatchStatus::kActive || live->watchers.empty()) {
    return;
  }
  Broadcast(*live, ClockUpdateEvent(*live, NowMs()));
  StartClockTicks(*live);
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
    absl::Status s = WithMatch(id, [&](LiveMatch& live) {
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

absl::StatusOr<v1::Match> Lobby::Resign(int64_t match_id, const std::string& token) {
  int walked = -1;
  absl::StatusOr<v1::Match> m =
      WithActingSeat(match_id, token, [&](LiveMatch& live, int seat, int64_t now) -> absl::Status {
        std::vector<int64_t> clocks = ClocksNow(live.rec, live.ToMove(), now);
        const int winner = 1 - seat;
        // Resigning a game between people on one's own first move (not rated: no side moved)
        // walks away from it as not coming does, and waits as a no-show before pairing again.
        const bool first_move =
            seat == live.rec.ply && live.rec.ply < static_cast<int>(live.rec.seats.size()) &&
            std::all_of(live.rec.seats.begin(), live.rec.seats.end(), [&](const SeatRecord& s) {
              return s.kind == SeatKind::kHuman &&
                     (&s == &live.rec.seats[seat] || s.player_id != live.rec.seats[seat].player_id);
            });
        absl::Status ended =
            CommitFinish(live,
                         {.winner = winner,
                          .reason = EndReason::kResignation,
                          .text = absl::StrCat(SideName(live.info, seat), " resigned; ",
                                               SideName(live.info, winner), " wins")},
                         std::move(clocks));
        if (ended.ok() && first_move && live.rec.status == MatchStatus::kFinished) walked = seat;
        return ended;
      });
  // Written outside the match's lock.
  if (m.ok() && walked >= 0) (void)store_->MarkNoShows(match_id, {walked}, NowMs());
  return m;
}

absl::StatusOr<v1::Match> Lobby::OfferDraw(int64_t match_id, const std::string& token) {
  return WithActingSeat(
      match_id, token, [&](LiveMatch& live, int seat, int64_t now) -> absl::Status {
        if (live.rec.draw_offer >= 0 && live.rec.draw_offer != seat) {
          std::vector<int64_t> clocks = ClocksNow(live.rec, live.ToMove(), now);
          return CommitFinish(
              live, {.winner = -1, .reason = EndReason::kAgreement, .text = "draw by agreement"},
              std::move(clocks));
        }
        if (live.rec.draw_offer != seat) {
          const int other = 1 - seat;
          if (live.draw_declined_ply == live.rec.ply && other >= 0 &&
              other < static_cast<int>(live.rec.seats.size()) &&
              live.rec.seats[other].kind == SeatKind::kBot) {
            return absl::FailedPreconditionError(
                absl::StrCat(SideName(live.info, other),
                             " (bot) declined a draw in this position: offer again after a move"));
          }
          if (absl::Status d = store_->SetDrawOffer(live.id, live.rec.ply, seat); !d.ok()) {
            live.stale = true;
            return d;
          }
          live.rec.draw_offer = seat;
          v1::MatchEvent e = Event(now);
          e.mutable_draw_offered()->set_seat(seat);
          Broadcast(live, std::move(e));
          // A bot answers at once, from its level's search of the position.
          bots_.AnswerDraw(live, 1 - seat);
        }
        return absl::OkStatus();
      });
}

absl::Status Lobby::DeclineDraw(LiveMatch& live, int seat, const std::string& text) {
  if (absl::Status d = store_->SetDrawOffer(live.id, live.rec.ply, -1); !d.ok()) {
    live.stale = true;
    return d;
  }
  live.rec.draw_offer = -1;
  v1::MatchEvent e = Event(NowMs());
  e.mutable_draw_declined()->set_seat(seat);
  e.mutable_draw_declined()->set_text(text);
  Broadcast(live, std::move(e));
  return absl::OkStatus();
}

}  // namespace ply::lobby
