#include "lobby-server/bots/driver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/analysis/win_chance.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/events/fanout.h"

namespace ply::lobby {

BotDriver::BotDriver(Host* host, MatchStore* store, BotTargets* bots, Executor* executor,
                     LobbyMetrics* metrics, BotDriverOptions options, NowMsFn now_ms,
                     const std::atomic<bool>* stopping)
    : host_(host),
      store_(store),
      bots_(bots),
      executor_(executor),
      metrics_(metrics),
      options_(options),
      now_ms_(std::move(now_ms)),
      stopping_(stopping) {}

void BotDriver::Request(LiveMatch& live) {
  if (bots_ == nullptr || *stopping_ || live.rec.status != MatchStatus::kActive) return;
  const int mover = live.game->SideToMove();
  const SeatRecord& seat = live.rec.seats[mover];
  if (seat.kind != SeatKind::kBot || live.bot_ply == live.rec.ply) return;
  const Difficulty* level = FindLevel(live.info->levels, seat.difficulty);
  if (level == nullptr) return;
  const bool people = std::any_of(live.rec.seats.begin(), live.rec.seats.end(),
                                  [](const SeatRecord& s) { return s.kind != SeatKind::kBot; });
  // A person's client, and its network, have so many moves asked at once; this one waits for a
  // place otherwise.
  std::vector<PlaceKey> places = people ? PlaceKeys(live) : std::vector<PlaceKey>();
  if (!places.empty() && !TakePlace(places, live)) {
    if (live.bot_wait_ply != live.rec.ply) {
      live.bot_wait_ply = live.rec.ply;
      live.bot_wait_since_ms = now_ms_();
    }
    return;
  }
  live.bot_ply = live.rec.ply;
  const int64_t asked_ms = now_ms_();
  // The time this move waited for its client's place is the lobby's doing, not the bot's: its
  // clock gets it back (the turn starts that much later), so that a client's own load cannot
  // run its bot out of time.
  if (live.bot_wait_ply == live.rec.ply && live.rec.time_initial_ms) {
    live.rec.turn_started_ms +=
        std::max<int64_t>(0, asked_ms - std::max(live.bot_wait_since_ms, live.rec.turn_started_ms));
  }
  live.bot_wait_ply = -1;
  int64_t budget = BotBudgetMs(live.rec, mover, level->time_ms, asked_ms);
  if (!people && options_.bot_vs_bot_budget_ms > 0) {
    budget = std::min(budget, options_.bot_vs_bot_budget_ms);
  }
  v1::ChooseMoveRequest request = PositionRequest(live, seat);
  request.set_budget_ms(budget);
  // Nobody waits on a bot-vs-bot move: ply-bot serves people's bots first.
  if (!people) request.set_priority(v1::BOT_PRIORITY_BACKGROUND);
  // Different games between the same levels, yet the same answer if a move is asked again.
  request.set_seed(Mix64(static_cast<uint64_t>(live.id) * 1000003u + live.rec.ply) | 1);
  const int64_t id = live.id;
  const int ply = live.rec.ply;
  // Ownership makes a second instance asking for this ply impossible; the database counts it.
  // On the executor: this may be a database writer's thread (a person's move just landed), and
  // the count is a check, not a step of the move.
  executor_->PostAt(absl::Now(), [store = store_, metrics = metrics_, id, ply] {
    if (absl::StatusOr<bool> duplicate = store->RecordBotRequest(id, ply);
        duplicate.ok() && *duplicate) {
      metrics->duplicate_bot_requests.fetch_add(1, std::memory_order_relaxed);
      std::fprintf(stderr, "ply-lobby: match %lld ply %d: another live instance asked a bot too\n",
                   static_cast<long long>(id), ply);
    }
  });
  metrics_->bot_calls.fetch_add(1, std::memory_order_relaxed);
  // The client stays alive until its call is done, even if the instance list changes meanwhile.
  std::shared_ptr<BotClient> bot = bots_->Current();
  live.bot_call = bot->ChooseMoveAsync(
      request, absl::Milliseconds(budget + options_.deadline_margin_ms),
      [this, id, ply, asked_ms, bot,
       places = std::move(places)](absl::StatusOr<v1::ChooseMoveResponse> reply) {
        const int64_t think = now_ms_() - asked_ms;
        if (!places.empty()) ReleasePlace(places);
        // gRPC's thread must not block: the reply is handled on the executor.
        executor_->PostAt(absl::Now(), [this, id, ply, think, reply = std::move(reply)] {
          OnReply(id, ply, std::move(reply), think);
        });
      });
}

void BotDriver::OnReply(int64_t id, int ply, absl::StatusOr<v1::ChooseMoveResponse> reply,
                        int64_t think_ms) {
  if (*stopping_) return;
  absl::Status s = host_->WithMatch(id, [&](LiveMatch& live) -> absl::Status {
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
    if (!problem.ok()) return Failed(live, seat, problem);
    // Pacing: the move appears no earlier than pacing after the position arose; under a clock,
    // no later than a tenth of the time the bot had then (with its search's twentieth, well
    // before its flag). The flag falls by the wall clock: a pacing longer than what was left
    // lost every game on time once the clock was short (a person with a 540 ms clock beat
    // bot:hard in 3 s, rated, as often as they liked).
    int64_t pacing = live.rec.bot_pacing_ms;
    if (live.rec.time_initial_ms) {
      pacing = std::min(pacing, live.rec.seats[seat].clock_ms / 10);
    }
    const int64_t due = live.rec.turn_started_ms + pacing;
    if (const int64_t now = now_ms_(); now < due) {
      executor_->PostAt(absl::Now() + absl::Milliseconds(due - now),
                        [this, id, ply, think_ms, reply] { OnReply(id, ply, reply, think_ms); });
      return absl::OkStatus();
    }
    live.bot_call = nullptr;
    // A draw offer still unanswered when the move is ready (its own search is slower, or was
    // never asked: the offer stood across a restart) is answered from this search, of the same
    // position at the bot's level: a move never passes over an offer in silence.
    if (live.rec.draw_offer >= 0 && live.rec.draw_offer != seat) {
      if (absl::Status answered = SettleDraw(live, seat, *reply); !answered.ok()) {
        live.bot_ply = -1;
        return answered;
      }
      if (live.rec.status != MatchStatus::kActive) return absl::OkStatus();  // drawn
    }
    absl::StatusOr<MoveRecord> committed =
        host_->CommitMove(live, seat, std::move(after), think_ms, BotThinkingJson(*reply));
    if (!committed.ok()) {
      // The database is away: ask again once it may be back (the match reloads first).
      live.bot_ply = -1;
      host_->RetryLater(id, absl::Milliseconds(500));
    }
    return absl::OkStatus();
  });
  if (!s.ok() && (absl::IsUnavailable(s) || absl::IsInternal(s))) {
    host_->RetryLater(id, absl::Milliseconds(500));
  }
}

v1::ChooseMoveRequest BotDriver::PositionRequest(const LiveMatch& live, const SeatRecord& seat) {
  v1::ChooseMoveRequest request;
  request.mutable_position()->mutable_spec()->set_name(live.rec.game);
  for (const auto& [k, v] : live.rec.options) {
    (*request.mutable_position()->mutable_spec()->mutable_options())[k] = v;
  }
  for (const MoveRecord& m : live.rec.moves) request.mutable_position()->add_moves(m.move);
  request.set_difficulty(seat.difficulty);
  return request;
}

DrawAnswer BotDrawAnswer(std::string_view game, const v1::ChooseMoveResponse& reply,
                         bool bot_to_move, const std::string& who) {
  const DrawAnswer declined{.accept = false, .text = absl::StrCat(who, " declines the draw")};
  // A level that played at random this time searched nothing: it plays on.
  if (reply.random_move()) return declined;
  const Score score = bot_to_move ? reply.score() : -reply.score();
  if (reply.exact() || IsMateScore(score)) {
    const int outcome = ExactOutcome(score);
    if (outcome > 0) return declined;
    return {
        .accept = true,
        .text = absl::StrCat(who, outcome == 0 ? " accepts the draw: the position is a proven draw"
                                               : " accepts the draw")};
  }
  const double chance = WinChance(WinChanceCurveFor(game), score, reply.exact());
  if (chance > kBotDrawAcceptChance) return declined;
  return {.accept = true,
          .text = absl::StrCat(who, " accepts the draw: it rates its chances at ",
                               std::lround(chance * 100), "%")};
}

void BotDriver::AnswerDraw(LiveMatch& live, int seat) {
  if (bots_ == nullptr || *stopping_ || live.rec.status != MatchStatus::kActive) return;
  if (seat < 0 || seat >= static_cast<int>(live.rec.seats.size())) return;
  const SeatRecord& bot = live.rec.seats[seat];
  if (bot.kind != SeatKind::kBot) return;
  const Difficulty* level = FindLevel(live.info->levels, bot.difficulty);
  if (level == nullptr) return;
  v1::ChooseMoveRequest request = PositionRequest(live, bot);
  // A person waits for the answer: the level's own search, at most a second of it.
  const int64_t budget = std::clamp<int64_t>(level->time_ms, 50, 1000);
  request.set_budget_ms(budget);
  request.set_seed(Mix64(static_cast<uint64_t>(live.id) * 1000033u + live.rec.ply) | 1);
  const int64_t id = live.id;
  const int ply = live.rec.ply;
  metrics_->bot_calls.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<BotClient> client = bots_->Current();
  // The call's handle is not kept: an answer for a position that moved on is dropped.
  (void)client->ChooseMoveAsync(
      request, absl::Milliseconds(budget + options_.deadline_margin_ms),
      [this, id, ply, seat, client](absl::StatusOr<v1::ChooseMoveResponse> reply) {
        executor_->PostAt(absl::Now(), [this, id, ply, seat, reply = std::move(reply)] {
          OnDrawReply(id, ply, seat, std::move(reply));
        });
      });
}

void BotDriver::OnDrawReply(int64_t id, int ply, int seat,
                            absl::StatusOr<v1::ChooseMoveResponse> reply) {
  if (*stopping_) return;
  (void)host_->WithMatch(id, [&](LiveMatch& live) -> absl::Status {
    // Only the offer this search judged: the same position, still standing, still ours to answer.
    if (live.rec.status != MatchStatus::kActive || live.rec.ply != ply || !live.owned ||
        live.rec.draw_offer < 0 || live.rec.draw_offer == seat) {
      return absl::OkStatus();
    }
    if (!reply.ok()) {
      return host_->DeclineDraw(
          live, seat,
          absl::StrCat(BotSeatName(live, seat), " could not answer the draw offer (",
                       reply.status().message(), "); it plays on"));
    }
    return SettleDraw(live, seat, *reply);
  });
}

std::string BotDriver::BotSeatName(const LiveMatch& live, int seat) {
  return absl::StrCat(SideName(live.info, seat), " (bot, ", live.rec.seats[seat].difficulty, ")");
}

absl::Status BotDriver::SettleDraw(LiveMatch& live, int seat, const v1::ChooseMoveResponse& reply) {
  const DrawAnswer answer =
      BotDrawAnswer(live.rec.game, reply, live.game->SideToMove() == seat, BotSeatName(live, seat));
  if (!answer.accept) {
    live.draw_declined_ply = live.rec.ply;
    return host_->DeclineDraw(live, seat, answer.text);
  }
  return host_->CommitFinish(
      live, {.winner = -1, .reason = EndReason::kAgreement, .text = "draw by agreement"},
      ClocksNow(live.rec, live.ToMove(), now_ms_()));
}

absl::Status BotDriver::Failed(LiveMatch& live, int seat, const absl::Status& problem) {
  metrics_->bot_failures.fetch_add(1, std::memory_order_relaxed);
  live.bot_call = nullptr;
  const int64_t now = now_ms_();
  if (live.bot_attempts++ == 0) live.bot_first_failure_ms = now;
  v1::MatchEvent e = Event(now);
  v1::BotTrouble* trouble = e.mutable_bot_trouble();
  trouble->set_seat(seat);
  trouble->set_attempts(live.bot_attempts);
  trouble->set_message(absl::StrCat(
      "no move from ply-bot: ", absl::StatusCodeToString(problem.code()), ": ", problem.message()));
  Broadcast(live, e);
  if (absl::Milliseconds(now - live.bot_first_failure_ms) > options_.give_up_after) {
    return host_->CommitFinish(live,
                               {.winner = 1 - seat,
                                .reason = EndReason::kBotFailure,
                                .text = absl::StrCat(SideName(live.info, seat),
                                                     "'s bot could not move: ", problem.message())},
                               ClocksNow(live.rec, live.ToMove(), now));
  }
  const absl::Duration backoff =
      std::min(absl::Milliseconds(100) * (1 << std::min(live.bot_attempts, 6)), absl::Seconds(5));
  // bot_ply stays reserved until the retry, so that no other path asks meanwhile.
  const int64_t id = live.id;
  const int ply = live.rec.ply;
  executor_->PostAt(absl::Now() + backoff, [this, id, ply] {
    (void)host_->WithMatch(id, [&](LiveMatch& l) {
      if (l.rec.ply == ply && l.bot_ply == ply) {
        l.bot_ply = -1;
        Request(l);
      }
      return absl::OkStatus();
    });
  });
  return absl::OkStatus();
}

std::vector<BotDriver::PlaceKey> BotDriver::PlaceKeys(const LiveMatch& live) const {
  std::vector<PlaceKey> keys;
  if (options_.client_bot_calls > 0 && !live.rec.creator.empty()) {
    keys.push_back({.key = live.rec.creator, .limit = options_.client_bot_calls});
  }
  // An IPv6 address's /48, else the address (an IPv4 address is its own network).
  const std::string& network =
      live.rec.creator_network.empty() ? live.rec.creator_address : live.rec.creator_network;
  if (options_.network_bot_calls > 0 && !network.empty()) {
    keys.push_back({.key = absl::StrCat("network:", network), .limit = options_.network_bot_calls});
  }
  return keys;
}

bool BotDriver::TakePlace(const std::vector<PlaceKey>& keys, const LiveMatch& live) {
  std::lock_guard<std::mutex> lock(places_mu_);
  // A match that waited its turn goes ahead of the others only through AskNext: one still in a
  // line takes no place.
  for (const PlaceKey& k : keys) {
    auto it = places_.find(k.key);
    if (it == places_.end()) continue;
    const std::deque<int64_t>& line =
        live.rec.time_initial_ms ? it->second.timed : it->second.untimed;
    if (std::find(line.begin(), line.end(), live.id) != line.end()) return false;
  }
  for (const PlaceKey& k : keys) {
    ClientCalls& c = places_[k.key];
    if (c.in_flight >= k.limit) {
      (live.rec.time_initial_ms ? c.timed : c.untimed).push_back(live.id);
      return false;
    }
  }
  for (const PlaceKey& k : keys) ++places_[k.key].in_flight;
  return true;
}

void BotDriver::ReleasePlace(const std::vector<PlaceKey>& keys) {
  {
    std::lock_guard<std::mutex> lock(places_mu_);
    for (const PlaceKey& k : keys) {
      auto it = places_.find(k.key);
      if (it != places_.end()) --it->second.in_flight;
    }
  }
  for (const PlaceKey& k : keys) AskNext(k);
}

void BotDriver::AskNext(const PlaceKey& key) {
  int64_t next = 0;
  {
    std::lock_guard<std::mutex> lock(places_mu_);
    auto it = places_.find(key.key);
    if (it == places_.end()) return;
    ClientCalls& c = it->second;
    if (c.in_flight >= key.limit) return;
    std::deque<int64_t>& line = !c.timed.empty() ? c.timed : c.untimed;
    if (line.empty()) {
      if (c.in_flight == 0) places_.erase(it);
      return;
    }
    next = line.front();
    line.pop_front();
  }
  // Off the gRPC thread. A match that no longer wants a move (it moved on, ended, went to
  // another instance) passes its place to the next one, as does one that Request queued at its
  // other key for want of a place there.
  executor_->PostAt(absl::Now(), [this, key, next] {
    bool asked = false;
    (void)host_->WithMatch(next, [&](LiveMatch& live) {
      if (live.owned) Request(live);
      asked = live.bot_ply == live.rec.ply;
      return absl::OkStatus();
    });
    if (!asked) AskNext(key);
  });
}

}  // namespace ply::lobby
