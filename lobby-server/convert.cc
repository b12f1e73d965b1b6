#include "lobby-server/convert.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/rating/ratings.h"

namespace ply::lobby {
namespace {

void SpecToProto(const MatchRecord& rec, v1::GameSpec* spec) {
  spec->set_name(rec.game);
  for (const auto& [k, v] : rec.options) (*spec->mutable_options())[k] = v;
}

void SeatToProto(const SeatRecord& s, int index, int64_t clock_ms, std::string side, v1::Seat* p) {
  p->set_index(index);
  p->set_kind(static_cast<v1::SeatKind>(s.kind));
  p->set_difficulty(s.difficulty);
  p->set_display_name(s.display_name);
  p->set_taken(s.taken());
  p->set_clock_ms(clock_ms);
  p->set_side(std::move(side));
  p->set_player(s.player);
  p->set_rating(s.rating);
  p->set_rating_after(s.rating_after);
  p->set_provisional(s.provisional);
}

}  // namespace

std::string SideName(const GameInfo* info, int seat) {
  if (info != nullptr && seat >= 0 && seat < static_cast<int>(info->player_names.size())) {
    return info->player_names[seat];
  }
  return absl::StrCat("seat ", seat + 1);
}

bool ThinkingHidden(const MatchRecord& match) {
  return match.status != MatchStatus::kFinished &&
         std::any_of(match.seats.begin(), match.seats.end(),
                     [](const SeatRecord& s) { return s.kind == SeatKind::kHuman; });
}

v1::MoveRecord MoveToProto(const MoveRecord& m, bool hide_thinking) {
  v1::MoveRecord p;
  p.set_ply(m.ply);
  p.set_seat(m.seat);
  p.set_move(m.move);
  p.set_think_ms(m.think_ms);
  p.set_clock_ms(m.clock_ms);
  p.set_time_ms(m.time_ms);
  if (!m.bot_json.empty()) {
    (void)google::protobuf::util::JsonStringToMessage(m.bot_json, p.mutable_bot());
    if (hide_thinking) {
      v1::BotThinking* bot = p.mutable_bot();
      std::string instance = bot->instance();
      bot->Clear();
      bot->set_instance(std::move(instance));
      bot->set_hidden(true);
    }
  }
  return p;
}

v1::MatchResult ResultToProto(const MatchRecord& match) {
  const MatchResult& r = match.result;
  v1::MatchResult p;
  p.set_winner(r.winner);
  p.set_reason(static_cast<v1::EndReason>(r.reason));
  p.set_text(r.text);
  if (match.rated) p.set_rating_note(UnratedNote(r, match.ply));
  return p;
}

v1::Match ToProto(const LiveMatch& live, int64_t now_ms) {
  const MatchRecord& r = live.rec;
  const int to_move = live.ToMove();
  v1::Match m;
  m.set_id(r.id);
  SpecToProto(r, m.mutable_spec());
  m.set_status(static_cast<v1::MatchStatus>(r.status));
  for (size_t i = 0; i < r.seats.size(); ++i) {
    const int index = static_cast<int>(i);
    v1::Seat* seat = m.add_seats();
    SeatToProto(r.seats[i], index, ClockNow(r, to_move, index, now_ms), SideName(live.info, index),
                seat);
    if (i < live.presence.size() && live.presence[i].known && !live.presence[i].present) {
      seat->set_away(true);
      seat->set_away_since_ms(live.presence[i].since_ms);
    }
  }
  if (!r.time_initial_ms) m.set_claim_after_ms(live.claim_after_ms);
  m.set_turn_started_ms(r.turn_started_ms);
  const bool hide = ThinkingHidden(r);
  for (const MoveRecord& mv : r.moves) *m.add_moves() = MoveToProto(mv, hide);
  if (r.time_initial_ms) {
    m.mutable_time_control()->set_initial_ms(*r.time_initial_ms);
    m.mutable_time_control()->set_increment_ms(r.time_increment_ms);
  }
  m.set_bot_pacing_ms(r.bot_pacing_ms);
  m.set_to_move(to_move);
  if (r.status == MatchStatus::kFinished) *m.mutable_result() = ResultToProto(r);
  m.set_draw_offer(r.draw_offer);
  m.set_rematch_offer(r.rematch_offer);
  m.set_rematch_id(r.rematch_id);
  m.set_rated(r.rated);
  m.set_created_ms(r.created_ms);
  m.set_server_time_ms(now_ms);
  m.set_board(live.game->Render());
  if (to_move >= 0) {
    for (std::string& mv : live.game->LegalMoves()) m.add_legal_moves(std::move(mv));
  }
  return m;
}

v1::MatchSummary SummaryToProto(const MatchRecord& r) {
  v1::MatchSummary m;
  m.set_id(r.id);
  SpecToProto(r, m.mutable_spec());
  m.set_status(static_cast<v1::MatchStatus>(r.status));
  const GameInfo* info = FindGame(r.game);
  for (size_t i = 0; i < r.seats.size(); ++i) {
    // A game this lobby does not know has no side names to show.
    const std::string side =
        info != nullptr && i < info->player_names.size() ? info->player_names[i] : std::string();
    SeatToProto(r.seats[i], static_cast<int>(i), r.seats[i].clock_ms, side, m.add_seats());
  }
  m.set_moves_played(r.ply);
  m.set_rated(r.rated);
  if (r.time_initial_ms) {
    m.mutable_time_control()->set_initial_ms(*r.time_initial_ms);
    m.mutable_time_control()->set_increment_ms(r.time_increment_ms);
  }
  if (r.status == MatchStatus::kFinished) *m.mutable_result() = ResultToProto(r);
  m.set_created_ms(r.created_ms);
  return m;
}

std::string BotThinkingJson(const v1::ChooseMoveResponse& reply) {
  v1::BotThinking thinking;
  thinking.set_depth(reply.depth());
  thinking.set_score(reply.score());
  thinking.set_score_text(reply.score_text());
  thinking.set_nodes(reply.nodes());
  for (const std::string& m : reply.pv()) thinking.add_pv(m);
  thinking.set_instance(reply.instance());
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(thinking, &json);
  return json;
}

v1::GameRating RatingToProto(const GameRatingRecord& r) {
  v1::GameRating p;
  p.set_game(r.game);
  p.set_rating(static_cast<int>(std::lround(r.rating)));
  p.set_deviation(static_cast<int>(std::lround(r.deviation)));
  p.set_provisional(r.deviation > 110);
  p.set_games(r.games);
  p.set_wins(r.wins);
  p.set_draws(r.draws);
  p.set_losses(r.losses);
  return p;
}

}  // namespace ply::lobby
