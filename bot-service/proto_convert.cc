#include "bot-service/proto_convert.h"

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
  }
  for (const std::string& name : info.player_names) out->add_player_names(name);
}

GameOptions FromProto(const v1::GameSpec& spec) {
  GameOptions options;
  for (const auto& [name, value] : spec.options()) options[name] = value;
  return options;
}

}  // namespace ply
