#include "lobby-server/events/fanout.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/match/clock.h"

namespace ply::lobby {
namespace {

// The events of the moves after `from_ply` in `moves`, replayed on `game` (at `from_ply`, with
// `clocks` the seats' clocks then; both advance). Empty when a stored move does not replay.
std::vector<v1::MatchEvent> MovesAfter(int from_ply, const std::vector<MoveRecord>& moves,
                                       AnyGame& game, std::vector<int64_t>& clocks, int64_t now_ms,
                                       bool hide_thinking) {
  std::vector<v1::MatchEvent> events;
  for (const MoveRecord& mv : moves) {
    if (mv.ply <= from_ply) continue;
    if (!game.Play(mv.move).ok()) return {};
    if (mv.seat >= 0 && mv.seat < static_cast<int>(clocks.size())) clocks[mv.seat] = mv.clock_ms;
    events.push_back(MoveEvent(mv, clocks, game, now_ms, hide_thinking));
  }
  return events;
}

}  // namespace

v1::MatchEvent Event(int64_t now_ms) {
  v1::MatchEvent e;
  e.set_time_ms(now_ms);
  return e;
}

v1::MatchEvent MoveEvent(const MoveRecord& mv, const std::vector<int64_t>& clocks,
                         const AnyGame& after, int64_t now_ms, bool hide_thinking) {
  v1::MatchEvent e = Event(now_ms);
  v1::MoveApplied* applied = e.mutable_move_applied();
  *applied->mutable_move() = MoveToProto(mv, hide_thinking);
  for (int64_t c : clocks) applied->add_clocks_ms(c);
  applied->set_to_move(after.Status().over ? -1 : after.SideToMove());
  applied->set_board(after.Render());
  return e;
}

v1::MatchEvent GameOverEvent(const LiveMatch& live, int64_t now_ms) {
  v1::MatchEvent e = Event(now_ms);
  v1::GameOver* over = e.mutable_game_over();
  *over->mutable_result() = ResultToProto(live.rec);
  // A finished match's stored clocks are final: the finishing move or the end wrote them.
  if (live.rec.time_initial_ms) {
    for (const SeatRecord& s : live.rec.seats) over->add_clocks_ms(s.clock_ms);
  }
  // The final screen shows where each rating went (AfterChange has read them).
  if (std::any_of(live.rec.seats.begin(), live.rec.seats.end(),
                  [](const SeatRecord& s) { return s.rating_after != 0; })) {
    for (const SeatRecord& s : live.rec.seats) over->add_ratings_after(s.rating_after);
  }
  return e;
}

v1::MatchEvent RematchEvent(const LiveMatch& live, int64_t now_ms) {
  v1::MatchEvent e = Event(now_ms);
  e.mutable_rematch()->set_offer(live.rec.rematch_offer);
  e.mutable_rematch()->set_rematch_id(live.rec.rematch_id);
  return e;
}

v1::MatchEvent ClockUpdateEvent(const LiveMatch& live, int64_t now_ms) {
  v1::MatchEvent e = Event(now_ms);
  v1::ClockUpdate* update = e.mutable_clock_update();
  for (int64_t c : ClocksNow(live.rec, live.ToMove(), now_ms)) update->add_clocks_ms(c);
  update->set_to_move(live.game->SideToMove());
  return e;
}

void Broadcast(LiveMatch& live, const v1::MatchEvent& event) {
  std::erase_if(live.watchers,
                [&](const std::shared_ptr<EventSink>& w) { return !w->Push(event); });
}

void AddWatcher(LiveMatch& live, std::shared_ptr<EventSink> sink) {
  std::erase_if(live.watchers, [](const std::shared_ptr<EventSink>& w) { return w->Closed(); });
  live.watchers.push_back(std::move(sink));
}

void CloseWatchers(LiveMatch& live, const absl::Status& status) {
  for (auto& w : live.watchers) w->Close(status);
  live.watchers.clear();
}

void BroadcastLastMove(LiveMatch& live, int64_t now_ms) {
  if (live.watchers.empty() || live.rec.moves.empty()) return;
  std::vector<int64_t> clocks;
  for (const SeatRecord& s : live.rec.seats) clocks.push_back(s.clock_ms);
  Broadcast(live,
            MoveEvent(live.rec.moves.back(), clocks, *live.game, now_ms, ThinkingHidden(live.rec)));
}

void CatchUp(LiveMatch& live, PastCopy before, int64_t now_ms) {
  if (!before.loaded || live.watchers.empty()) return;
  std::vector<v1::MatchEvent> missed;
  if (live.rec.ply > before.ply && before.game != nullptr) {
    missed = MovesAfter(before.ply, live.rec.moves, *before.game, before.clocks, now_ms,
                        ThinkingHidden(live.rec));
  }
  for (const v1::MatchEvent& e : missed) Broadcast(live, e);
  MatchVersion was = before.version;
  const MatchVersion now = VersionOf(live.rec);
  const bool rematch_changed =
      was.rematch_offer != now.rematch_offer || was.rematch_id != now.rematch_id;
  was.rematch_offer = now.rematch_offer;
  was.rematch_id = now.rematch_id;
  if (!(was == now) && missed.empty()) {
    v1::MatchEvent e = Event(now_ms);
    *e.mutable_resync() = ToProto(live, now_ms);
    Broadcast(live, e);
  }
  if (rematch_changed) Broadcast(live, RematchEvent(live, now_ms));
}

absl::StatusOr<bool> Greet(const LiveMatch& live, std::optional<int> after_ply, EventSink& sink,
                           int64_t now_ms) {
  if (!after_ply) {
    v1::MatchEvent e = Event(now_ms);
    *e.mutable_snapshot() = ToProto(live, now_ms);
    sink.Push(std::move(e));
  } else {
    if (*after_ply < 0 || *after_ply > live.rec.ply) {
      return absl::OutOfRangeError(absl::StrCat("match ", live.id, " has ", live.rec.ply,
                                                " moves; after_ply ", *after_ply,
                                                " is not one of them"));
    }
    // Replays the moves to rebuild each missed event as it was first sent.
    absl::StatusOr<std::unique_ptr<AnyGame>> game = CreateGame(live.rec.game, live.rec.options);
    if (!game.ok()) return game.status();
    std::vector<int64_t> clocks(live.rec.seats.size(), live.rec.time_initial_ms.value_or(0));
    for (v1::MatchEvent& e :
         MovesAfter(0, live.rec.moves, **game, clocks, now_ms, ThinkingHidden(live.rec))) {
      if (e.move_applied().move().ply() > *after_ply) sink.Push(std::move(e));
    }
    v1::MatchEvent e = Event(now_ms);
    *e.mutable_resync() = ToProto(live, now_ms);
    sink.Push(std::move(e));
  }
  if (live.rec.status == MatchStatus::kFinished) {
    sink.Push(GameOverEvent(live, now_ms));
    if (sink.FollowsRematch() && live.rec.result.reason != EndReason::kCancelled) {
      if (live.rec.rematch_offer >= 0 || live.rec.rematch_id != 0) {
        sink.Push(RematchEvent(live, now_ms));
      }
      if (live.rec.rematch_id == 0) return true;
    }
    sink.Close(absl::OkStatus());
    return false;
  }
  return true;
}

}  // namespace ply::lobby
