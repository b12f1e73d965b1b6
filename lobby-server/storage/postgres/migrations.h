// The lobby's schema, as versioned migrations: Migrate() applies, in order, every entry past
// the version the database records. A released entry is never edited (a database that applied
// it would not see the change): a change to the schema is a new entry at the end.
#ifndef PLY_LOBBY_SERVER_STORAGE_POSTGRES_MIGRATIONS_H_
#define PLY_LOBBY_SERVER_STORAGE_POSTGRES_MIGRATIONS_H_

#include <string>
#include <vector>

namespace ply::lobby::pg {

// Schema versions, oldest first: entry v - 1 takes the schema from version v - 1 to v.
const std::vector<std::string>& Migrations();

}  // namespace ply::lobby::pg

#endif  // PLY_LOBBY_SERVER_STORAGE_POSTGRES_MIGRATIONS_H_
