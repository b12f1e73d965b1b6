#include "lobby-server/players/matchmaker.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/token.h"

namespace ply::lobby {
namespace {

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;

}  // namespace

Matchmaker::Matchmaker(QueueStore* store, MatchmakerOptions options,
                       std::function<int64_t()> now_ms)
    : store_(store), options_(options), now_ms_(std::move(now_ms)) {}

std::string Matchmaker::Pool(const std::string& game, const GameOptions& options,
                             const std::string& time_control, bool casual) {
  std::string pool = game;
  for (const auto& [k, v] : options) absl::StrAppend(&pool, "|", k, "=", v);
  absl::StrAppend(&pool, "|", time_control.empty() ? "-" : time_control,
                  casual ? "|casual" : "|rated");
  return pool;
}

int64_t Matchmaker::AliveSinceMs(int64_t now_ms) const {
  return now_ms - absl::ToInt64Milliseconds(options_.entry_lifetime);
}

double Matchmaker::GapAfter(int64_t waited_ms) const {
  return std::min(options_.max_gap, options_.base_gap + options_.gap_per_s * waited_ms / 1000.0);
}

absl::StatusOr<QueueTicket> Matchmaker::Join(const PlayerRecord& player, const std::string& game,
                                             const std::string& pool, double rating) {
  const int64_t now = now_ms_();
  if (options_.no_show_cooldown > absl::ZeroDuration()) {
    // A store that keeps no no-shows (or is away) holds nobody back.
    absl::StatusOr<std::vector<int64_t>> shows = store_->NoShows(player.id, now - kDayMs);
    if (shows.ok() && !shows->empty()) {
      const int64_t last = *std::max_element(shows->begin(), shows->end());
      const int doublings = std::min<int>(static_cast<int>(shows->size()) - 1, 6);
      const int64_t cooldown = std::min<int64_t>(
          absl::ToInt64Milliseconds(options_.no_show_cooldown) << doublings, int64_t{3600} * 1000);
      if (now < last + cooldown) {
        const std::string what = shows->size() == 1
                                     ? "a match against a person"
                                     : absl::StrCat(shows->size(), " matches against people");
        return absl::FailedPreconditionError(
            absl::StrCat("you did not come to, or made no first move in, ", what,
                         " in the last day (the last ", SpanText(now - last),
                         " ago): you can pair again in ", SpanText(last + cooldown - now + 999)));
      }
    }
  }
  // A match between people waits for this player's first move: that game first (pairing again
  // left it to its abort, which kept its opponent waiting, and dodged them at no cost while it
  // lasted; a restarted lobby forgets its no-show timers, not this).
  if (absl::StatusOr<std::optional<int64_t>> waiting = store_->AwaitingFirstMove(player.id);
      waiting.ok() && waiting->has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("match ", **waiting,
                     " waits for your first move: play it or resign it before pairing again"));
  }
  QueueTicket t;
  t.game = game;
  t.seat_token = NewSeatToken();
  t.entry = {.player_id = player.id,
             .name = player.name,
             .pool = pool,
             .rating = rating,
             .joined_ms = now,
             .token_hash = TokenHash(t.seat_token),
             .alive_ms = now};
  t.last_alive_ms = now;
  absl::StatusOr<int64_t> id = store_->JoinQueue(t.entry, AliveSinceMs(now));
  if (!id.ok()) return id.status();
  t.entry.id = *id;
  return t;
}

void Matchmaker::Leave(const QueueTicket& ticket) { store_->LeaveQueue(ticket.entry.id); }

absl::StatusOr<QueueLook> Matchmaker::Look(QueueTicket& t, const MakeMatch& make) {
  QueueLook look;
  int64_t now = now_ms_();
  // Marked alive every second while its stream waits.
  int64_t refresh = 0;
  if (now - t.last_alive_ms >= 1000) refresh = t.last_alive_ms = now;
  absl::StatusOr<std::optional<Pairing>> found = store_->QueueResult(t.entry.id, refresh);
  if (absl::IsAborted(found.status())) return found.status();
  if (found.ok() && !*found) {
    found = store_->TryPair(t.entry, now, AliveSinceMs(now), options_.base_gap, options_.gap_per_s,
                            options_.max_gap, make);
  }
  if (found.ok() && *found) {
    look.paired = **found;
    return look;
  }
  now = now_ms_();
  const int64_t waited = now - t.entry.joined_ms;
  if (!t.offered && waited >= absl::ToInt64Milliseconds(options_.bot_after)) {
    // The bot level whose rating is nearest the player's ("medium" while none has one).
    std::string level = "medium";
    double best = 1e9, level_rating = 1500;
    if (absl::StatusOr<std::vector<std::pair<std::string, double>>> bots =
            store_->BotRatings(t.game);
        bots.ok()) {
      for (const auto& [name, r] : *bots) {
        if (std::abs(r - t.entry.rating) < best) {
          best = std::abs(r - t.entry.rating);
          level = name.substr(name.find(':') + 1);
          level_rating = r;
        }
      }
    }
    t.offered = true;
    look.bot_offer = {level, static_cast<int>(std::lround(level_rating))};
  }
  if (now - t.last_waiting_ms >= 2000) {
    t.last_waiting_ms = now;
    look.waiting = {waited, static_cast<int>(GapAfter(waited))};
  }
  return look;
}

}  // namespace ply::lobby
