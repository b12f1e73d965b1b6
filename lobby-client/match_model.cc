#include "lobby-client/match_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/proto_convert.h"
#include "engine/core/display_text.h"
#include "engine/registry/registry.h"

namespace ply::client {

absl::Status MatchModel::Reset(const v1::Match& match, absl::Time received) {
  std::vector<std::string> moves;
  for (const v1::MoveRecord& m : match.moves()) moves.push_back(m.move());
  absl::StatusOr<std::unique_ptr<AnyGame>> game =
      ReplayGame(match.spec().name(), FromProto(match.spec()), moves);
  if (!game.ok()) return game.status();
  match_ = match;
  game_ = *std::move(game);
  clocks_at_ = received;
  return absl::OkStatus();
}

absl::Status MatchModel::Apply(const v1::MatchEvent& event, absl::Time received) {
  if (event.has_snapshot()) return Reset(event.snapshot(), received);
  if (event.has_resync()) return Reset(event.resync(), received);
  if (!loaded()) return absl::FailedPreconditionError("an event before the match itself");
  if (event.has_move_applied()) {
    const v1::MoveApplied& applied = event.move_applied();
    const int ply = applied.move().ply();
    if (ply <= plies()) return absl::OkStatus();
    if (ply != plies() + 1) {
      return absl::DataLossError(absl::StrCat("move ", ply, " arrived after move ", plies()));
    }
    if (absl::Status s = game_->Play(applied.move().move()); !s.ok()) return s;
    *match_.add_moves() = applied.move();
    for (int i = 0; i < applied.clocks_ms_size() && i < match_.seats_size(); ++i) {
      match_.mutable_seats(i)->set_clock_ms(applied.clocks_ms(i));
    }
    match_.set_to_move(applied.to_move());
    match_.set_turn_started_ms(applied.move().time_ms());
    match_.set_draw_offer(-1);
    draw_answer_.clear();
    match_.set_board(applied.board());
    match_.clear_legal_moves();
    clocks_at_ = received;
  } else if (event.has_seat_joined()) {
    const v1::Seat& seat = event.seat_joined().seat();
    if (seat.index() >= 0 && seat.index() < match_.seats_size()) {
      *match_.mutable_seats(seat.index()) = seat;
    }
    match_.set_status(event.seat_joined().status());
    if (active()) {
      match_.set_to_move(game_->SideToMove());
      match_.set_turn_started_ms(event.time_ms());
    }
    clocks_at_ = received;
  } else if (event.has_clock_update()) {
    // The lobby's clocks replace the ones run here since the last move.
    const v1::ClockUpdate& update = event.clock_update();
    for (int i = 0; i < update.clocks_ms_size() && i < match_.seats_size(); ++i) {
      match_.mutable_seats(i)->set_clock_ms(update.clocks_ms(i));
    }
    clocks_at_ = received;
  } else if (event.has_draw_offered()) {
    match_.set_draw_offer(event.draw_offered().seat());
    draw_answer_.clear();
  } else if (event.has_draw_declined()) {
    match_.set_draw_offer(-1);
    draw_answer_ = DisplayText(event.draw_declined().text());
  } else if (event.has_presence()) {
    const v1::PresenceChanged& p = event.presence();
    if (p.seat() >= 0 && p.seat() < match_.seats_size()) {
      v1::Seat* seat = match_.mutable_seats(p.seat());
      seat->set_away(!p.present());
      seat->set_away_since_ms(p.present() ? 0 : p.away_since_ms());
    }
  } else if (event.has_game_over()) {
    // Clocks stop: at the lobby's final reading, or (from an older lobby) where they stood.
    const v1::GameOver& over = event.game_over();
    for (int i = 0; i < match_.seats_size(); ++i) {
      match_.mutable_seats(i)->set_clock_ms(i < over.clocks_ms_size() ? over.clocks_ms(i)
                                                                      : ClockMs(i, received));
    }
    for (int i = 0; i < match_.seats_size() && i < over.ratings_after_size(); ++i) {
      match_.mutable_seats(i)->set_rating_after(over.ratings_after(i));
    }
    match_.set_status(v1::MATCH_STATUS_FINISHED);
    *match_.mutable_result() = event.game_over().result();
    match_.set_to_move(-1);
    match_.set_draw_offer(-1);
  } else if (event.has_rematch()) {
    match_.set_rematch_offer(event.rematch().offer());
    match_.set_rematch_id(event.rematch().rematch_id());
  }
  return absl::OkStatus();
}

bool MatchModel::BotToMove() const {
  const int seat = match_.to_move();
  return active() && seat >= 0 && seat < match_.seats_size() &&
         match_.seats(seat).kind() == v1::SEAT_KIND_BOT;
}

int64_t MatchModel::ClockMs(int seat, absl::Time now) const {
  if (seat < 0 || seat >= match_.seats_size() || !match_.has_time_control()) return 0;
  int64_t ms = match_.seats(seat).clock_ms();
  if (active() && match_.to_move() == seat) {
    ms -= absl::ToInt64Milliseconds(now - clocks_at_);
  }
  return std::max<int64_t>(0, ms);
}

std::string MatchModel::Side(int seat) const {
  if (seat >= 0 && seat < match_.seats_size() && !match_.seats(seat).side().empty()) {
    return match_.seats(seat).side();
  }
  return absl::StrCat("seat ", seat + 1);
}

std::string MatchModel::Player(int seat) const {
  if (seat < 0 || seat >= match_.seats_size()) return "?";
  const v1::Seat& s = match_.seats(seat);
  if (!s.taken()) return "(open)";
  std::string name = s.display_name().empty() ? "someone" : DisplayText(s.display_name());
  // A player's rating beside the name; after a rated game, where it went.
  if (s.rating() > 0 && s.rating_after() > 0) {
    const int change = s.rating_after() - s.rating();
    absl::StrAppend(&name, " (", s.rating(), " -> ", s.rating_after(), ", ", change >= 0 ? "+" : "",
                    change, ")");
  } else if (s.rating() > 0) {
    absl::StrAppend(&name, " (", s.rating(), s.provisional() ? "?" : "", ")");
  }
  return name;
}

std::string MatchModel::SideAndPlayer(int seat, std::string_view lead) const {
  if (seat < 0 || seat >= match_.seats_size()) return Side(seat);
  const v1::Seat& s = match_.seats(seat);
  std::string who = !s.taken()                      ? "open"
                    : s.kind() == v1::SEAT_KIND_BOT ? absl::StrCat("bot ", s.difficulty())
                    : s.display_name().empty()      ? "someone"
                                                    : DisplayText(s.display_name());
  if (s.rating() > 0 && s.rating_after() > 0) {
    const int change = s.rating_after() - s.rating();
    absl::StrAppend(&who, ", ", s.rating(), " -> ", s.rating_after(), ", ", change >= 0 ? "+" : "",
                    change);
  } else if (s.rating() > 0) {
    absl::StrAppend(&who, ", ", s.rating(), s.provisional() ? "?" : "");
  }
  return absl::StrCat(Side(seat), " (", std::string(lead), who, ")");
}

int64_t ClaimAtMs(const v1::Match& m, int seat) {
  if (m.status() != v1::MATCH_STATUS_ACTIVE || m.to_move() != seat || m.claim_after_ms() <= 0 ||
      m.has_time_control() || seat < 0 || seat >= m.seats_size() || !m.seats(seat).away() ||
      m.moves_size() < m.seats_size()) {
    return 0;
  }
  return std::max(m.seats(seat).away_since_ms(), m.turn_started_ms()) + m.claim_after_ms();
}

bool ShowsBotThinking(const v1::Match& match, bool viewer_plays) {
  return !viewer_plays || match.status() == v1::MATCH_STATUS_FINISHED;
}

bool HasResult(const v1::Match& match) {
  const v1::EndReason reason = match.result().reason();
  return match.status() == v1::MATCH_STATUS_FINISHED && reason != v1::END_REASON_CANCELLED &&
         reason != v1::END_REASON_ABORTED;
}

}  // namespace ply::client
