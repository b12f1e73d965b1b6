#include "client-cli/help.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "ply_commit.h"  // generated: PLY_COMMIT, the commit built

namespace ply::client {
namespace {

struct CommandHelp {
  const char* name;
  const char* usage;
  const char* text;
};

const std::vector<CommandHelp>& Commands() {
  static const auto* commands = new std::vector<CommandHelp>{
      {"games", "ply games [--json]", "The games the lobby offers, their options and bot levels."},
      {"new",
       "ply new GAME [k=v ...] [--seat1 S] [--seat2 S] [--clock 5+3] [--casual] [--name N] "
       "[--detach]",
       "Creates a match. A seat is `me` (you play it), `open` (someone joins it) or `bot:LEVEL`.\n"
       "Unset seats: the first becomes `me`, the other `open`. With a seat for you it goes\n"
       "straight into play; a bot-vs-bot match is watched. A match between players (logged\n"
       "in, or bot levels) is rated unless --casual. --detach only prints the match number.\n"
       "Examples:\n"
       "  ply new connect4 --seat2 bot:medium\n"
       "  ply new reversi --seat1 bot:easy --seat2 bot:hard\n"
       "  ply new connect4 width=8 cylinder=true --clock 5+3"},
      {"list",
       "ply list [--game G] [--status waiting|active|finished] [--open] [--limit N] [--json]",
       "Matches, newest first (20 unless --limit says otherwise, at most 200), with the date\n"
       "each was created; open seats are marked."},
      {"join", "ply join MATCH [--seat N] [--name NAME]",
       "Takes a seat and plays: --seat 1 is the first player's, --seat 2 the second's; without\n"
       "it, the first open one. If you already hold a seat in MATCH (its token is kept in\n"
       "~/.config/ply/seats.json), resumes it. A full match is watched instead. With --json:\n"
       "take the seat and print the match without playing (then `ply move`)."},
      {"watch", "ply watch MATCH [--json]",
       "Watches a match live to its end: the board, each move, and for bots the depth, score\n"
       "and nodes their search reached (scores from the first player's side: + is good for\n"
       "the first player; against a person, shown when the game ends). q stops watching."},
      {"record", "ply record MATCH [--format text|FORMAT] [--json]",
       "The moves of a match in the game's notation, or in one of its record formats (ply\n"
       "games lists them; --format pdn for draughts).\n"
       "--json includes the match's analysis, once it has one, as \"analysis\"."},
      {"replay", "ply replay MATCH",
       "Steps through a match's moves (n/p, arrows, q); once the match is analysed (ply\n"
       "analyze), each move shows its mark and the best move."},
      {"analyze", "ply analyze MATCH [--json]",
       "Post-game analysis by the lobby's bots: every move with the evaluation before and after\n"
       "it from the mover's side (game units and win chance), the best move and its line, and a\n"
       "mark: ?! inaccuracy, ? mistake, ?? blunder (= where both sides of the move are proven,\n"
       "so the verdict is exact); then each player's accuracy and marks. A finished match is\n"
       "analysed once and kept; an active one only if every seat is a bot. A progress bar runs\n"
       "meanwhile (on a terminal)."},
      {"move", "ply move MATCH MOVE [--json]",
       "Plays one move for the seat you hold in MATCH (for scripts); prints the board after it.\n"
       "ply resign and ply draw do the rest of what a board does."},
      {"resign", "ply resign MATCH [--json]",
       "Resigns the game you play in MATCH, without asking (for scripts; on the board, type\n"
       "'resign')."},
      {"draw", "ply draw MATCH [--json]",
       "Offers your opponent a draw in MATCH, or accepts the draw they offered (for scripts;\n"
       "on the board, type 'draw'). A bot answers at once, and its answer is printed; a\n"
       "person's stands until they accept it or move."},
      {"claim", "ply claim MATCH [--draw]",
       "When your opponent is to move in a match without clocks and has been gone (no client\n"
       "connected, no call) for the lobby's bound (2 minutes unless it says otherwise), ends it\n"
       "as your win, or a draw with --draw. Before that, says how long is left. Typing 'claim'\n"
       "or 'claim draw' on the board does the same."},
      {"login", "ply login NAME [--key KEY]",
       "Registers you as player NAME on this lobby (2 to 24 letters, digits, '_', '-', '.';\n"
       "unique ignoring case) and keeps your player key in ~/.config/ply/seats.json (0600).\n"
       "From then on the seats you take are yours: rated games move your rating. On another\n"
       "machine, log in again with the key the first login printed: ply login NAME --key KEY.\n"
       "The file keeps the key of every player logged in here: ply login NAME switches back."},
      {"play", "ply play GAME [k=v ...] [--clock 3+2] [--casual] [--bot]",
       "Quick pairing (log in first): waits for the player with the closest rating who asks\n"
       "for the same game, options and clock, accepting a wider gap the longer it waits, and\n"
       "plays as soon as one comes (colours by who began more recent games). When nobody comes\n"
       "in 20 s, the lobby offers the bot level nearest your rating; --bot plays it at once.\n"
       "Ctrl-C leaves the queue."},
      {"rematch", "ply rematch MATCH [--json]",
       "After a game, offers your opponent a new match with the sides swapped (the same game,\n"
       "options, clock, rated or casual), or accepts their offer; a bot accepts at once. In a\n"
       "terminal it waits on the final screen and plays the rematch when they agree (q takes\n"
       "the offer back). The final screen of a game offers the same with `r`."},
      {"whois", "ply whois NAME [--json]",
       "A player's ratings per game (? while provisional), games, wins, draws and losses, and\n"
       "when they were last seen. Bot levels are players too: ply whois bot:hard."},
      {"history", "ply history [NAME] [--game G] [--limit N] [--json]",
       "A player's matches, newest first (yours without NAME)."},
      {"top", "ply top GAME [--limit N] [--json]",
       "The leaderboard of GAME: settled ratings (deviation 110 or less), people and bot\n"
       "levels alike."},
      {"help", "ply help [COMMAND]", "This help, or one command's."},
  };
  return *commands;
}

}  // namespace

void PrintHelp(std::ostream& out) {
  out << "ply: play and watch board games on a ply lobby.\n\nCommands:\n";
  for (const CommandHelp& c : Commands()) out << "  " << c.usage << "\n";
  out << "\nWhile playing, type a move in the game's notation, or: moves, help, resign (asks "
         "first),\n"
         "draw, claim (when the opponent has left), quit. The bell rings when the opponent moves "
         "after a long wait (--bell_after).\n"
         "Server: --server HOST:PORT or $PLY_SERVER (default "
      << kDefaultServer
      << "); a lobby of several\n"
         "  instances as HOST:PORT,HOST:PORT or dns:///NAME:PORT: calls go round the instances\n"
         "  and move on from one that is gone.\n"
         "TLS: --tls verifies the lobby against the system's trusted roots (the CA bundle of the\n"
         "  ca-certificates package; $GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names another file);\n"
         "  --tls_ca FILE verifies against that CA instead; --tls_cert and --tls_key for a lobby\n"
         "  that wants a client certificate.\n"
         "Colour and Unicode on a terminal; plain ASCII with NO_COLOR=1 or when piped.\n"
         "`ply help COMMAND` explains one command; `ply --version` says which ply this is.\n";
}

std::string Version() {
  return absl::StrCat("ply ", PLY_VERSION, " (commit ", PLY_COMMIT, ", ", PLY_BUILD_TYPE,
                      " build)\n");
}

bool PrintCommandHelp(const std::string& command, std::ostream& out) {
  for (const CommandHelp& c : Commands()) {
    if (command == c.name) {
      out << c.usage << "\n\n" << c.text << std::endl;
      return true;
    }
  }
  return false;
}

}  // namespace ply::client
