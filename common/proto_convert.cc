#include "common/proto_convert.h"

#include <cmath>

namespace ply {

void ToProto(const GameInfo& info, v1::GameInfo* out) {
  out->set_name(info.name);
  out->set_title(info.title);
  out->set_description(info.description);
  for (const OptionInfo& o : info.options) {
    v1::OptionInfo* p = out->add_options();
    p->set_name(o.name);
    p->set_default_value(o.default_value);
    p->set_description(o.description);
  }
  for (const Difficulty& d : info.levels) {
    v1::DifficultyLevel* p = out->add_levels();
    p->set_name(d.name);
    p->set_description(d.description);
    p->set_max_depth(d.max_depth);
    p->set_random_move_chance(d.random_move_chance);
    p->set_eval_noise(d.eval_noise);
    p->set_time_ms(d.time_ms);
    p->set_perfect(d.perfect);
    if (const LadderRating* r = info.ladder.Find(d.name)) {
      p->set_rating(static_cast<int>(std::lround(r->rating)));
      p->set_rating_source(v1::RATING_SOURCE_LADDER);
      p->set_ladder_rating(static_cast<int>(std::lround(r->rating)));
      p->set_ladder_error(static_cast<int>(std::lround(r->error)));
      p->set_ladder_command(info.ladder.command);
    }
  }
  for (const std::string& name : info.player_names) out->add_player_names(name);
  out->set_notation_hint(info.notation_hint);
  for (const std::string& f : info.record_formats) out->add_record_formats(f);
  const BoardLook& look = info.look;
  v1::BoardLook* l = out->mutable_look();
  l->set_cell_names(std::string(look.cell_names));
  l->set_board(std::string(look.board));
  l->set_piece_shape(std::string(look.piece_shape));
  l->set_background(std::string(look.background));
  l->set_empty(std::string(look.empty));
  l->set_first(std::string(look.first));
  l->set_second(std::string(look.second));
  l->set_lines(std::string(look.lines));
  l->set_coordinates(std::string(look.coordinates));
  l->set_flip_for_first_seat(look.flip_for_first_seat);
}

GameOptions FromProto(const v1::GameSpec& spec) {
  GameOptions options;
  for (const auto& [name, value] : spec.options()) options[name] = value;
  return options;
}

}  // namespace ply
