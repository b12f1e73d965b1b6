// ply: the terminal client of the ply lobby. Lists games and matches, creates and joins matches
// and plays them on a live board, watches matches (with what each bot's search saw), prints and
// steps through records, and plays single moves from scripts with the seat token it keeps.
#include <google/protobuf/util/json_util.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bot-service/credentials.h"
#include "client-cli/lobby_link.h"
#include "client-cli/match_view.h"
#include "client-cli/render.h"
#include "client-cli/seat_store.h"
#include "client-cli/session.h"
#include "engine/core/options.h"
#include "engine/games/draughts/draughts.h"

ABSL_FLAG(std::string, server, "",
          "Lobby address (default: $PLY_SERVER, else 127.0.0.1:50050, the local stack).");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA to verify a TLS lobby against (also PLY_TLS_CA); empty: plaintext.");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for a lobby that requires one.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(bool, json, false,
          "Print JSON instead of text (games, list, new, join, move, record, "
          "watch: one event per line).");
ABSL_FLAG(std::string, seat1, "", "new: the first seat: me, open or bot:LEVEL.");
ABSL_FLAG(std::string, seat2, "", "new: the second seat: me, open or bot:LEVEL.");
ABSL_FLAG(std::string, opt, "", "new: game options, k=v[,k=v] (also accepted as k=v arguments).");
ABSL_FLAG(std::string, clock, "",
          "new: time control MINUTES[+SECONDS], e.g. 5+3 (none: no clocks).");
ABSL_FLAG(bool, detach, false,
          "new: only create the match and print its number (for scripts); join or watch later.");
ABSL_FLAG(int64_t, pacing_ms, -1, "new: minimum time before a bot moves (default: the lobby's).");
ABSL_FLAG(std::string, game, "", "list: only this game.");
ABSL_FLAG(std::string, status, "", "list: only waiting, active or finished matches.");
ABSL_FLAG(bool, open, false, "list: only matches with a seat open.");
ABSL_FLAG(int, limit, 20, "list: at most this many matches.");
ABSL_FLAG(int, seat, -1, "join: the seat to take, 1 or 2 (default: the first open one).");
ABSL_FLAG(std::string, name, "", "new, join: your name at the table (default: $USER).");
ABSL_FLAG(std::string, format, "text", "record: text, or pdn (draughts).");

namespace ply::client {
namespace {

constexpr char kDefaultServer[] = "127.0.0.1:50050";

struct CommandHelp {
  const char* name;
  const char* usage;
  const char* text;
};

const std::vector<CommandHelp>& Commands() {
  static const auto* commands = new std::vector<CommandHelp>{
      {"games", "ply games [--json]", "The games the lobby offers, their options and bot levels."},
      {"new", "ply new GAME [k=v ...] [--seat1 S] [--seat2 S] [--clock 5+3] [--name N] [--detach]",
       "Creates a match. A seat is `me` (you play it), `open` (someone joins it) or `bot:LEVEL`.\n"
       "Unset seats: the first becomes `me`, the other `open`. With a seat for you it goes\n"
       "straight into play; a bot-vs-bot match is watched. --detach only prints the match\n"
       "number. Examples:\n"
       "  ply new connect4 --seat2 bot:medium\n"
       "  ply new reversi --seat1 bot:easy --seat2 bot:hard\n"
       "  ply new connect4 width=8 cylinder=true --clock 5+3"},
      {"list", "ply list [--game G] [--status waiting|active|finished] [--open] [--json]",
       "Matches, newest first; open seats are marked."},
      {"join", "ply join MATCH [--seat N] [--name NAME]",
       "Takes a seat and plays. If you already hold a seat in MATCH (its token is kept in\n"
       "~/.config/ply/seats.json), resumes it. A full match is watched instead. With --json:\n"
       "take the seat and print the match without playing (then `ply move`)."},
      {"watch", "ply watch MATCH [--json]",
       "Watches a match live to its end: the board, each move, and for bots the depth, score\n"
       "and nodes their search reached. q stops watching."},
      {"record", "ply record MATCH [--format text|pdn] [--json]",
       "The moves of a match in the game's notation (PDN for draughts with --format pdn)."},
      {"replay", "ply replay MATCH", "Steps through a match's moves (n/p, arrows, q)."},
      {"move", "ply move MATCH MOVE [--json]",
       "Plays one move for the seat you hold in MATCH (for scripts); prints the board after it."},
      {"help", "ply help [COMMAND]", "This help, or one command's."},
  };
  return *commands;
}

void PrintHelp(std::ostream& out) {
  out << "ply: play and watch board games on a ply lobby.\n\nCommands:\n";
  for (const CommandHelp& c : Commands()) out << "  " << c.usage << "\n";
  out << "\nWhile playing, type a move in the game's notation, or: moves, help, resign, draw, "
         "quit.\n"
         "Server: --server HOST:PORT or $PLY_SERVER (default "
      << kDefaultServer
      << ").\nColour and Unicode on a terminal; plain ASCII with NO_COLOR=1 or when piped.\n"
         "`ply help COMMAND` explains one command.\n";
}

int Usage(const std::string& message) {
  std::cerr << "ply: " << message << " (see `ply help`)" << std::endl;
  return 2;
}

std::string Server() {
  std::string s = absl::GetFlag(FLAGS_server);
  if (!s.empty()) return s;
  const char* env = std::getenv("PLY_SERVER");
  return env != nullptr && env[0] != '\0' ? env : kDefaultServer;
}

// TLS when a CA is given by flag or PLY_TLS_CA; a bad file ends the program with its reason.
std::shared_ptr<grpc::ChannelCredentials> Credentials() {
  std::string ca = absl::GetFlag(FLAGS_tls_ca);
  if (ca.empty()) {
    const char* env = std::getenv("PLY_TLS_CA");
    if (env != nullptr) ca = env;
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> c =
      MakeChannelCredentials({.ca_file = ca,
                              .cert_file = absl::GetFlag(FLAGS_tls_cert),
                              .key_file = absl::GetFlag(FLAGS_tls_key)});
  if (!c.ok()) {
    std::cerr << "ply: TLS: " << c.status().message() << std::endl;
    std::exit(2);
  }
  return *c;
}

std::string PlayerName() {
  std::string name = absl::GetFlag(FLAGS_name);
  if (!name.empty()) return name;
  const char* user = std::getenv("USER");
  return user != nullptr && user[0] != '\0' ? user : "player";
}

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // Empty lists and zero values too, so that scripts find every field.
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, options);
  return out;
}

Look OutputLook() { return ChooseLook(isatty(STDOUT_FILENO), std::getenv("NO_COLOR")); }

class Cli {
 public:
  Cli() : lobby_(Server(), Credentials()), store_(SeatStore::DefaultPath()) {}

  int Fail(const absl::Status& s) {
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << nlohmann::json{{"error", Describe(s, lobby_.address())},
                                  {"code", absl::StatusCodeToString(s.code())}}
                << std::endl;
    } else {
      std::cerr << "ply: " << Describe(s, lobby_.address()) << std::endl;
    }
    return 1;
  }

  int Games() {
    absl::StatusOr<v1::ListGamesResponse> games = lobby_.ListGames();
    if (!games.ok()) return Fail(games.status());
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*games) << std::endl;
      return 0;
    }
    const Look look = OutputLook();
    for (const v1::GameInfo& g : games->games()) {
      std::cout << Bold(g.name(), look) << "  " << g.title() << ": " << g.description() << "\n";
      std::cout << "    sides: " << absl::StrJoin(g.player_names(), " vs ") << "\n";
      std::vector<std::string> levels;
      for (const v1::DifficultyLevel& l : g.levels()) levels.push_back(l.name());
      std::cout << "    bot levels: " << absl::StrJoin(levels, ", ") << "\n";
      for (const v1::OptionInfo& o : g.options()) {
        std::cout << "    option " << o.name() << "=" << o.default_value() << ": "
                  << o.description() << "\n";
      }
    }
    std::cout << "\nStart one: ply new GAME --seat2 bot:LEVEL" << std::endl;
    return 0;
  }

  int New(const std::vector<std::string>& args) {
    if (args.empty()) return Usage("new needs a game, e.g. `ply new connect4 --seat2 bot:medium`");
    v1::CreateMatchRequest request;
    request.mutable_spec()->set_name(args[0]);
    std::vector<std::string> option_texts = {absl::GetFlag(FLAGS_opt)};
    option_texts.insert(option_texts.end(), args.begin() + 1, args.end());
    for (const std::string& text : option_texts) {
      if (text.empty()) continue;
      absl::StatusOr<GameOptions> parsed = ParseOptions(text);
      if (!parsed.ok()) return Usage(std::string(parsed.status().message()));
      for (const auto& [k, v] : *parsed) (*request.mutable_spec()->mutable_options())[k] = v;
    }

    std::vector<std::string> seats = {absl::AsciiStrToLower(absl::GetFlag(FLAGS_seat1)),
                                      absl::AsciiStrToLower(absl::GetFlag(FLAGS_seat2))};
    if (seats[0] != "me" && seats[1] != "me") {
      for (std::string& s : seats) {
        if (s.empty()) {
          s = "me";
          break;
        }
      }
    }
    int mine = -1;
    for (int i = 0; i < 2; ++i) {
      std::string& s = seats[i];
      if (s.empty()) s = "open";
      v1::SeatSpec* spec = request.add_seats();
      if (s == "me" || s == "open") {
        spec->set_kind(v1::SEAT_KIND_HUMAN);
        if (s == "me") {
          if (mine >= 0)
            return Usage("only one seat can be `me`; let a friend `ply join` the other");
          mine = i;
        }
      } else if (s.rfind("bot", 0) == 0) {
        spec->set_kind(v1::SEAT_KIND_BOT);
        const size_t colon = s.find(':');
        spec->set_difficulty(colon == std::string::npos ? "medium" : s.substr(colon + 1));
      } else {
        return Usage(absl::StrCat("seat ", i + 1, " is '", s, "': use me, open or bot:LEVEL"));
      }
    }
    if (mine >= 0) {
      request.set_take_seat(mine);
      request.set_display_name(PlayerName());
    }
    if (const std::string clock = absl::GetFlag(FLAGS_clock); !clock.empty()) {
      std::vector<std::string> parts = absl::StrSplit(clock, '+');
      double minutes = 0, increment = 0;
      if (parts.size() > 2 || !absl::SimpleAtod(parts[0], &minutes) ||
          (parts.size() == 2 && !absl::SimpleAtod(parts[1], &increment)) || minutes <= 0) {
        return Usage("--clock is MINUTES[+SECONDS], e.g. 5+3");
      }
      request.mutable_time_control()->set_initial_ms(static_cast<int64_t>(minutes * 60000));
      request.mutable_time_control()->set_increment_ms(static_cast<int64_t>(increment * 1000));
    }
    if (absl::GetFlag(FLAGS_pacing_ms) >= 0) {
      request.set_bot_pacing_ms(absl::GetFlag(FLAGS_pacing_ms));
    }

    absl::StatusOr<v1::CreateMatchResponse> created = lobby_.CreateMatch(request);
    if (!created.ok()) return Fail(created.status());
    const int64_t id = created->match().id();
    std::optional<SeatTicket> ticket;
    if (mine >= 0) {
      ticket = SeatTicket{
          .match_id = id, .seat = mine, .token = created->seat_token(), .name = PlayerName()};
      if (absl::Status s = store_.Save(lobby_.address(), *ticket); !s.ok()) {
        std::cerr << "ply: warning: " << s.message() << " (`ply join " << id
                  << "` will not find your seat)" << std::endl;
      }
    }
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(created->match()) << std::endl;
      return 0;
    }
    if (absl::GetFlag(FLAGS_detach)) {
      std::cout << id << std::endl;
      return 0;
    }
    if (mine < 0) {
      bool open = false;
      for (const v1::Seat& s : created->match().seats()) open |= !s.taken();
      if (open) {
        std::cout << "Match " << id << " created; players join with `ply join " << id
                  << "`, anyone watches with `ply watch " << id << "`." << std::endl;
        return 0;
      }
    }
    return RunSession(lobby_, {.match_id = id,
                               .seat = ticket,
                               .look = OutputLook(),
                               .tty = static_cast<bool>(isatty(STDOUT_FILENO))});
  }

  int List() {
    v1::ListMatchesRequest request;
    request.set_game(absl::GetFlag(FLAGS_game));
    const std::string status = absl::AsciiStrToLower(absl::GetFlag(FLAGS_status));
    if (status == "waiting") {
      request.set_status(v1::MATCH_STATUS_WAITING);
    } else if (status == "active") {
      request.set_status(v1::MATCH_STATUS_ACTIVE);
    } else if (status == "finished") {
      request.set_status(v1::MATCH_STATUS_FINISHED);
    } else if (!status.empty()) {
      return Usage("--status is waiting, active or finished");
    }
    request.set_open_seats(absl::GetFlag(FLAGS_open));
    request.set_page_size(std::clamp(absl::GetFlag(FLAGS_limit), 1, 200));
    absl::StatusOr<v1::ListMatchesResponse> list = lobby_.ListMatches(request);
    if (!list.ok()) return Fail(list.status());
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*list) << std::endl;
      return 0;
    }
    if (list->matches().empty()) {
      std::cout << "No matches. Start one: ply new connect4 --seat2 bot:medium" << std::endl;
      return 0;
    }
    std::cout << absl::StrFormat("%6s  %-10s %-9s %5s  %-40s %s\n", "MATCH", "GAME", "STATUS",
                                 "MOVES", "SEATS", "RESULT");
    for (const v1::MatchSummary& m : list->matches()) {
      std::vector<std::string> seats;
      for (const v1::Seat& s : m.seats()) {
        seats.push_back(absl::StrCat(s.side(), ": ", s.taken() ? s.display_name() : "[open]"));
      }
      const char* st = m.status() == v1::MATCH_STATUS_WAITING  ? "waiting"
                       : m.status() == v1::MATCH_STATUS_ACTIVE ? "active"
                                                               : "finished";
      std::cout << absl::StrFormat("%6d  %-10s %-9s %5d  %-40s %s\n", m.id(), m.spec().name(), st,
                                   m.moves_played(), absl::StrJoin(seats, ", "),
                                   m.has_result() ? m.result().text() : "");
    }
    std::cout << "[open]: a seat anyone can take with `ply join MATCH`." << std::endl;
    return 0;
  }

  int Join(int64_t id) {
    std::optional<SeatTicket> ticket = store_.Find(lobby_.address(), id);
    if (ticket && absl::GetFlag(FLAGS_json)) {
      absl::StatusOr<v1::Match> match = lobby_.GetMatch(id);
      if (!match.ok()) return Fail(match.status());
      std::cout << ToJson(*match) << std::endl;
      return 0;
    }
    if (!ticket) {
      absl::StatusOr<v1::Match> match = lobby_.GetMatch(id);
      if (!match.ok()) return Fail(match.status());
      bool open = false;
      for (const v1::Seat& s : match->seats()) open |= !s.taken();
      if (!open) {
        if (absl::GetFlag(FLAGS_json)) {
          return Fail(absl::AlreadyExistsError(absl::StrCat("match ", id, " has no open seat")));
        }
        std::cout << "Match " << id << " has no open seat; watching it instead." << std::endl;
        return Watch(id);
      }
      v1::JoinMatchRequest request;
      request.set_match_id(id);
      const int seat = absl::GetFlag(FLAGS_seat);
      request.set_seat(seat > 0 ? seat - 1 : -1);
      request.set_display_name(PlayerName());
      absl::StatusOr<v1::JoinMatchResponse> joined = lobby_.JoinMatch(request);
      if (!joined.ok()) return Fail(joined.status());
      ticket = SeatTicket{.match_id = id,
                          .seat = joined->seat(),
                          .token = joined->seat_token(),
                          .name = PlayerName()};
      if (absl::Status s = store_.Save(lobby_.address(), *ticket); !s.ok()) {
        std::cerr << "ply: warning: " << s.message() << std::endl;
      }
      if (absl::GetFlag(FLAGS_json)) {
        std::cout << ToJson(joined->match()) << std::endl;
        return 0;
      }
    }
    return RunSession(lobby_, {.match_id = id,
                               .seat = ticket,
                               .look = OutputLook(),
                               .tty = static_cast<bool>(isatty(STDOUT_FILENO))});
  }

  int Watch(int64_t id) {
    if (absl::GetFlag(FLAGS_json)) {
      // One event per line, as the lobby sends them, until the match ends.
      MatchStream stream(&lobby_, id);
      for (;;) {
        pollfd p{.fd = stream.wake_fd(), .events = POLLIN, .revents = 0};
        poll(&p, 1, 1000);
        for (MatchStream::Item& item : stream.Take()) {
          if (item.event) std::cout << ToJson(*item.event) << std::endl;
          if (!item.notice.empty()) std::cerr << "ply: " << item.notice << std::endl;
          if (item.ended) return item.error.ok() ? 0 : Fail(item.error);
        }
      }
    }
    return RunSession(
        lobby_,
        {.match_id = id, .look = OutputLook(), .tty = static_cast<bool>(isatty(STDOUT_FILENO))});
  }

  int Record(int64_t id) {
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    if (absl::GetFlag(FLAGS_format) == "pdn") {
      if (m->spec().name() != "draughts") return Usage("PDN is the record format of draughts");
      std::vector<std::string> moves;
      for (const v1::MoveRecord& mv : m->moves()) moves.push_back(mv.move());
      PdnTags tags = {{"Event", absl::StrCat("ply match ", id)}, {"Site", lobby_.address()}};
      if (m->seats_size() == 2) {
        tags.push_back({"Black", m->seats(0).display_name()});
        tags.push_back({"White", m->seats(1).display_name()});
      }
      if (m->status() == v1::MATCH_STATUS_FINISHED) {
        const int w = m->result().winner();
        tags.push_back({"Result", w < 0 ? "1/2-1/2" : w == 0 ? "1-0" : "0-1"});
      }
      absl::StatusOr<std::string> pdn = ExportPdn(moves, tags);
      if (!pdn.ok()) return Fail(pdn.status());
      std::cout << *pdn;
      if (!pdn->empty() && pdn->back() != '\n') std::cout << "\n";
      return 0;
    }
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*m) << std::endl;
      return 0;
    }
    MatchView view;
    if (absl::Status s = view.Reset(*m, absl::Now()); !s.ok()) return Fail(s);
    std::cout << view.game().Info().title << ", match " << id << ": ";
    for (int i = 0; i < m->seats_size(); ++i) {
      std::cout << (i ? " vs " : "") << view.Player(i) << " (" << view.Side(i) << ")";
    }
    std::cout << "\n";
    if (view.over()) {
      std::cout << "Result: " << m->result().text() << "\n";
    } else {
      std::cout << "In progress (" << m->moves_size() << " moves so far)\n";
    }
    std::cout << "\n" << MoveListText(*m) << "\n\n";
    for (const v1::MoveRecord& mv : m->moves()) {
      const std::string bot = BotSummary(mv);
      std::cout << absl::StrFormat("%4d. %-8s %-8s %7.1f s  %s\n", mv.ply(), view.Side(mv.seat()),
                                   mv.move(), mv.think_ms() / 1000.0, bot);
    }
    std::cout << "\nStep through it: ply replay " << id << std::endl;
    return 0;
  }

  int Replay(int64_t id) {
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    return RunReplay(*m, OutputLook(), isatty(STDOUT_FILENO));
  }

  int Move(int64_t id, const std::string& move) {
    std::optional<SeatTicket> ticket = store_.Find(lobby_.address(), id);
    if (!ticket) {
      return Fail(absl::FailedPreconditionError(absl::StrCat("you hold no seat in match ", id,
                                                             " on ", lobby_.address(),
                                                             " (`ply join ", id, "` takes one)")));
    }
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    v1::MakeMoveRequest request;
    request.set_match_id(id);
    request.set_expected_ply(m->moves_size());
    request.set_move(move);
    absl::StatusOr<v1::MakeMoveResponse> r = lobby_.MakeMove(request, ticket->token);
    if (!r.ok()) return Fail(r.status());
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*r) << std::endl;
      return 0;
    }
    MatchView view;
    if (absl::Status s = view.Reset(r->match(), absl::Now()); !s.ok()) return Fail(s);
    const Look look = OutputLook();
    std::cout << "Played " << r->move().move() << " (move " << r->move().ply() << ").\n"
              << RenderBoard(view.game(), look);
    if (view.over()) {
      for (const std::string& l : GameOverLines(view.match(), ticket->seat)) std::cout << l << "\n";
    } else {
      std::cout << view.Side(view.match().to_move()) << " (" << view.Player(view.match().to_move())
                << ") to move.\n";
    }
    return 0;
  }

 private:
  LobbyClient lobby_;
  SeatStore store_;
};

bool ParseMatchId(const std::string& text, int64_t* id) {
  return absl::SimpleAtoi(text, id) && *id > 0;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage("ply COMMAND [ARGS] [FLAGS]; `ply help` lists the commands.");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  if (args.empty() || args[0] == "help") {
    if (args.size() > 1) {
      for (const CommandHelp& c : Commands()) {
        if (args[1] == c.name) {
          std::cout << c.usage << "\n\n" << c.text << std::endl;
          return 0;
        }
      }
      return Usage("no command '" + args[1] + "'");
    }
    PrintHelp(std::cout);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  Cli cli;
  if (command == "games") return cli.Games();
  if (command == "new") return cli.New(args);
  if (command == "list") return cli.List();

  int64_t id = 0;
  const bool needs_id = command == "join" || command == "watch" || command == "record" ||
                        command == "replay" || command == "move";
  if (!needs_id) return Usage("no command '" + command + "'");
  if (args.empty() || !ParseMatchId(args[0], &id)) {
    return Usage(absl::StrCat(command, " needs a match number (`ply list` shows them)"));
  }
  if (command == "join") return cli.Join(id);
  if (command == "watch") return cli.Watch(id);
  if (command == "record") return cli.Record(id);
  if (command == "replay") return cli.Replay(id);
  if (args.size() != 2) return Usage("usage: ply move MATCH MOVE");
  return cli.Move(id, args[1]);
}

}  // namespace
}  // namespace ply::client

int main(int argc, char** argv) { return ply::client::Main(argc, argv); }
