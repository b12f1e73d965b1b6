// Seat tokens: 128 random bits from the operating system's CSPRNG, written as text, and the
// one-way hash of a token that is all the database keeps of it.
#ifndef PLY_LOBBY_SERVER_TOKEN_H_
#define PLY_LOBBY_SERVER_TOKEN_H_

#include <string>
#include <string_view>

namespace ply::lobby {

// "ply_" followed by 32 lowercase hex digits.
std::string NewSeatToken();
// Whether `token` has the form NewSeatToken produces (anything else is garbage).
bool IsWellFormedToken(std::string_view token);
// Hex SHA-256 of the token text.
std::string TokenHash(std::string_view token);
// Compares two token hashes in time that does not depend on where they differ.
bool SameTokenHash(std::string_view a, std::string_view b);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_TOKEN_H_
