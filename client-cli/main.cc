// ply: the terminal client of the ply lobby. Lists games and matches, creates and joins matches
// and plays them on a live board, watches matches (with what each bot's search saw), prints and
// steps through records, and plays single moves from scripts with the seat token it keeps.
#include <google/protobuf/util/json_util.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client-cli/analysis_view.h"
#include "client-cli/help.h"
#include "client-cli/render.h"
#include "client-cli/requests.h"
#include "client-cli/screen.h"
#include "client-cli/seat_store.h"
#include "client-cli/session.h"
#include "common/credentials.h"
#include "engine/core/display_text.h"
#include "engine/core/flags_usage.h"
#include "engine/registry/registry.h"
#include "lobby-client/lobby_link.h"
#include "lobby-client/match_model.h"

ABSL_FLAG(std::string, server, "",
          "Lobby address HOST:PORT; several instances of one lobby as HOST:PORT,HOST:PORT, or "
          "dns:///NAME:PORT for every address of a name (default: $PLY_SERVER, else "
          "127.0.0.1:50050, the local stack).");
ABSL_FLAG(bool, tls, false,
          "Use TLS, verifying the lobby against the system's trusted roots (or --tls_ca).");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA to verify a TLS lobby against (also PLY_TLS_CA); implies --tls.");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for a lobby that requires one.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(bool, json, false,
          "Print JSON instead of text (games, list, new, join, move, draw, resign, claim, "
          "record, analyze, watch: one event per line).");
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
ABSL_FLAG(int, limit, 20, "list: at most this many matches (1 to 200).");
ABSL_FLAG(std::string, seat, "",
          "join: the seat to take, counted from 1 (1 or 2); default: the first open one.");
ABSL_FLAG(std::string, name, "", "new, join: your name at the table (default: $USER).");
ABSL_FLAG(std::string, format, "text",
          "record: text, or one of the game's record formats (ply games lists them: pdn for "
          "draughts).");
ABSL_FLAG(bool, casual, false, "new, play: an unrated game (rated is the default for players).");
ABSL_FLAG(bool, draw, false, "claim: claim a draw instead of the win.");
ABSL_FLAG(bool, bot, false,
          "play: when nobody near your rating comes in time, play the bot level the lobby "
          "offers instead of waiting on.");
ABSL_FLAG(std::string, key, "",
          "login: your player key (printed by your first login), to log in on another machine.");
ABSL_FLAG(absl::Duration, bell_after, absl::Seconds(10),
          "new, join: ring the terminal's bell when the opponent moves after you waited this "
          "long; 0 turns the bell off.");

namespace ply::client {
namespace {

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

// TLS with --tls or a CA (by flag or PLY_TLS_CA); a bad file ends the program with its reason.
std::shared_ptr<grpc::ChannelCredentials> Credentials() {
  std::string ca = absl::GetFlag(FLAGS_tls_ca);
  if (ca.empty()) {
    const char* env = std::getenv("PLY_TLS_CA");
    if (env != nullptr) ca = env;
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> c =
      MakeChannelCredentials({.ca_file = ca,
                              .cert_file = absl::GetFlag(FLAGS_tls_cert),
                              .key_file = absl::GetFlag(FLAGS_tls_key),
                              .system_roots = absl::GetFlag(FLAGS_tls)});
  if (!c.ok()) {
    std::cerr << "ply: TLS: " << c.status().message() << std::endl;
    std::exit(2);
  }
  return *c;
}

LobbyTarget Target() {
  absl::StatusOr<LobbyTarget> target = ParseServers(Server());
  if (!target.ok()) {
    std::cerr << "ply: --server: " << target.status().message() << std::endl;
    std::exit(2);
  }
  return *target;
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
  Cli() : lobby_(Target(), Credentials()), store_(SeatStore::DefaultPath()) {
    // Logged in on this lobby: the seats taken are the player's.
    if (std::optional<PlayerLogin> me = store_.Player(lobby_.address())) {
      me_ = *me;
      lobby_.set_player_key(me->key);
    }
  }

  int Login(const std::vector<std::string>& args) {
    if (args.size() != 1) return Usage("usage: ply login NAME [--key KEY]");
    // A player this file logged in before on this lobby logs in again with the key it kept.
    std::string key = absl::GetFlag(FLAGS_key);
    if (key.empty()) key = store_.KnownKey(lobby_.address(), args[0]).value_or("");
    lobby_.set_player_key(key);
    absl::StatusOr<v1::LoginResponse> r = lobby_.Login(args[0]);
    if (!r.ok()) return Fail(r.status());
    const PlayerLogin login{.name = r->player().name(), .key = key.empty() ? r->player_key() : key};
    if (absl::Status saved = store_.SavePlayer(lobby_.address(), login); !saved.ok()) {
      return Fail(saved);
    }
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*r) << std::endl;
      return 0;
    }
    if (key.empty()) {
      std::cout << "Registered as " << DisplayText(login.name) << " on " << lobby_.address()
                << ".\nYour player key (shown once; kept in " << store_.path() << "):\n  "
                << login.key << "\nOn another machine: ply login " << login.name << " --key "
                << login.key << "\n";
    } else {
      std::cout << "Logged in as " << DisplayText(login.name) << " on " << lobby_.address()
                << ".\n";
    }
    return 0;
  }

  int Play(const std::vector<std::string>& args) {
    if (me_.key.empty()) return Usage("pairing is for players: ply login NAME first");
    // The game, its options and the clock as `new` reads them.
    absl::StatusOr<NewMatch> m = NewMatchRequest({.args = args,
                                                  .seat1 = "me",
                                                  .seat2 = "open",
                                                  .opt = absl::GetFlag(FLAGS_opt),
                                                  .clock = absl::GetFlag(FLAGS_clock),
                                                  .pacing_ms = -1,
                                                  .name = me_.name});
    if (!m.ok()) return Usage(std::string(m.status().message()));
    v1::PairRequest request;
    *request.mutable_spec() = m->request.spec();
    if (m->request.has_time_control()) {
      *request.mutable_time_control() = m->request.time_control();
    }
    request.set_casual(absl::GetFlag(FLAGS_casual));
    std::cout << "Looking for an opponent in " << request.spec().name() << " as "
              << DisplayText(me_.name) << " (Ctrl-C leaves the queue)..." << std::endl;
    std::optional<v1::PairFound> found;
    std::string take_bot;
    absl::Status s = lobby_.Pair(request, [&](const v1::PairEvent& e) {
      if (e.has_waiting() && isatty(STDOUT_FILENO)) {
        std::cout << "\r  waiting " << e.waiting().waited_ms() / 1000 << " s, rating gap +-"
                  << e.waiting().rating_gap() << "   " << std::flush;
      } else if (e.has_bot_offer()) {
        const std::string bot = absl::StrCat("bot:", e.bot_offer().level());
        if (absl::GetFlag(FLAGS_bot)) {
          std::cout << "\nNobody near your rating came: playing " << bot << " ("
                    << e.bot_offer().rating() << ") instead." << std::endl;
          take_bot = bot;
          return false;
        }
        std::cout << "\nNobody near your rating yet. `ply play " << request.spec().name()
                  << " --bot` would play " << bot << " (" << e.bot_offer().rating()
                  << ") instead; still looking." << std::endl;
      } else if (e.has_paired()) {
        found = e.paired();
      }
      return true;
    });
    if (!take_bot.empty()) {
      absl::SetFlag(&FLAGS_seat1, "me");
      absl::SetFlag(&FLAGS_seat2, take_bot);
      return New(args);
    }
    if (found) {
      const SeatTicket ticket{.match_id = found->match_id(),
                              .seat = found->seat(),
                              .token = found->seat_token(),
                              .name = me_.name};
      if (absl::Status saved = store_.Save(lobby_.address(), ticket); !saved.ok()) {
        return Fail(saved);
      }
      std::cout << "\nPaired with " << DisplayText(found->opponent()) << " ("
                << found->opponent_rating() << (found->opponent_provisional() ? "?" : "")
                << "): match " << found->match_id() << ", you are seat " << found->seat() + 1 << "."
                << std::endl;
      return Session(found->match_id(), ticket);
    }
    return Fail(s.ok() ? absl::UnavailableError("the lobby ended the pairing without a match") : s);
  }

  int Whois(const std::vector<std::string>& args) {
    if (args.size() != 1) return Usage("usage: ply whois NAME");
    absl::StatusOr<v1::Player> p = lobby_.GetPlayer(args[0]);
    if (!p.ok()) return Fail(p.status());
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*p) << std::endl;
      return 0;
    }
    std::cout << PlayerText(*p, absl::LocalTimeZone()) << std::flush;
    return 0;
  }

  int History(const std::vector<std::string>& args) {
    if (args.size() > 1) return Usage("usage: ply history [NAME] [--game G]");
    v1::ListPlayerMatchesRequest request;
    request.set_name(args.empty() ? me_.name : args[0]);
    if (request.name().empty()) return Usage("whose history? ply history NAME (or ply login)");
    request.set_game(absl::GetFlag(FLAGS_game));
    const int limit = std::clamp(absl::GetFlag(FLAGS_limit), 1, 200);
    request.set_page_size(limit);
    return PrintMatches(lobby_.ListPlayerMatches(request), limit);
  }

  int Top(const std::vector<std::string>& args) {
    if (args.size() != 1) return Usage("usage: ply top GAME");
    absl::StatusOr<v1::LeaderboardResponse> board =
        lobby_.Leaderboard(args[0], std::clamp(absl::GetFlag(FLAGS_limit), 1, 100));
    if (!board.ok()) return Fail(board.status());
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*board) << std::endl;
      return 0;
    }
    std::cout << LeaderboardTable(args[0], *board) << std::flush;
    return 0;
  }

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
    std::cout << GamesTable(*games, OutputLook()) << std::flush;
    return 0;
  }

  int New(const std::vector<std::string>& args) {
    absl::StatusOr<NewMatch> m = NewMatchRequest({.args = args,
                                                  .seat1 = absl::GetFlag(FLAGS_seat1),
                                                  .seat2 = absl::GetFlag(FLAGS_seat2),
                                                  .opt = absl::GetFlag(FLAGS_opt),
                                                  .clock = absl::GetFlag(FLAGS_clock),
                                                  .pacing_ms = absl::GetFlag(FLAGS_pacing_ms),
                                                  .name = PlayerName()});
    if (!m.ok()) return Usage(std::string(m.status().message()));
    // `play --casual --bot` comes here with the same flag: the bot game stays unrated too.
    m->request.set_casual(absl::GetFlag(FLAGS_casual));
    absl::StatusOr<v1::CreateMatchResponse> created = lobby_.CreateMatch(m->request);
    if (!created.ok()) return Fail(created.status());
    const int64_t id = created->match().id();
    std::optional<SeatTicket> ticket;
    if (m->mine >= 0) {
      ticket = SeatTicket{
          .match_id = id, .seat = m->mine, .token = created->seat_token(), .name = PlayerName()};
      if (absl::Status s = store_.Save(lobby_.address(), *ticket); !s.ok()) {
        std::cerr << "ply: warning: " << s.message() << " (`ply join " << id
                  << "` will not find your seat)" << std::endl;
      }
    }
    return Created(created->match(), ticket);
  }

  // What `new` does with the match it made: print it, or play or watch it.
  int Created(const v1::Match& match, const std::optional<SeatTicket>& ticket) {
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(match) << std::endl;
      return 0;
    }
    if (absl::GetFlag(FLAGS_detach)) {
      std::cout << match.id() << std::endl;
      return 0;
    }
    if (!ticket) {
      bool open = false;
      for (const v1::Seat& s : match.seats()) open |= !s.taken();
      if (open) {
        std::cout << "Match " << match.id() << " created; players join with `ply join "
                  << match.id() << "`, anyone watches with `ply watch " << match.id() << "`."
                  << std::endl;
        return 0;
      }
    }
    return Session(match.id(), ticket);
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
    const int limit = std::clamp(absl::GetFlag(FLAGS_limit), 1, 200);
    request.set_page_size(limit);
    return PrintMatches(lobby_.ListMatches(request), limit);
  }

  // A list of matches as a table (or JSON), or the error that came instead.
  int PrintMatches(const absl::StatusOr<v1::ListMatchesResponse>& list, int limit) {
    if (!list.ok()) return Fail(list.status());
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*list) << std::endl;
      return 0;
    }
    std::cout << MatchesTable(*list, limit, absl::LocalTimeZone()) << std::flush;
    return 0;
  }

  int Join(int64_t id) {
    absl::StatusOr<int> seat = ParseSeatFlag(absl::GetFlag(FLAGS_seat));
    if (!seat.ok()) return Usage(std::string(seat.status().message()));
    std::optional<SeatTicket> ticket = store_.Find(lobby_.address(), id);
    // Asked for the other seat while holding one: resuming the held seat silently played the
    // side not asked for.
    if (ticket && *seat >= 0 && *seat != ticket->seat) {
      return Fail(absl::FailedPreconditionError(
          absl::StrCat("you already hold seat ", ticket->seat + 1, " of match ", id, "; `ply join ",
                       id, "` resumes it (a player holds one seat of a match)")));
    }
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
      if (*seat >= 0) {
        if (absl::Status s = CheckSeat(*match, *seat); !s.ok()) return Fail(s);
      }
      v1::JoinMatchRequest request;
      request.set_match_id(id);
      request.set_seat(*seat);
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
    return Session(id, ticket);
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
    return Session(id, std::nullopt);
  }

  int Record(int64_t id) {
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    if (const std::string format = absl::GetFlag(FLAGS_format); format != "text") {
      return FormattedRecord(*m, format);
    }
    if (absl::GetFlag(FLAGS_json)) {
      std::string json = ToJson(*m);
      // The match's fields, and its analysis beside them once it has one.
      if (std::optional<v1::MatchAnalysis> a = StoredAnalysis(id); a && json.size() > 1) {
        json.pop_back();
        json += absl::StrCat(",\"analysis\":", ToJson(*a), "}");
      }
      std::cout << json << std::endl;
      return 0;
    }
    std::string error;
    const std::string text = RecordText(*m, absl::LocalTimeZone(), &error);
    if (!error.empty()) return Fail(absl::DataLossError(error));
    std::cout << text << std::flush;
    return 0;
  }

  // The match in one of its game's record formats (the registry writes it: PDN for draughts).
  int FormattedRecord(const v1::Match& m, const std::string& format) {
    const GameInfo* info = FindGame(m.spec().name());
    std::vector<std::string> formats = {"text"};
    if (info != nullptr)
      formats.insert(formats.end(), info->record_formats.begin(), info->record_formats.end());
    if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
      return Usage(absl::StrCat(m.spec().name(), " has no record format '", format,
                                "'; its formats: ", absl::StrJoin(formats, ", ")));
    }
    std::vector<std::string> moves;
    for (const v1::MoveRecord& mv : m.moves()) moves.push_back(mv.move());
    RecordHeader header{.event = absl::StrCat("ply match ", m.id()), .site = lobby_.address()};
    if (m.created_ms() > 0) {
      // The day in UTC, for a record read anywhere.
      header.date =
          absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(m.created_ms()), absl::UTCTimeZone());
    }
    if (m.seats_size() == 2) {
      header.players = {m.seats(0).display_name(), m.seats(1).display_name()};
    }
    // A match ended with no result is not a draw: the format writes what the moves show ("*"
    // for a game still going on).
    if (HasResult(m)) header.winner = m.result().winner();
    absl::StatusOr<std::string> record = ExportRecord(m.spec().name(), format, moves, header);
    if (!record.ok()) return Fail(record.status());
    std::cout << *record;
    if (!record->empty() && record->back() != '\n') std::cout << "\n";
    return 0;
  }

  int Replay(int64_t id) {
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    std::optional<v1::MatchAnalysis> analysis = StoredAnalysis(id);
    return RunReplay(*m, OutputLook(), isatty(STDOUT_FILENO), analysis ? &*analysis : nullptr);
  }

  // Asks the lobby to analyse the match (or returns the analysis it keeps), with a progress
  // bar on a terminal.
  int Analyze(int64_t id) {
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    v1::AnalyzeMatchRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    auto reader = lobby_.stub()->AnalyzeMatch(&context, request);
    const bool bar = isatty(STDERR_FILENO) && !absl::GetFlag(FLAGS_json);
    v1::AnalyzeMatchEvent e;
    std::optional<v1::MatchAnalysis> analysis;
    while (reader->Read(&e)) {
      if (e.has_analysis()) analysis = e.analysis();
      if (!bar || !e.has_progress()) continue;
      // The line is overwritten in place: padded so that a shorter one leaves nothing behind.
      std::string line = ProgressText(e.progress());
      if (line.size() < 90) line.resize(90, ' ');
      std::cerr << "\r" << line << std::flush;
    }
    if (bar) std::cerr << "\n";
    grpc::Status s = reader->Finish();
    if (!s.ok()) {
      return Fail(absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message()));
    }
    if (!analysis) return Fail(absl::InternalError("the lobby sent no analysis"));
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*analysis) << std::endl;
      return 0;
    }
    std::cout << AnalysisText(*m, *analysis, OutputLook()) << std::flush;
    return 0;
  }

  // The analysis the lobby keeps for the match, if any; none when it cannot be read (a lobby
  // without analyses, say): the record and replay go on without it.
  std::optional<v1::MatchAnalysis> StoredAnalysis(int64_t id) {
    absl::StatusOr<std::optional<v1::MatchAnalysis>> a = lobby_.StoredAnalysis(id);
    return a.ok() ? *a : std::nullopt;
  }

  // The win (or --draw) of a match whose opponent, to move without a clock, has gone.
  int Claim(int64_t id) {
    absl::StatusOr<SeatTicket> ticket = HeldSeat(id);
    if (!ticket.ok()) return Fail(ticket.status());
    absl::StatusOr<v1::Match> m = lobby_.ClaimVictory(id, absl::GetFlag(FLAGS_draw), ticket->token);
    if (!m.ok()) return Fail(m.status());
    return PrintEnd(*m, ticket->seat);
  }

  // The seat held in match `id`, or the error that says none is.
  absl::StatusOr<SeatTicket> HeldSeat(int64_t id) {
    if (std::optional<SeatTicket> ticket = store_.Find(lobby_.address(), id)) return *ticket;
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return m.status();
    return absl::FailedPreconditionError(absl::StrCat("you hold no seat in match ", id, " on ",
                                                      lobby_.address(), " (`ply join ", id,
                                                      "` takes one)"));
  }

  // The match as it ended for the seat (or as JSON).
  int PrintEnd(const v1::Match& m, int seat) {
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(m) << std::endl;
      return 0;
    }
    for (const std::string& l : GameOverLines(m, seat)) std::cout << l << "\n";
    return 0;
  }

  // Gives up the match for the seat held (for scripts: no question asked).
  int Resign(int64_t id) {
    absl::StatusOr<SeatTicket> ticket = HeldSeat(id);
    if (!ticket.ok()) return Fail(ticket.status());
    absl::StatusOr<v1::Match> m = lobby_.Resign(id, ticket->token);
    if (!m.ok()) return Fail(m.status());
    return PrintEnd(*m, ticket->seat);
  }

  // Offers a draw, or accepts the opponent's. A bot answers at once: its answer is waited for
  // (a few seconds at most) and printed; a person's stands until they answer or move.
  int Draw(int64_t id) {
    absl::StatusOr<SeatTicket> ticket = HeldSeat(id);
    if (!ticket.ok()) return Fail(ticket.status());
    absl::StatusOr<v1::Match> m = lobby_.OfferDraw(id, ticket->token);
    if (!m.ok()) return Fail(m.status());
    const int other = 1 - ticket->seat;
    if (other < 0 || other >= m->seats_size()) {
      return Fail(absl::InternalError("the lobby sent a match without the opponent's seat"));
    }
    const bool bot = m->seats(other).kind() == v1::SEAT_KIND_BOT;
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (bot && m->status() == v1::MATCH_STATUS_ACTIVE && m->draw_offer() == ticket->seat &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));
      absl::StatusOr<v1::Match> now = lobby_.GetMatch(id);
      if (!now.ok()) return Fail(now.status());
      m = std::move(now);
    }
    if (m->status() == v1::MATCH_STATUS_FINISHED) return PrintEnd(*m, ticket->seat);
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*m) << std::endl;
      return 0;
    }
    // As the lobby names a bot in its own notices: "Yellow (bot, hard)".
    const v1::Seat& seat = m->seats(other);
    const std::string them = absl::StrCat(
        seat.side(), " (",
        bot ? absl::StrCat("bot, ", seat.difficulty())
            : DisplayText(seat.display_name().empty() ? "someone" : seat.display_name()),
        ")");
    if (m->draw_offer() == ticket->seat) {
      std::cout << "Draw offered in match " << id << "; it stands until " << them
                << " accepts it or moves." << std::endl;
    } else {
      std::cout << them << " declines the draw; the game goes on." << std::endl;
    }
    return 0;
  }

  int Move(int64_t id, const std::string& move) {
    // The match first: for one that does not exist, that is the thing to say.
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
    if (!m.ok()) return Fail(m.status());
    std::optional<SeatTicket> ticket = store_.Find(lobby_.address(), id);
    if (!ticket) {
      return Fail(absl::FailedPreconditionError(absl::StrCat("you hold no seat in match ", id,
                                                             " on ", lobby_.address(),
                                                             " (`ply join ", id, "` takes one)")));
    }
    if (m->status() == v1::MATCH_STATUS_ACTIVE && m->to_move() != ticket->seat) {
      MatchModel view;
      (void)view.Reset(*m, absl::Now());
      return Fail(absl::FailedPreconditionError(absl::StrCat(
          "not your turn: ",
          view.SideAndPlayer(m->to_move(), absl::StrCat("seat ", m->to_move() + 1, ", ")),
          " is to move")));
    }
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
    MatchModel view;
    if (absl::Status s = view.Reset(r->match(), absl::Now()); !s.ok()) return Fail(s);
    const Look look = OutputLook();
    std::cout << "Played " << r->move().move() << " (move " << r->move().ply() << ").\n"
              << RenderBoard(
                     view.game(), look,
                     {.flip = FlipsFor(m->spec().name(), ticket->seat), .over = view.over()});
    if (view.over()) {
      for (const std::string& l : GameOverLines(view.match(), ticket->seat)) std::cout << l << "\n";
    } else {
      std::cout << view.SideAndPlayer(view.match().to_move()) << " to move.\n";
    }
    return 0;
  }

  // Offers (or accepts) a rematch of a finished match of ours. In a terminal, waits on the
  // match's final screen for the answer and plays the rematch; otherwise says where it stands.
  int Rematch(int64_t id) {
    std::optional<SeatTicket> ticket = store_.Find(lobby_.address(), id);
    if (!ticket) {
      return Fail(absl::FailedPreconditionError(
          absl::StrCat("you hold no seat in match ", id, " on ", lobby_.address(),
                       ": only its players can offer a rematch")));
    }
    if (!absl::GetFlag(FLAGS_json) && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO)) {
      // Refused at once (a match under way, say) rather than on a screen that waits.
      absl::StatusOr<v1::Match> m = lobby_.GetMatch(id);
      if (!m.ok()) return Fail(m.status());
      if (m->status() != v1::MATCH_STATUS_FINISHED) {
        return Fail(absl::FailedPreconditionError(
            absl::StrCat("match ", id, " is not over: a rematch is offered after the game")));
      }
      return Session(id, ticket, /*offer_rematch=*/true);
    }
    absl::StatusOr<v1::OfferRematchResponse> r = lobby_.OfferRematch(id, ticket->token);
    if (!r.ok()) return Fail(r.status());
    if (r->rematch_id() > 0) {
      const SeatTicket next{.match_id = r->rematch_id(),
                            .seat = r->seat(),
                            .token = r->seat_token(),
                            .name = ticket->name};
      if (absl::Status s = store_.Save(lobby_.address(), next); !s.ok()) return Fail(s);
    }
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(*r) << std::endl;
    } else if (r->rematch_id() > 0) {
      std::cout << "Rematch agreed: match " << r->rematch_id() << ", you are seat " << r->seat() + 1
                << " (`ply join " << r->rematch_id() << "` plays it)." << std::endl;
    } else {
      std::cout << "Rematch of match " << id << " offered; it stands until your opponent answers"
                << " (`ply rematch " << id << "` again once they accept)." << std::endl;
    }
    return 0;
  }

 private:
  int Session(int64_t id, const std::optional<SeatTicket>& ticket, bool offer_rematch = false) {
    return RunSession(lobby_, {.match_id = id,
                               .seat = ticket,
                               .look = OutputLook(),
                               .tty = static_cast<bool>(isatty(STDOUT_FILENO)),
                               .bell_after = absl::GetFlag(FLAGS_bell_after),
                               .store = &store_,
                               .offer_rematch = offer_rematch});
  }

  LobbyClient lobby_;
  SeatStore store_;
  // The player logged in on this lobby, if any.
  PlayerLogin me_;
};

bool ParseMatchId(const std::string& text, int64_t* id) {
  return absl::SimpleAtoi(text, id) && *id > 0;
}

// `ply --help`, `ply -h`, `ply COMMAND --help`: the same as `ply help [COMMAND]` (absl's own
// --help lists flags, not commands; --helpfull still does that). -1 when the arguments ask for
// no help.
int HelpAsked(int argc, char** argv) {
  bool asked = false;
  std::string command;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      asked = true;
    } else if (command.empty() && !arg.empty() && arg[0] != '-') {
      command = arg;
    }
  }
  if (!asked) return -1;
  if (command.empty() || command == "help") {
    PrintHelp(std::cout);
    return 0;
  }
  if (PrintCommandHelp(command, std::cout)) return 0;
  return Usage("no command '" + command + "'");
}

// What is wrong with the flags list, history and top read, if anything: a count below one listed
// one match and hinted --limit 5, and a game nobody can play listed none.
std::string ListFlagsProblem() {
  if (absl::GetFlag(FLAGS_limit) < 1) return "--limit is a count of at least 1";
  const std::string game = absl::GetFlag(FLAGS_game);
  if (game.empty() || FindGame(game) != nullptr) return "";
  std::vector<std::string> names;
  for (const GameInfo& g : ListGames()) names.emplace_back(g.name);
  return absl::StrCat("--game: no game '", DisplayText(game),
                      "'; the games: ", absl::StrJoin(names, ", "));
}

int Main(int argc, char** argv) {
  if (const int helped = HelpAsked(argc, argv); helped >= 0) return helped;
  SetFlagsUsage("ply COMMAND [ARGS] [FLAGS]; `ply help` lists the commands.", Version);
  std::vector<char*> positional = ply::ParseFlags(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  if (args.empty() || args[0] == "help") {
    if (args.size() > 1) {
      return PrintCommandHelp(args[1], std::cout) ? 0 : Usage("no command '" + args[1] + "'");
    }
    PrintHelp(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "version") {
    std::cout << Version();
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (const std::string bad = ListFlagsProblem(); !bad.empty()) return Usage(bad);
  Cli cli;
  if (command == "games") return cli.Games();
  if (command == "new") return cli.New(args);
  if (command == "list") return cli.List();
  if (command == "login") return cli.Login(args);
  if (command == "play") return cli.Play(args);
  if (command == "whois") return cli.Whois(args);
  if (command == "history") return cli.History(args);
  if (command == "top") return cli.Top(args);

  int64_t id = 0;
  const bool needs_id = command == "join" || command == "watch" || command == "record" ||
                        command == "replay" || command == "move" || command == "claim" ||
                        command == "rematch" || command == "analyze" || command == "resign" ||
                        command == "draw";
  if (!needs_id) return Usage("no command '" + command + "'");
  if (args.empty() || !ParseMatchId(args[0], &id)) {
    return Usage(absl::StrCat(command, " needs a match number (`ply list` shows them)"));
  }
  if (command == "join") return cli.Join(id);
  if (command == "watch") return cli.Watch(id);
  if (command == "record") return cli.Record(id);
  if (command == "replay") return cli.Replay(id);
  if (command == "claim")
    return args.size() == 1 ? cli.Claim(id) : Usage("usage: ply claim MATCH [--draw]");
  if (command == "rematch") return cli.Rematch(id);
  if (command == "resign" || command == "draw") {
    if (args.size() != 1) return Usage(absl::StrCat("usage: ply ", command, " MATCH"));
    return command == "resign" ? cli.Resign(id) : cli.Draw(id);
  }
  if (command == "analyze") return cli.Analyze(id);
  if (args.size() != 2) return Usage("usage: ply move MATCH MOVE");
  return cli.Move(id, args[1]);
}

}  // namespace
}  // namespace ply::client

int main(int argc, char** argv) { return ply::client::Main(argc, argv); }
