#include "lobby-server/match/rules.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/proto_convert.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/token.h"

namespace ply::lobby {
namespace {

// Bounds on what a request for a match may carry, so that errors never echo a huge text back.
constexpr int kMaxOptions = 32;
constexpr int64_t kMaxInitialMs = 24LL * 3600 * 1000;
constexpr int64_t kMinInitialMs = 100;
constexpr int64_t kMaxIncrementMs = 3600 * 1000;

}  // namespace

absl::StatusOr<std::unique_ptr<AnyGame>> GameOfSpec(const v1::GameSpec& spec) {
  if (spec.options_size() > kMaxOptions) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxOptions, " game options"));
  }
  for (const auto& [k, v] : spec.options()) {
    if (k.size() > kMaxTextBytes || v.size() > kMaxTextBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("option names and values have at most ", kMaxTextBytes, " bytes"));
    }
  }
  if (spec.name().size() > kMaxTextBytes) {
    return absl::InvalidArgumentError("that is not a game this lobby offers");
  }
  return CreateGame(spec.name(), FromProto(spec));
}

absl::Status CheckTimeControl(const v1::TimeControl& tc) {
  if (tc.initial_ms() < kMinInitialMs || tc.initial_ms() > kMaxInitialMs) {
    return absl::InvalidArgumentError(
        absl::StrCat("initial time must be between ", kMinInitialMs, " ms and 24 hours"));
  }
  if (tc.increment_ms() < 0 || tc.increment_ms() > kMaxIncrementMs) {
    return absl::InvalidArgumentError("the increment must be between 0 and one hour");
  }
  return absl::OkStatus();
}

absl::Status CheckRatedClock(const v1::TimeControl& tc) {
  const int64_t game_ms = tc.initial_ms() + 40 * tc.increment_ms();
  if (game_ms >= kMinRatedClockMs) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("a rated game's clock gives at least ", kMinRatedClockMs / 1000,
                   " s for 40 moves (its initial time and 40 increments); this one gives ",
                   absl::StrFormat("%.2f", static_cast<double>(game_ms) / 1000),
                   " s: ask for a casual game (ply new ... --casual) or a longer clock"));
}

absl::Status CheckMoveText(std::string_view move) {
  if (move.size() > kMaxMoveBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a move is at most ", kMaxMoveBytes, " bytes of text"));
  }
  return absl::OkStatus();
}

std::optional<int> SeatOfToken(const MatchRecord& rec, std::string_view token) {
  if (!IsWellFormedToken(token)) return std::nullopt;
  const std::string hash = TokenHash(token);
  for (size_t i = 0; i < rec.seats.size(); ++i) {
    if (SameTokenHash(rec.seats[i].token_hash, hash)) return static_cast<int>(i);
  }
  return std::nullopt;
}

absl::Status CheckActive(const MatchRecord& rec) {
  switch (rec.status) {
    case MatchStatus::kWaiting:
      return absl::FailedPreconditionError(
          absl::StrCat("match ", rec.id, " has not started: a seat is still open"));
    case MatchStatus::kFinished:
      return absl::FailedPreconditionError(
          absl::StrCat("match ", rec.id, " is over: ", rec.result.text));
    case MatchStatus::kActive:
      return absl::OkStatus();
  }
  return absl::InternalError("unknown match status");
}

const MoveRecord* AlreadyPlayed(const MatchRecord& rec, int seat, int expected_ply,
                                std::string_view move) {
  if (rec.moves.empty() || expected_ply != rec.ply - 1) return nullptr;
  const MoveRecord& last = rec.moves.back();
  if (last.ply != rec.ply || last.seat != seat ||
      !absl::EqualsIgnoreCase(last.move, absl::string_view(move.data(), move.size()))) {
    return nullptr;
  }
  return &last;
}

absl::StatusOr<std::unique_ptr<AnyGame>> CheckMove(const LiveMatch& live,
                                                   const MoveAttempt& attempt) {
  if (absl::Status a = CheckActive(live.rec); !a.ok()) return a;
  const int mover = live.ToMove();
  // Only when the end on time could not be stored: the match is over all the same.
  if (HasFlagged(live.rec, mover, attempt.now_ms)) {
    return absl::FailedPreconditionError(
        absl::StrCat(SideName(live.info, mover), " has run out of time"));
  }
  if (attempt.seat != mover) {
    return absl::FailedPreconditionError(absl::StrCat("not your turn: ", SideName(live.info, mover),
                                                      " (seat ", mover + 1, ") is to move"));
  }
  if (attempt.expected_ply != live.rec.ply) {
    return absl::FailedPreconditionError(absl::StrCat("the match is at ply ", live.rec.ply,
                                                      ", not ", attempt.expected_ply,
                                                      ": your view is out of date"));
  }
  if (absl::Status t = CheckMoveText(attempt.move); !t.ok()) return t;
  std::unique_ptr<AnyGame> after = live.game->Clone();
  if (absl::Status played = after->Play(attempt.move); !played.ok()) {
    return absl::InvalidArgumentError(played.message());
  }
  return after;
}

std::string ResultText(const GameInfo* info, const GameStatus& status) {
  // A count decides Reversi: the result says by how much, as the board's last line does.
  std::string count;
  if (status.points[0] >= 0 && status.points[1] >= 0) {
    const int first = status.winner == 1 ? 1 : 0;
    count = absl::StrCat(" ", status.points[first], "-", status.points[1 - first]);
  }
  return status.winner < 0
             ? absl::StrCat("draw", count, ": ", status.reason)
             : absl::StrCat(SideName(info, status.winner), " wins", count, ": ", status.reason);
}

MoveCommit PrepareMove(const LiveMatch& live, int seat, const AnyGame& after, int64_t think_ms,
                       std::string bot_json, int64_t now_ms) {
  MoveCommit commit;
  MoveRecord& mv = commit.move;
  mv.ply = live.rec.ply + 1;
  mv.seat = seat;
  mv.move = after.History().back();
  mv.think_ms = std::max<int64_t>(0, think_ms);
  mv.time_ms = now_ms;
  mv.bot_json = std::move(bot_json);
  const GameStatus status = after.Status();
  mv.clock_ms = ClockAfterMove(live.rec, seat, mv.think_ms, status.over);
  commit.mover_clock_ms = mv.clock_ms;
  commit.clocked = live.rec.time_initial_ms.has_value();
  commit.turn_started_ms = now_ms;
  commit.draw_offer = live.rec.draw_offer == seat ? seat : -1;
  if (status.over) {
    commit.result = MatchResult{.winner = status.winner,
                                .reason = EndReason::kRules,
                                .text = ResultText(live.info, status)};
  }
  return commit;
}

}  // namespace ply::lobby
