#include "lobby-server/storage/postgres/migrations.h"

namespace ply::lobby::pg {

// Schema versions, oldest first. A released entry is never edited: a change is a new entry.
const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> migrations = {
      // 1: matches, their seats, and an append-only move list.
      R"sql(
CREATE TABLE matches (
  id bigserial PRIMARY KEY,
  game text NOT NULL,
  options jsonb NOT NULL DEFAULT '{}',
  status smallint NOT NULL,
  ply integer NOT NULL DEFAULT 0,
  time_initial_ms bigint,
  time_increment_ms bigint NOT NULL DEFAULT 0,
  bot_pacing_ms bigint NOT NULL DEFAULT 0,
  turn_started_ms bigint NOT NULL DEFAULT 0,
  draw_offer smallint NOT NULL DEFAULT -1,
  winner smallint NOT NULL DEFAULT -1,
  end_reason smallint NOT NULL DEFAULT 0,
  result_text text NOT NULL DEFAULT '',
  open_seats smallint NOT NULL,
  bots_only boolean NOT NULL,
  created_ms bigint NOT NULL
);
CREATE INDEX matches_by_status ON matches (status, id DESC);
CREATE INDEX matches_by_game ON matches (game, id DESC);
CREATE TABLE seats (
  match_id bigint NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
  seat smallint NOT NULL,
  kind smallint NOT NULL,
  difficulty text NOT NULL DEFAULT '',
  display_name text NOT NULL DEFAULT '',
  token_hash text UNIQUE,
  clock_ms bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (match_id, seat)
);
CREATE TABLE moves (
  match_id bigint NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
  ply integer NOT NULL,
  seat smallint NOT NULL,
  move text NOT NULL,
  think_ms bigint NOT NULL,
  clock_ms bigint NOT NULL,
  time_ms bigint NOT NULL,
  bot jsonb,
  PRIMARY KEY (match_id, ply)
);
)sql",
      // 2: room on each page for the in-place (HOT) updates every move makes to its match row.
      R"sql(
ALTER TABLE matches SET (fillfactor = 70);
ALTER TABLE seats SET (fillfactor = 70);
)sql",
      // 3: ListMatches answers from an index for every combination of its filters (issue #20:
      // a filtered call read the whole table at 1 M matches). Each combination has an index
      // whose conditions are exactly its filters (leading columns, or the index's predicate)
      // followed by id DESC, the list's order, so a page reads its rows and stops, even when
      // the filters match nothing: open seats and bot-only play are correlated with status in
      // ways the planner cannot estimate, and a scan of a broader index would then read all of
      // it. Open seats exist only while a match waits and bots-only matches are a minority, so
      // the partial indexes stay small; "open" or "bots" alone walk the primary key, where
      // they are common enough to fill a page quickly. No indexed column changes with a move:
      // moves remain HOT updates.
      R"sql(
CREATE INDEX matches_by_game_status ON matches (game, status, id DESC);
CREATE INDEX matches_open_by_game ON matches (game, id DESC) WHERE open_seats > 0;
CREATE INDEX matches_open_by_status ON matches (status, id DESC) WHERE open_seats > 0;
CREATE INDEX matches_open_by_game_status ON matches (game, status, id DESC) WHERE open_seats > 0;
CREATE INDEX matches_bots_by_game ON matches (game, id DESC) WHERE bots_only;
CREATE INDEX matches_bots_by_status ON matches (status, id DESC) WHERE bots_only;
CREATE INDEX matches_bots_by_game_status ON matches (game, status, id DESC) WHERE bots_only;
CREATE INDEX matches_open_bots ON matches (id DESC) WHERE open_seats > 0 AND bots_only;
)sql",
      // 4: several lobby instances. Which instance asked a bot for which ply (the newest ply of
      // each match is kept), so that two instances asking for the same ply can be counted; and
      // the active matches that have timed work, for instances claiming ownerless ones.
      R"sql(
CREATE TABLE bot_requests (
  match_id bigint NOT NULL,
  ply integer NOT NULL,
  owner_pid integer NOT NULL,
  owner_started text NOT NULL,
  asked_ms bigint NOT NULL,
  -- Who had asked for this ply before, when someone asks again (kept by the upsert, which sees
  -- the row as it is then, even when the other asked a moment ago).
  prev_pid integer,
  prev_started text,
  PRIMARY KEY (match_id, ply)
);
CREATE INDEX matches_active ON matches (id) WHERE status = 2;
)sql",
      // 5: quotas. Who created a match (the client) and how many bot seats it has, so that
      // what a client holds, and the bot seats in play, are an index scan; waiting matches by
      // age, for their expiry.
      R"sql(
ALTER TABLE matches ADD COLUMN creator text NOT NULL DEFAULT '',
  ADD COLUMN bot_seats smallint NOT NULL DEFAULT 0;
UPDATE matches SET bot_seats =
  (SELECT count(*) FROM seats WHERE seats.match_id = matches.id AND seats.kind = 2)
  WHERE status IN (1, 2);
CREATE INDEX matches_open_by_creator ON matches (creator) WHERE status IN (1, 2);
CREATE INDEX matches_waiting_by_age ON matches (created_ms) WHERE status = 1;
CREATE INDEX matches_bots_in_play ON matches (id) WHERE status IN (1, 2) AND bot_seats > 0;
)sql",
      // 6: players and their ratings per game (Glicko-2), people and bot levels ("bot:hard")
      // alike. A seat may belong to a player, with the rating it had when the match started and,
      // once a rated match is over, after it.
      R"sql(
CREATE TABLE players (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  key_hash text UNIQUE,
  bot boolean NOT NULL DEFAULT false,
  created_ms bigint NOT NULL,
  last_seen_ms bigint NOT NULL
);
CREATE UNIQUE INDEX players_by_name ON players (lower(name));
CREATE TABLE ratings (
  player_id bigint NOT NULL REFERENCES players (id),
  game text NOT NULL,
  rating double precision NOT NULL DEFAULT 1500,
  deviation double precision NOT NULL DEFAULT 350,
  volatility double precision NOT NULL DEFAULT 0.06,
  games integer NOT NULL DEFAULT 0,
  wins integer NOT NULL DEFAULT 0,
  draws integer NOT NULL DEFAULT 0,
  losses integer NOT NULL DEFAULT 0,
  PRIMARY KEY (player_id, game)
);
CREATE INDEX ratings_by_game ON ratings (game, rating DESC);
ALTER TABLE seats ADD COLUMN player_id bigint REFERENCES players (id),
  ADD COLUMN rating_before integer NOT NULL DEFAULT 0,
  ADD COLUMN deviation_before integer NOT NULL DEFAULT 0,
  ADD COLUMN rating_after integer NOT NULL DEFAULT 0;
CREATE INDEX seats_by_player ON seats (player_id, match_id DESC) WHERE player_id IS NOT NULL;
ALTER TABLE matches ADD COLUMN rated boolean NOT NULL DEFAULT false;
)sql",
      // 7: the pairing queue: one row per waiting player, in a pool (game, options, time
      // control, casual); a pairing writes the match and both rows' seats and tokens at once,
      // and each player's own call reads its row and deletes it.
      R"sql(
CREATE TABLE pairing_queue (
  id bigserial PRIMARY KEY,
  player_id bigint NOT NULL UNIQUE REFERENCES players (id),
  pool text NOT NULL,
  rating double precision NOT NULL,
  joined_ms bigint NOT NULL,
  match_id bigint,
  seat integer,
  seat_token text
);
CREATE INDEX pairing_by_pool ON pairing_queue (pool, rating) WHERE match_id IS NULL;
)sql",
      // 8: presence. Per seat and lobby instance: the WatchMatch streams of the seat holder open
      // there, and when the seat was last seen (a stream opening or closing, a call, or the
      // instance's periodic beat for its open streams, so that the streams of an instance that
      // died stop counting). Written on those events only, never per move or per watcher.
      R"sql(
CREATE TABLE presence (
  match_id bigint NOT NULL,
  seat smallint NOT NULL,
  instance text NOT NULL,
  streams integer NOT NULL DEFAULT 0,
  seen_ms bigint NOT NULL,
  PRIMARY KEY (match_id, seat, instance)
);
CREATE INDEX presence_open_by_instance ON presence (instance) WHERE streams > 0;
)sql",
      // 9: rematches. A finished match's open rematch offer (the seat, and the hash of the
      // offerer's token in the rematch to come) and, once both agreed, the rematch's id.
      R"sql(
ALTER TABLE matches ADD COLUMN rematch_offer smallint NOT NULL DEFAULT -1,
  ADD COLUMN rematch_hash text,
  ADD COLUMN rematch_id bigint;
)sql",
      // 10: post-game analyses: a row claims a match's analysis for one request (others wait
      // for it; a claim not renewed within its lease may be taken over), then holds the result.
      R"sql(
CREATE TABLE match_analyses (
  match_id bigint PRIMARY KEY REFERENCES matches (id) ON DELETE CASCADE,
  holder text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  result jsonb,
  done_at timestamptz
);
)sql",
      // 11: a pairing queue entry lives only as long as its Pair stream: the stream's instance
      // refreshes alive_ms while it waits, and an entry not refreshed is neither paired nor
      // kept. The row holds the hash of the seat token its stream made (the stream keeps the
      // token), never a token. Entries of the old shape belonged to streams of the old binary.
      R"sql(
DELETE FROM pairing_queue;
ALTER TABLE pairing_queue DROP COLUMN seat_token,
  ADD COLUMN token_hash text NOT NULL,
  ADD COLUMN alive_ms bigint NOT NULL;
)sql",
      // 12: quotas per address as well as per player, and registrations per address. A match
      // keeps its creator's address (IPv4, or an IPv6 /64) beside the creator, and a player the
      // address that registered it, so that fresh accounts from one address share its bounds.
      R"sql(
ALTER TABLE matches ADD COLUMN creator_address text NOT NULL DEFAULT '';
CREATE INDEX matches_open_by_address ON matches (creator_address)
  WHERE status IN (1, 2) AND creator_address <> '';
ALTER TABLE players ADD COLUMN created_by text NOT NULL DEFAULT '';
CREATE INDEX players_by_creator ON players (created_by, created_ms) WHERE created_by <> '';
)sql",
      // 13: look-alike names. A player's name skeleton (names.h, NameSkeleton): a new name, or a
      // guest's display name, whose skeleton is a player's is refused. Players' names are ASCII
      // letters, digits and "_-.", whose skeleton this expression computes as NameSkeleton does.
      R"sql(
ALTER TABLE players ADD COLUMN skeleton text NOT NULL DEFAULT '';
UPDATE players SET skeleton =
  replace(replace(translate(lower(name), '10i|_-.', 'loll'), 'rn', 'm'), 'vv', 'w');
CREATE INDEX players_by_skeleton ON players (skeleton);
)sql",
      // 14: analyses made before each move's value came from the judge of the position before
      // it (and before lichess's game accuracy) said things a player could not believe; they
      // are dropped, and the next request judges the match again. Claims in progress stay.
      R"sql(
DELETE FROM match_analyses WHERE result IS NOT NULL;
)sql",
      // 15: the network of a match's creator address (an IPv6 /64's /48; '' for IPv4), whose
      // bot seats the quotas also count when bots are scarce: fresh /64s are free to their
      // holder, and each took the last bot seats again.
      R"sql(
ALTER TABLE matches ADD COLUMN creator_network text NOT NULL DEFAULT '';
CREATE INDEX matches_open_by_network ON matches (creator_network)
  WHERE status IN (1, 2) AND creator_network <> '';
)sql",
      // 16: when a seat's rating was moved. A pair's rated games of the last day were counted
      // by the matches' creation, so games left open for a day before their end were never
      // counted and never counted others; they are counted by when they were rated now (older
      // rows by their creation, as before).
      // And why a rated match's result moved no rating where only the store knows it (the
      // pair's bound), for its final screen.
      R"sql(
ALTER TABLE seats ADD COLUMN rated_ms bigint;
ALTER TABLE matches ADD COLUMN rating_note text NOT NULL DEFAULT '';
)sql",
      // 17: when a seat's player did not come to the match a pairing made (the lobby aborted
      // it): such a player waits before pairing again (players/matchmaker.h).
      R"sql(
ALTER TABLE seats ADD COLUMN no_show_ms bigint;
CREATE INDEX seats_no_shows ON seats (player_id, no_show_ms) WHERE no_show_ms IS NOT NULL;
)sql",
  };
  return migrations;
}

}  // namespace ply::lobby::pg
