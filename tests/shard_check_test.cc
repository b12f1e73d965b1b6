// Could a distributed PostgreSQL (Citus, distributing by match id) take the lobby's schema and
// statements without a redesign? This reads the migrations (the schema) and every statement
// the store prepares (PostgresStore::Statements) and checks, with the rules written below:
//  - every table is classified: distributed by match id (with its distribution column),
//    a reference table (copied to every node), or local to the coordinator;
//  - a distributed table carries its distribution column, and its primary key and unique
//    constraints include it (Citus enforces uniqueness only within a shard);
//  - every statement on distributed tables names one match (or a list of them) by its id, and
//    joins distributed tables only on the match id (co-located), so that it runs on one node;
//    a statement that must read or write across matches is named in kAcrossShards with why
//    and what it costs there. A new statement that crosses shards fails this test until it is
//    made to name its match or is added there with its reason.
// The operator's guide (deploy/README.md, "Beyond one database server") gives the plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lobby-server/storage/postgres/migrations.h"
#include "lobby-server/storage/postgres/postgres_store.h"

namespace ply {
namespace {

// Tables distributed by match id, and their distribution column.
const std::map<std::string, std::string>& Distributed() {
  static const std::map<std::string, std::string> tables = {{"matches", "id"},
                                                            {"seats", "match_id"},
                                                            {"moves", "match_id"},
                                                            {"bot_requests", "match_id"},
                                                            {"match_analyses", "match_id"},
                                                            {"presence", "match_id"}};
  return tables;
}
// Reference tables: small, per player or per pool, copied to every node; a statement may join
// them to any shard.
const std::set<std::string> kReference = {"players", "ratings", "pairing_queue"};
// On the coordinator only.
const std::set<std::string> kLocal = {"schema_migrations"};

// Statements that read or write across matches, on purpose. On Citus each runs on every
// shard in parallel (a read) or as one statement per shard (a write, atomic per shard only).
struct Crossing {
  bool writes;
  const char* why;
};
const std::map<std::string, Crossing>& AcrossShards() {
  static const std::map<std::string, Crossing> statements = {
      {"append_moves",
       {true,
        "group commit: one statement stores the moves of many matches; on Citus the writers "
        "must batch per shard (or commit a move alone), since a batch is atomic per shard only"}},
      {"to_resume", {false, "at start, the active matches with timed work to resume"}},
      {"claim_orphans", {false, "the active matches with timed work whose owner is gone"}},
      {"find_token", {false, "which match a seat token belongs to (a foreign token's error)"}},
      {"holdings", {false, "a creator's quota: their waiting and active matches"}},
      {"address_holdings", {false, "an address's quota: its waiting and active matches"}},
      {"network_bot_seats", {false, "a network's share of the last bot seats: its open matches"}},
      {"bot_seats_in_play", {false, "the lobby-wide cap on bot seats"}},
      {"expire_waiting", {true, "the sweep that cancels waiting matches past their time"}},
      {"abort_unstarted", {true, "the sweep that aborts matches whose first mover never moved"}},
      {"withdraw_bot_requests", {true, "an instance that stops withdraws its bot requests"}},
      {"presence_prune", {true, "presence rows of finished matches are deleted in a sweep"}},
      {"presence_streams", {true, "an instance's periodic beat for all its open streams"}},
      {"presence_closed",
       {true, "an instance that restarts closes the streams it no longer holds, all matches"}},
      {"create_match",
       {true,
        "a new match and its seats in one statement: the id comes from the coordinator's "
        "sequence, then both rows go to the new match's shard (Citus plans the CTEs in turn)"}},
      {"presence_touch", {true, "an instance's periodic beat for all its open streams"}},
      {"player_matches", {false, "a player's recent games (their seats, newest first)"}},
      {"player_game_matches",
       {false, "a player's recent games of one game (their seats, newest first)"}},
      {"rated_seats", {false, "the rated seats of a finished match's players"}},
      {"pair_rated_games",
       {false, "the rated games of two people in the last day (their seats, by player)"}},
      {"first_move_balance", {false, "who moved first in a player's recent games"}},
      {"awaiting_first_move",
       {false, "a match between people waiting for a player's first move (their seats)"}},
      {"no_shows",
       {false, "when a player did not come to, or made no first move in, a match (their seats)"}},
  };
  return statements;
}

std::string Lower(std::string s) {
  absl::AsciiStrToLower(&s);
  return s;
}

// The distributed tables a statement reads or writes.
std::set<std::string> DistributedTablesOf(const std::string& sql) {
  std::set<std::string> found;
  for (const auto& [table, column] : Distributed()) {
    if (std::regex_search(sql, std::regex(absl::StrCat("\\b", table, "\\b")))) {
      found.insert(table);
    }
  }
  return found;
}

// Whether the statement runs on the shard of the matches it names: it pins the distribution
// key to a parameter (= $n, = ANY($n)), and any two distributed tables it touches are either
// each pinned or joined on the match id.
bool NamesItsMatches(const std::string& raw) {
  const std::string sql = Lower(raw);
  const std::set<std::string> tables = DistributedTablesOf(sql);
  if (tables.empty()) return true;
  static const std::regex pin(R"(\b(?:\w+\.)?(?:match_id|id)\s*=\s*(?:any\s*\(\s*)?\$\d+)");
  static const std::regex colocated(
      R"(\b(?:\w+\.)?(?:match_id|id)\s*=\s*(?:\w+\.)?(?:match_id|id)\b)");
  const auto count = [&](const std::regex& r) {
    return std::distance(std::sregex_iterator(sql.begin(), sql.end(), r), std::sregex_iterator());
  };
  // An INSERT of one row whose distribution column is a parameter names its match too.
  static const std::regex insert(R"(insert into (\w+)\s*\(([^)]*)\)\s*values\s*\(([^)]*)\))");
  long inserted = 0;
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), insert); it != std::sregex_iterator();
       ++it) {
    auto d = Distributed().find((*it)[1]);
    if (d == Distributed().end()) continue;
    const std::vector<std::string> columns = absl::StrSplit((*it)[2].str(), ',');
    const std::vector<std::string> values = absl::StrSplit((*it)[3].str(), ',');
    for (size_t i = 0; i < columns.size() && i < values.size(); ++i) {
      if (absl::StripAsciiWhitespace(columns[i]) == d->second &&
          absl::StartsWith(absl::StripAsciiWhitespace(values[i]), "$")) {
        ++inserted;
      }
    }
  }
  const auto pins = count(pin) + inserted;
  if (pins == 0) return false;
  if (tables.size() == 1) return true;
  return pins >= static_cast<long>(tables.size()) ||
         count(colocated) >= static_cast<long>(tables.size()) - 1;
}

bool Writes(const std::string& sql) {
  return std::regex_search(Lower(sql), std::regex(R"(\b(insert|update|delete)\b)"));
}

TEST(ShardCheckTest, TheRulesCatchAStatementThatCrossesShards) {
  EXPECT_TRUE(NamesItsMatches("SELECT ply FROM moves WHERE match_id = $1"));
  EXPECT_TRUE(NamesItsMatches("SELECT * FROM seats WHERE match_id = ANY($1::bigint[])"));
  EXPECT_TRUE(
      NamesItsMatches("SELECT * FROM matches m JOIN seats s ON s.match_id = m.id WHERE m.id = $1"));
  EXPECT_TRUE(NamesItsMatches("SELECT name FROM players WHERE id = $1"));
  EXPECT_FALSE(NamesItsMatches("SELECT count(*) FROM moves WHERE ply = $1")) << "no match named";
  EXPECT_FALSE(NamesItsMatches("UPDATE matches SET status = 3 WHERE status = 1"));
  EXPECT_FALSE(
      NamesItsMatches("SELECT * FROM seats s JOIN moves v ON v.ply = s.seat WHERE s.match_id = $1"))
      << "a join of two distributed tables not on the match id";
  EXPECT_EQ(DistributedTablesOf("SELECT 1 FROM players"), std::set<std::string>{});
  EXPECT_EQ(DistributedTablesOf("SELECT * FROM match_analyses WHERE match_id = $1"),
            std::set<std::string>{"match_analyses"});
}

TEST(ShardCheckTest, EveryTableIsClassifiedAndCarriesItsDistributionColumn) {
  const std::string schema = Lower(absl::StrJoin(lobby::pg::Migrations(), "\n"));
  std::set<std::string> tables;
  static const std::regex create(R"(create table (?:if not exists )?(\w+)\s*\(([^;]*)\);)");
  for (auto it = std::sregex_iterator(schema.begin(), schema.end(), create);
       it != std::sregex_iterator(); ++it) {
    const std::string table = (*it)[1];
    const std::string body = (*it)[2];
    tables.insert(table);
    const bool classified =
        Distributed().contains(table) || kReference.contains(table) || kLocal.contains(table);
    EXPECT_TRUE(classified) << "table " << table
                            << " is new: say how it is placed across database servers here";
    auto d = Distributed().find(table);
    if (d == Distributed().end()) {
      EXPECT_EQ(body.find("references matches"), std::string::npos)
          << table << " refers to matches but is not distributed with them";
      continue;
    }
    EXPECT_TRUE(std::regex_search(body, std::regex(absl::StrCat("\\b", d->second, "\\b"))))
        << table << " lacks its distribution column " << d->second;
    // Its primary key and unique constraints include the distribution column.
    static const std::regex key(R"(primary key\s*\(([^)]*)\))");
    std::smatch k;
    if (std::regex_search(body, k, key)) {
      EXPECT_NE(k[1].str().find(d->second), std::string::npos)
          << table << "'s primary key lacks " << d->second;
    }
    static const std::regex column_key(R"((?:^|,)\s*(\w+)\s+\w+[^,]*\b(primary key|unique)\b)");
    for (auto c = std::sregex_iterator(body.begin(), body.end(), column_key);
         c != std::sregex_iterator(); ++c) {
      const std::string column = (*c)[1];
      if (column == d->second) continue;
      // seats.token_hash: the one known exception (see the operator's guide): the tokens are
      // 128 random bits, so on Citus the constraint becomes (match_id, token_hash).
      if (table == "seats" && column == "token_hash") continue;
      ADD_FAILURE() << table << "." << column << " is " << (*c)[2]
                    << " without the distribution column " << d->second;
    }
  }
  for (const auto& [table, column] : Distributed()) {
    EXPECT_TRUE(tables.contains(table)) << table << " is listed but not in the schema";
  }
}

TEST(ShardCheckTest, EveryStatementNamesItsMatchOrSaysWhyItCrossesShards) {
  std::set<std::string> names;
  int routed = 0, reference = 0, crossing_count = 0;
  for (const auto& [name, sql] : lobby::PostgresStore::Statements()) {
    names.insert(name);
    if (DistributedTablesOf(Lower(sql)).empty()) {
      ++reference;
      continue;
    }
    if (NamesItsMatches(sql)) {
      ++routed;
      continue;
    }
    ++crossing_count;
    auto crossing = AcrossShards().find(name);
    if (crossing == AcrossShards().end()) {
      // The list statements of ListMatches are one per combination of filters.
      if (name.rfind("list_matches", 0) == 0 && !Writes(sql)) continue;
      ADD_FAILURE() << "statement " << name
                    << " crosses shards (it names no match by its id, or joins distributed "
                       "tables on something else): name the match, or add it to AcrossShards "
                       "with why\n"
                    << sql;
      continue;
    }
    EXPECT_EQ(Writes(sql), crossing->second.writes)
        << name << ": AcrossShards says it " << (crossing->second.writes ? "writes" : "reads");
  }
  for (const auto& [name, crossing] : AcrossShards()) {
    EXPECT_TRUE(names.contains(name)) << name << " is in AcrossShards but no longer exists";
  }
  std::printf(
      "%zu statements: %d on match tables name their match (one shard), %d cross shards on "
      "purpose (ListMatches' and those listed), %d touch only reference or local tables\n",
      names.size(), routed, crossing_count, reference);
}

}  // namespace
}  // namespace ply
