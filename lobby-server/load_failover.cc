#include "lobby-server/load_failover.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/core/percentile.h"
#include "ply/v1/lobby.grpc.pb.h"

namespace ply {
namespace {

// Every instance's stub. A call goes to one instance and, when that one is down (UNAVAILABLE,
// or no answer in time), to the next: what a client with several addresses does.
class Lobbies {
 public:
  explicit Lobbies(const std::vector<std::string>& addresses) {
    for (const std::string& a : addresses) {
      grpc::ChannelArguments args;
      // A restarted instance is back within a second or two: try it again soon.
      args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
      args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
      stubs_.push_back(v1::LobbyService::NewStub(
          grpc::CreateCustomChannel(a, grpc::InsecureChannelCredentials(), args)));
    }
  }
  size_t size() const { return stubs_.size(); }
  v1::LobbyService::Stub* at(size_t i) { return stubs_[i % stubs_.size()].get(); }

  // Calls `call(stub, context)` on instance `first`, then the others, until one answers with
  // something other than "unavailable"; tries for at most `patience`. `*sent`, when given,
  // counts the attempts (more than one: the request was sent again after a lost answer).
  template <class Call>
  grpc::Status Any(size_t first, Call call, absl::Duration patience = absl::Seconds(30),
                   int* sent = nullptr) {
    const absl::Time give_up = absl::Now() + patience;
    grpc::Status s;
    for (size_t attempt = 0;; ++attempt) {
      if (sent != nullptr) ++*sent;
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(3)));
      s = call(at(first + attempt), context);
      const bool down = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                        s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
      if (!down || absl::Now() > give_up) return s;
      if ((attempt + 1) % size() == 0) absl::SleepFor(absl::Milliseconds(100));
    }
  }

 private:
  std::vector<std::unique_ptr<v1::LobbyService::Stub>> stubs_;
};

struct Tally {
  std::mutex mu;
  // Acknowledged moves: (match, ply) -> move.
  std::map<std::pair<int64_t, int>, std::string> acked;
  int64_t uncertain = 0;  // answers lost in a failure: the move may or may not be stored
  // Moves sent again after a lost answer and then refused: (match, ply) -> move.
  std::map<std::pair<int64_t, int>, std::string> refused_resends;
  int64_t human_matches = 0;
  double longest_human_pause_ms = 0;
  std::vector<int64_t> bot_match_ids;
  int64_t bot_failures = 0;
  double longest_bot_pause_ms = 0;
  std::vector<double> event_lag_ms;
  int64_t spectator_gaps = 0;
  int64_t spectator_duplicates = 0;
  int64_t spectator_reconnects = 0;
  int64_t events_seen = 0;
};

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

absl::Status Get(Lobbies& lobbies, size_t first, int64_t id, v1::Match* out) {
  v1::GetMatchRequest get;
  get.set_match_id(id);
  grpc::Status s = lobbies.Any(first, [&](v1::LobbyService::Stub* stub, grpc::ClientContext& c) {
    return stub->GetMatch(&c, get, out);
  });
  if (s.ok()) return absl::OkStatus();
  return absl::UnavailableError(s.error_message());
}

// One person playing both seats of human-vs-human Connect Four matches, one after another,
// each move through the next instance.
void Play(Lobbies& lobbies, size_t index, const std::atomic<bool>& stop, Tally& tally) {
  size_t turn = index;
  while (!stop) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("connect4");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.set_take_seat(0);
    create.set_display_name("player-a");
    v1::CreateMatchResponse created;
    if (!lobbies
             .Any(turn++,
                  [&](v1::LobbyService::Stub* stub, grpc::ClientContext& c) {
                    return stub->CreateMatch(&c, create, &created);
                  })
             .ok()) {
      continue;
    }
    v1::JoinMatchRequest join;
    join.set_match_id(created.match().id());
    join.set_seat(1);
    join.set_display_name("player-b");
    v1::JoinMatchResponse joined;
    if (!lobbies
             .Any(turn++,
                  [&](v1::LobbyService::Stub* stub, grpc::ClientContext& c) {
                    return stub->JoinMatch(&c, join, &joined);
                  })
             .ok()) {
      continue;
    }
    const int64_t id = created.match().id();
    const std::string tokens[2] = {created.seat_token(), joined.seat_token()};
    {
      std::lock_guard<std::mutex> lock(tally.mu);
      ++tally.human_matches;
    }
    v1::Match match = joined.match();
    auto last_move = std::chrono::steady_clock::now();
    // A move whose answer was lost is sent again, as a person's client would: the lobby
    // answers it as played if it was stored.
    bool resend = false;
    v1::MakeMoveRequest move;
    int mover = 0;
    while (!stop && match.status() == v1::MATCH_STATUS_ACTIVE) {
      bool resent = std::exchange(resend, false);
      if (!resent) {
        mover = match.to_move();
        move.set_match_id(id);
        move.set_expected_ply(match.moves_size());
        // Any legal move will do.
        move.set_move(match.legal_moves(static_cast<int>(turn % match.legal_moves_size())));
      }
      v1::MakeMoveResponse moved;
      int sent = 0;
      grpc::Status s = lobbies.Any(
          turn++,
          [&](v1::LobbyService::Stub* stub, grpc::ClientContext& c) {
            c.AddMetadata("authorization", absl::StrCat("Bearer ", tokens[mover]));
            return stub->MakeMove(&c, move, &moved);
          },
          absl::Seconds(30), &sent);
      if (sent > 1) {
        resent = true;
        std::lock_guard<std::mutex> lock(tally.mu);
        tally.uncertain += sent - 1;
      }
      if (s.ok()) {
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard<std::mutex> lock(tally.mu);
        tally.acked[{id, move.expected_ply() + 1}] = move.move();
        tally.longest_human_pause_ms =
            std::max(tally.longest_human_pause_ms,
                     std::chrono::duration<double, std::milli>(now - last_move).count());
        last_move = now;
        match = moved.match();
      } else {
        // The answer may have been lost with the instance or the database's primary: send the
        // same move again.
        if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
            s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
          std::lock_guard<std::mutex> lock(tally.mu);
          ++tally.uncertain;
          resend = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
        if (resent) {
          // Refused when sent again: false if the first sending was in fact stored.
          std::lock_guard<std::mutex> lock(tally.mu);
          tally.refused_resends[{id, move.expected_ply() + 1}] = move.move();
        }
        if (!Get(lobbies, turn++, id, &match).ok()) continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (match.status() == v1::MATCH_STATUS_ACTIVE) {
      // Time is up: resign rather than leave the match open.
      v1::ResignRequest resign;
      resign.set_match_id(id);
      v1::Match after;
      (void)lobbies.Any(turn, [&](v1::LobbyService::Stub* stub, grpc::ClientContext& c) {
        c.AddMetadata("authorization", absl::StrCat("Bearer ", tokens[match.to_move()]));
        return stub->Resign(&c, resign, &after);
      });
    }
  }
}

// The bot-vs-bot matches: `slots` of them, a new one in a slot when its match ends.
class BotMatches {
 public:
  BotMatches(Lobbies& lobbies, int slots) : lobbies_(lobbies), ids_(slots, 0) {}
  // The match now in `slot` (0 while there is none).
  int64_t Current(size_t slot) {
    std::lock_guard<std::mutex> lock(mu_);
    return ids_[slot];
  }
  void Run(const std::atomic<bool>& stop, Tally& tally) {
    size_t turn = 0;
    while (!stop) {
      for (size_t slot = 0; slot < ids_.size() && !stop; ++slot) {
        const int64_t id = Current(slot);
        if (id == 0) {
          v1::CreateMatchRequest create;
          create.mutable_spec()->set_name("connect4");
          for (int i = 0; i < 2; ++i) {
            v1::SeatSpec* seat = create.add_seats();
            seat->set_kind(v1::SEAT_KIND_BOT);
            seat->set_difficulty("easy");
          }
          create.set_bot_pacing_ms(200);
          v1::CreateMatchResponse created;
          if (lobbies_
                  .Any(turn++,
                       [&](v1::LobbyService::Stub* stub, grpc::ClientContext& c) {
                         return stub->CreateMatch(&c, create, &created);
                       })
                  .ok()) {
            std::lock_guard<std::mutex> lock(mu_);
            ids_[slot] = created.match().id();
            std::lock_guard<std::mutex> t(tally.mu);
            tally.bot_match_ids.push_back(created.match().id());
          }
          continue;
        }
        v1::Match m;
        if (!Get(lobbies_, turn++, id, &m).ok() || m.status() != v1::MATCH_STATUS_FINISHED) {
          continue;
        }
        Finished(m, tally);
        std::lock_guard<std::mutex> lock(mu_);
        ids_[slot] = 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  // Counts a finished match: its end, and the longest it stood still (from the commit times).
  static void Finished(const v1::Match& m, Tally& tally) {
    std::lock_guard<std::mutex> lock(tally.mu);
    if (m.result().reason() != v1::END_REASON_RULES) {
      ++tally.bot_failures;
      std::fprintf(stderr, "failover: bot match %lld ended: %s\n", static_cast<long long>(m.id()),
                   m.result().text().c_str());
    }
    int64_t previous = m.created_ms();
    for (const v1::MoveRecord& mv : m.moves()) {
      tally.longest_bot_pause_ms =
          std::max(tally.longest_bot_pause_ms, static_cast<double>(mv.time_ms() - previous));
      previous = mv.time_ms();
    }
  }

 private:
  Lobbies& lobbies_;
  std::mutex mu_;
  std::vector<int64_t> ids_;
};

// One spectator: watches the match in its slot through one instance, reconnects to the next
// from the last ply it saw when the stream breaks, and moves to the slot's next match when one
// ends. Checks that what it shows has no gap and no repeat.
void Spectate(Lobbies& lobbies, BotMatches& bots, size_t index, size_t slots,
              const std::atomic<bool>& stop, Tally& tally) {
  const size_t slot = index % slots;
  size_t instance = index;
  int64_t id = 0;
  int last = -1;  // the last ply shown; -1 before the first snapshot
  int64_t gaps = 0, duplicates = 0, reconnects = 0, seen = 0;
  std::vector<double> lag;
  while (!stop) {
    if (id == 0 || last == -2) {
      id = bots.Current(slot);
      last = -1;
      if (id == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
    }
    grpc::ClientContext context;
    v1::WatchMatchRequest request;
    request.set_match_id(id);
    if (last >= 0) request.set_after_ply(last);
    std::unique_ptr<grpc::ClientReader<v1::MatchEvent>> reader =
        lobbies.at(instance)->WatchMatch(&context, request);
    v1::MatchEvent e;
    bool over = false;
    // A resumed stream first replays the moves missed while away (old, so not timed), then a
    // resync.
    bool replaying = last >= 0;
    while (!stop && reader->Read(&e)) {
      ++seen;
      const v1::Match* whole = e.has_snapshot() ? &e.snapshot()
                               : e.has_resync() ? &e.resync()
                                                : nullptr;
      if (whole != nullptr) {
        // A resync after the replayed moves must be where they left off.
        if (last >= 0 && whole->moves_size() > last) ++gaps;
        last = whole->moves_size();
        replaying = false;
      } else if (e.has_move_applied()) {
        const int ply = e.move_applied().move().ply();
        if (ply <= last) {
          ++duplicates;
        } else {
          if (last >= 0 && ply > last + 1) ++gaps;
          last = ply;
          if (!replaying) {
            lag.push_back(static_cast<double>(NowMs() - e.move_applied().move().time_ms()));
          }
        }
      } else if (e.has_game_over()) {
        over = true;
      }
    }
    if (stop) {
      context.TryCancel();
      (void)reader->Finish();
      break;
    }
    grpc::Status s = reader->Finish();
    if (over && s.ok()) {
      last = -2;  // next match of the slot
      continue;
    }
    ++reconnects;
    ++instance;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard<std::mutex> lock(tally.mu);
  tally.spectator_gaps += gaps;
  tally.spectator_duplicates += duplicates;
  tally.spectator_reconnects += reconnects;
  tally.events_seen += seen;
  tally.event_lag_ms.insert(tally.event_lag_ms.end(), lag.begin(), lag.end());
}

}  // namespace

int RunFailover(const FailoverOptions& options) {
  Lobbies lobbies(options.lobbies);
  Tally tally;
  std::atomic<bool> stop{false};
  BotMatches bots(lobbies, static_cast<size_t>(options.bot_matches));
  std::vector<std::thread> threads;
  threads.emplace_back([&] { bots.Run(stop, tally); });
  for (int i = 0; i < options.players; ++i) {
    threads.emplace_back([&, i] { Play(lobbies, static_cast<size_t>(i), stop, tally); });
  }
  for (int i = 0; i < options.spectators; ++i) {
    threads.emplace_back([&, i] {
      Spectate(lobbies, bots, static_cast<size_t>(i), static_cast<size_t>(options.bot_matches),
               stop, tally);
    });
  }
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(options.seconds)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  stop = true;
  for (std::thread& t : threads) t.join();

  // Every acknowledged move must be stored as acknowledged, and no move sent again and
  // refused may be stored.
  std::map<int64_t, v1::Match> stored;
  // Whether the stored match `key.first` has `move` at ply `key.second`; nullopt when it cannot
  // be read.
  auto stored_as = [&](const std::pair<int64_t, int>& key,
                       const std::string& move) -> std::optional<bool> {
    auto it = stored.find(key.first);
    if (it == stored.end()) {
      v1::Match m;
      if (!Get(lobbies, 0, key.first, &m).ok()) {
        std::fprintf(stderr, "failover: cannot read match %lld to check it\n",
                     static_cast<long long>(key.first));
        return std::nullopt;
      }
      it = stored.emplace(key.first, m).first;
    }
    const v1::Match& m = it->second;
    return key.second <= m.moves_size() && m.moves(key.second - 1).move() == move;
  };
  int64_t lost = 0;
  for (const auto& [key, move] : tally.acked) {
    const std::optional<bool> found = stored_as(key, move);
    if (!found) return 1;
    lost += *found ? 0 : 1;
  }
  int64_t false_refusals = 0;
  for (const auto& [key, move] : tally.refused_resends) {
    const std::optional<bool> found = stored_as(key, move);
    if (!found) return 1;
    false_refusals += *found ? 1 : 0;
  }
  // Bot matches still running: their pauses so far count too.
  int64_t bot_matches_checked = 0;
  for (int64_t id : tally.bot_match_ids) {
    v1::Match m;
    if (!Get(lobbies, 0, id, &m).ok()) continue;
    ++bot_matches_checked;
    if (m.status() == v1::MATCH_STATUS_FINISHED) continue;  // counted when it ended
    v1::Match copy = m;
    copy.mutable_result()->set_reason(v1::END_REASON_RULES);
    BotMatches::Finished(copy, tally);
  }
  std::printf("| what | value |\n|---|---|\n");
  std::printf("| lobby instances | %zu |\n", lobbies.size());
  std::printf("| human matches played | %lld |\n", static_cast<long long>(tally.human_matches));
  std::printf("| moves acknowledged | %zu |\n", tally.acked.size());
  std::printf("| moves lost (acknowledged, not stored as acknowledged) | %lld |\n",
              static_cast<long long>(lost));
  std::printf("| answers lost in a failure (the move sent again) | %lld |\n",
              static_cast<long long>(tally.uncertain));
  std::printf("| moves refused when sent again, though stored (false refusals) | %lld |\n",
              static_cast<long long>(false_refusals));
  std::printf("| bot matches | %lld |\n", static_cast<long long>(bot_matches_checked));
  std::printf("| matches ended by a failure | %lld |\n",
              static_cast<long long>(tally.bot_failures));
  std::printf("| longest pause of a human match (between acknowledged moves) | %.0f ms |\n",
              tally.longest_human_pause_ms);
  std::printf("| longest pause of a bot match (between commits; pacing 200 ms) | %.0f ms |\n",
              tally.longest_bot_pause_ms);
  std::printf("| spectators, events received, reconnections | %d, %lld, %lld |\n",
              options.spectators, static_cast<long long>(tally.events_seen),
              static_cast<long long>(tally.spectator_reconnects));
  std::printf("| moves a spectator missed / saw twice | %lld / %lld |\n",
              static_cast<long long>(tally.spectator_gaps),
              static_cast<long long>(tally.spectator_duplicates));
  std::printf(
      "| event lag, commit to spectator (live events), p50 / p99 / max | %.1f / %.1f / %.1f ms "
      "|\n",
      Percentile(tally.event_lag_ms, 50), Percentile(tally.event_lag_ms, 99),
      Percentile(tally.event_lag_ms, 100));
  std::fflush(stdout);
  return lost == 0 && false_refusals == 0 && tally.bot_failures == 0 && tally.spectator_gaps == 0 &&
                 tally.spectator_duplicates == 0
             ? 0
             : 1;
}

}  // namespace ply
