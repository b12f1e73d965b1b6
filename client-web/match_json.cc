#include "client-web/match_json.h"

#include <algorithm>

#include "client-web/board_model.h"
#include "lobby-client/match_model.h"

namespace ply::web {
namespace {

using nlohmann::json;

const char* StatusName(v1::MatchStatus status) {
  switch (status) {
    case v1::MATCH_STATUS_WAITING:
      return "waiting";
    case v1::MATCH_STATUS_ACTIVE:
      return "active";
    case v1::MATCH_STATUS_FINISHED:
      return "finished";
    default:
      return "unknown";
  }
}

const char* ReasonName(v1::EndReason reason) {
  switch (reason) {
    case v1::END_REASON_RULES:
      return "rules";
    case v1::END_REASON_RESIGNATION:
      return "resignation";
    case v1::END_REASON_TIMEOUT:
      return "timeout";
    case v1::END_REASON_AGREEMENT:
      return "agreement";
    case v1::END_REASON_BOT_FAILURE:
      return "bot_failure";
    case v1::END_REASON_CANCELLED:
      return "cancelled";
    case v1::END_REASON_ABORTED:
      return "aborted";
    case v1::END_REASON_ABANDONED:
      return "abandoned";
    default:
      return "unknown";
  }
}

json SpecJson(const v1::GameSpec& spec) {
  json options = json::object();
  for (const auto& [k, v] : spec.options()) options[k] = v;
  return {{"name", spec.name()}, {"options", options}};
}

json SeatsJson(const google::protobuf::RepeatedPtrField<v1::Seat>& seats) {
  json out = json::array();
  for (const v1::Seat& s : seats) {
    out.push_back({{"index", s.index()},
                   {"bot", s.kind() == v1::SEAT_KIND_BOT},
                   {"level", s.difficulty()},
                   {"name", s.display_name()},
                   // A registered player's name; a person's seat without one is a guest's.
                   {"player", s.player()},
                   {"guest", s.kind() == v1::SEAT_KIND_HUMAN && s.taken() && s.player().empty()},
                   {"taken", s.taken()},
                   {"clock_ms", s.clock_ms()},
                   {"side", s.side()},
                   {"away", s.away()},
                   {"away_since_ms", s.away_since_ms()},
                   // The seat's rating when the match started (0: none: a guest, a casual
                   // game) and after it, once the result is rated (0 until then).
                   {"rating", s.rating()},
                   {"rating_after", s.rating_after()},
                   {"provisional", s.provisional()}});
  }
  return out;
}

// Who has left an active match and when the opponent may claim for it, by the terminal client's
// rule (client::ClaimAtMs): [{"seat", "name", "claim_at_ms"}] (0: no claim for that seat).
json AwayJson(const v1::Match& match) {
  json out = json::array();
  if (match.status() != v1::MATCH_STATUS_ACTIVE) return out;
  for (int i = 0; i < match.seats_size(); ++i) {
    const v1::Seat& s = match.seats(i);
    if (!s.away() || s.kind() != v1::SEAT_KIND_HUMAN) continue;
    out.push_back(
        {{"seat", i}, {"name", s.display_name()}, {"claim_at_ms", client::ClaimAtMs(match, i)}});
  }
  return out;
}

json ResultJson(const v1::Match& match) {
  if (!match.has_result()) return nullptr;
  return {{"winner", match.result().winner()},
          {"reason", ReasonName(match.result().reason())},
          {"text", match.result().text()},
          {"rating_note", match.result().rating_note()}};
}

}  // namespace

bool ShowsThinking(const v1::Match& match, Reader reader) {
  return client::ShowsBotThinking(match, reader == Reader::kPlayer);
}

json GamesJson(const v1::ListGamesResponse& games) {
  json out = json::array();
  for (const v1::GameInfo& g : games.games()) {
    json options = json::array();
    for (const v1::OptionInfo& o : g.options()) {
      options.push_back(
          {{"name", o.name()}, {"default", o.default_value()}, {"description", o.description()}});
    }
    json levels = json::array();
    for (const v1::DifficultyLevel& l : g.levels()) {
      json level = {{"name", l.name()}, {"description", l.description()}};
      // The level's rating on the players' scale: the ladder's until its bot has rated games.
      if (l.rating_source() != v1::RATING_SOURCE_NONE) {
        level["rating"] = l.rating();
        level["rating_source"] = l.rating_source() == v1::RATING_SOURCE_LIVE ? "live" : "ladder";
        level["rated_games"] = l.rated_games();
      }
      levels.push_back(std::move(level));
    }
    json sides = json::array();
    for (const std::string& p : g.player_names()) sides.push_back(p);
    json formats = json::array();
    for (const std::string& f : g.record_formats()) formats.push_back(f);
    // How the page draws it (the game's kLook); null from a lobby that does not say.
    json look = nullptr;
    if (g.has_look()) {
      const v1::BoardLook& l = g.look();
      look = {{"cell_names", l.cell_names()},
              {"board", l.board()},
              {"piece_shape", l.piece_shape()},
              {"background", l.background()},
              {"empty", l.empty()},
              {"first", l.first()},
              {"second", l.second()},
              {"lines", l.lines()},
              {"coordinates", l.coordinates()},
              {"flip_for_first_seat", l.flip_for_first_seat()}};
    }
    out.push_back({{"name", g.name()},
                   {"look", look},
                   {"title", g.title()},
                   {"description", g.description()},
                   {"options", options},
                   {"levels", levels},
                   {"sides", sides},
                   {"notation_hint", g.notation_hint()},
                   {"record_formats", formats}});
  }
  return {{"games", out}};
}

json MoveJson(const v1::MoveRecord& move, bool show_thinking) {
  json out = {{"ply", move.ply()},           {"seat", move.seat()},
              {"move", move.move()},         {"think_ms", move.think_ms()},
              {"clock_ms", move.clock_ms()}, {"time_ms", move.time_ms()}};
  if (move.has_bot()) {
    // A player still learns that a bot moved, never what it saw.
    json bot = {{"instance", move.bot().instance()}};
    if (show_thinking && !move.bot().hidden()) {
      bot["depth"] = move.bot().depth();
      bot["score"] = move.bot().score();
      bot["score_text"] = move.bot().score_text();
      bot["nodes"] = move.bot().nodes();
    }
    out["bot"] = bot;
  }
  return out;
}

json StateJson(const v1::Match& match, const std::vector<std::string>& legal_moves) {
  json legal = json::array();
  for (const std::string& m : legal_moves) legal.push_back(m);
  json clock = nullptr;
  if (match.has_time_control()) {
    clock = {{"initial_ms", match.time_control().initial_ms()},
             {"increment_ms", match.time_control().increment_ms()}};
  }
  return {
      {"id", match.id()},
      {"spec", SpecJson(match.spec())},
      {"status", StatusName(match.status())},
      {"seats", SeatsJson(match.seats())},
      {"plies", match.moves_size()},
      {"to_move", match.to_move()},
      {"draw_offer", match.draw_offer()},
      {"result", ResultJson(match)},
      {"time_control", clock},
      {"created_ms", match.created_ms()},
      {"rated", match.rated()},
      {"board", BoardModel(match.spec().name(), match.board())},
      {"board_text", match.board()},
      {"legal_moves", legal},
      {"away", AwayJson(match)},
      {"claim_after_ms", match.claim_after_ms()},
      {"rematch_offer", match.status() == v1::MATCH_STATUS_FINISHED ? match.rematch_offer() : -1},
      {"rematch_id", match.rematch_id()}};
}

json MatchJson(const v1::Match& match, Reader reader) {
  std::vector<std::string> legal(match.legal_moves().begin(), match.legal_moves().end());
  json out = StateJson(match, legal);
  const bool thinking = ShowsThinking(match, reader);
  json moves = json::array();
  for (const v1::MoveRecord& m : match.moves()) moves.push_back(MoveJson(m, thinking));
  out["moves"] = moves;
  return out;
}

json SummaryJson(const v1::MatchSummary& summary, const std::string& board) {
  json result = nullptr;
  if (summary.has_result()) {
    result = {{"winner", summary.result().winner()},
              {"reason", ReasonName(summary.result().reason())},
              {"text", summary.result().text()}};
  }
  return {{"id", summary.id()},
          {"spec", SpecJson(summary.spec())},
          {"status", StatusName(summary.status())},
          {"seats", SeatsJson(summary.seats())},
          {"plies", summary.moves_played()},
          {"result", result},
          {"created_ms", summary.created_ms()},
          {"rated", summary.rated()},
          {"time_control", summary.has_time_control()
                               ? json{{"initial_ms", summary.time_control().initial_ms()},
                                      {"increment_ms", summary.time_control().increment_ms()}}
                               : json(nullptr)},
          {"board", board.empty() ? json(nullptr) : BoardModel(summary.spec().name(), board)}};
}

json PlayerJson(const v1::Player& player) {
  json ratings = json::array();
  for (const v1::GameRating& r : player.ratings()) {
    ratings.push_back({{"game", r.game()},
                       {"rating", r.rating()},
                       {"deviation", r.deviation()},
                       {"provisional", r.provisional()},
                       {"games", r.games()},
                       {"wins", r.wins()},
                       {"draws", r.draws()},
                       {"losses", r.losses()}});
  }
  return {{"name", player.name()},
          {"bot", player.bot()},
          {"created_ms", player.created_ms()},
          {"last_seen_ms", player.last_seen_ms()},
          {"ratings", ratings}};
}

json LeaderboardJson(const v1::LeaderboardResponse& board) {
  json entries = json::array();
  for (const v1::LeaderboardEntry& e : board.entries()) {
    entries.push_back({{"rank", e.rank()},
                       {"name", e.name()},
                       {"bot", e.bot()},
                       {"rating", e.rating()},
                       {"deviation", e.deviation()},
                       {"games", e.games()}});
  }
  return {{"entries", entries}};
}

json PairEventJson(const v1::PairEvent& event) {
  if (event.has_waiting()) {
    return {{"waiting",
             {{"waited_ms", event.waiting().waited_ms()},
              {"rating_gap", event.waiting().rating_gap()}}}};
  }
  if (event.has_bot_offer()) {
    return {{"bot_offer",
             {{"level", event.bot_offer().level()}, {"rating", event.bot_offer().rating()}}}};
  }
  // The seat's token goes only to the browser that asked, in this stream's answer.
  return {{"paired",
           {{"id", event.paired().match_id()},
            {"seat", event.paired().seat()},
            {"token", event.paired().seat_token()},
            {"opponent", event.paired().opponent()},
            {"opponent_rating", event.paired().opponent_rating()},
            {"opponent_provisional", event.paired().opponent_provisional()}}}};
}

json AnalysisProgressJson(const v1::AnalysisProgress& p) {
  return {{"positions", p.positions()}, {"positions_done", p.positions_done()},
          {"waiting", p.waiting()},     {"queue_position", p.queue_position()},
          {"queued", p.queued()},       {"running", p.running()},
          {"bots_busy", p.bots_busy()}};
}

json AnalysisJson(const v1::MatchAnalysis& analysis) {
  static constexpr const char* kMarks[] = {"", "?!", "?", "??"};
  json moves = json::array();
  for (const v1::MoveAnalysis& m : analysis.moves()) {
    const int mark = std::clamp(static_cast<int>(m.mark()), 0, 3);
    json line = json::array();
    for (const std::string& b : m.best_line()) line.push_back(b);
    // Values from the mover's side; win chances in [0, 1], proven ones 0, 0.5 or 1.
    moves.push_back({{"ply", m.ply()},
                     {"seat", m.seat()},
                     {"mark", kMarks[mark]},
                     {"exact", m.exact_verdict()},
                     {"best", m.best_move()},
                     {"best_line", line},
                     {"before", m.score_before_text()},
                     {"after", m.score_after_text()},
                     {"win_before", m.win_before()},
                     {"win_after", m.win_after()},
                     {"before_exact", m.before_exact()},
                     {"after_exact", m.after_exact()},
                     {"accuracy", m.accuracy()}});
  }
  json players = json::array();
  for (const v1::PlayerAnalysis& p : analysis.players()) {
    players.push_back({{"seat", p.seat()},
                       {"accuracy", p.accuracy()},
                       {"moves", p.moves()},
                       {"inaccuracies", p.inaccuracies()},
                       {"mistakes", p.mistakes()},
                       {"blunders", p.blunders()}});
  }
  return {{"moves", moves}, {"players", players}, {"partial", analysis.partial()}};
}

}  // namespace ply::web
