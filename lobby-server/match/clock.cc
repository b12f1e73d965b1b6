#include "lobby-server/match/clock.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ply::lobby {

int64_t WallClockMs() { return absl::ToUnixMillis(absl::Now()); }

int64_t ClockNow(const MatchRecord& rec, int to_move, int seat, int64_t now_ms) {
  if (!rec.time_initial_ms) return 0;
  const SeatRecord& s = rec.seats[seat];
  if (rec.status == MatchStatus::kActive && to_move == seat) {
    return std::max<int64_t>(0, s.clock_ms - (now_ms - rec.turn_started_ms));
  }
  return s.clock_ms;
}

std::vector<int64_t> ClocksNow(const MatchRecord& rec, int to_move, int64_t now_ms) {
  std::vector<int64_t> clocks;
  for (size_t i = 0; i < rec.seats.size(); ++i) {
    clocks.push_back(ClockNow(rec, to_move, static_cast<int>(i), now_ms));
  }
  return clocks;
}

bool HasFlagged(const MatchRecord& rec, int to_move, int64_t now_ms) {
  if (!rec.time_initial_ms || rec.status != MatchStatus::kActive || to_move < 0 ||
      to_move >= static_cast<int>(rec.seats.size())) {
    return false;
  }
  return ClockNow(rec, to_move, to_move, now_ms) <= 0;
}

int64_t FlagDueMs(const MatchRecord& rec, int to_move) {
  return rec.turn_started_ms + rec.seats[to_move].clock_ms + 1;
}

int64_t ClockAfterMove(const MatchRecord& rec, int seat, int64_t think_ms, bool ends_match) {
  if (!rec.time_initial_ms) return 0;
  return std::max<int64_t>(0, rec.seats[seat].clock_ms - think_ms) +
         (ends_match ? 0 : rec.time_increment_ms);
}

int64_t BotBudgetMs(const MatchRecord& rec, int to_move, int64_t level_ms, int64_t now_ms) {
  if (!rec.time_initial_ms) return level_ms;
  const int64_t left = ClockNow(rec, to_move, to_move, now_ms);
  return std::min<int64_t>(level_ms,
                           std::max<int64_t>(10, left / 20 + rec.time_increment_ms * 3 / 4));
}

std::string SpanText(int64_t ms) {
  const int64_t s = std::max<int64_t>(0, ms / 1000);
  if (s < 60) return absl::StrCat(s, " s");
  if (s % 60 == 0) return absl::StrCat(s / 60, " min");
  return absl::StrCat(s / 60, " min ", s % 60, " s");
}

}  // namespace ply::lobby
