#include "client-cli/seat_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ply::client {
namespace {

using Json = nlohmann::json;

// The file's content; an empty object when it is missing or unreadable (a damaged file must not
// lock a user out of new matches; it is replaced on the next save).
Json Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Json::object();
  Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : Json::object();
}

// Whether two server keys ("a:1" or "a:1,b:2") name a common lobby instance.
bool Overlap(const std::string& a, const std::string& b) {
  const std::vector<absl::string_view> theirs = absl::StrSplit(b, ',');
  for (absl::string_view x : absl::StrSplit(a, ',')) {
    if (std::find(theirs.begin(), theirs.end(), x) != theirs.end()) return true;
  }
  return false;
}

}  // namespace

std::string SeatStore::DefaultPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return absl::StrCat(xdg, "/ply/seats.json");
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return absl::StrCat(home, "/.config/ply/seats.json");
  return "";
}

std::optional<SeatTicket> SeatStore::Find(const std::string& server, int64_t match_id) const {
  if (path_.empty()) return std::nullopt;
  const Json all = Load(path_);
  const std::string id = std::to_string(match_id);
  // The seat was saved under the lobby as it was named then; a list of its instances names the
  // same lobby if it shares one of them.
  const Json* entry = nullptr;
  for (auto by_server = all.begin(); by_server != all.end(); ++by_server) {
    if (!by_server->is_object() || !by_server->contains(id)) continue;
    if (by_server.key() == server) {
      entry = &(*by_server)[id];
      break;
    }
    if (entry == nullptr && Overlap(by_server.key(), server)) entry = &(*by_server)[id];
  }
  if (entry == nullptr || !entry->is_object()) return std::nullopt;
  SeatTicket t;
  t.match_id = match_id;
  t.seat = entry->value("seat", -1);
  t.token = entry->value("token", "");
  t.name = entry->value("name", "");
  if (t.seat < 0 || t.token.empty()) return std::nullopt;
  return t;
}

absl::Status SeatStore::Save(const std::string& server, const SeatTicket& ticket) {
  if (path_.empty()) {
    return absl::FailedPreconditionError("no HOME or XDG_CONFIG_HOME: nowhere to keep seat tokens");
  }
  Json all = Load(path_);
  Json& entry = all[server][std::to_string(ticket.match_id)];
  entry = {{"seat", ticket.seat}, {"token", ticket.token}, {"name", ticket.name}};
  return Write(all.dump(2) + "\n");
}

std::optional<PlayerLogin> SeatStore::Player(const std::string& server) const {
  if (path_.empty()) return std::nullopt;
  const Json all = Load(path_);
  auto players = all.find("players");
  if (players == all.end() || !players->is_object()) return std::nullopt;
  for (auto it = players->begin(); it != players->end(); ++it) {
    if ((it.key() == server || Overlap(it.key(), server)) && it->is_object() &&
        it->value("key", "") != "") {
      return PlayerLogin{.name = it->value("name", ""), .key = it->value("key", "")};
    }
  }
  return std::nullopt;
}

absl::Status SeatStore::SavePlayer(const std::string& server, const PlayerLogin& player) {
  if (path_.empty()) {
    return absl::FailedPreconditionError("no HOME or XDG_CONFIG_HOME: nowhere to keep the key");
  }
  Json all = Load(path_);
  all["players"][server] = {{"name", player.name}, {"key", player.key}};
  if (!all["keys"].is_object()) all["keys"] = Json::object();
  if (!all["keys"][server].is_object()) all["keys"][server] = Json::object();
  all["keys"][server][absl::AsciiStrToLower(player.name)] = player.key;
  return Write(all.dump(2) + "\n");
}

std::optional<std::string> SeatStore::KnownKey(const std::string& server,
                                               const std::string& name) const {
  if (path_.empty()) return std::nullopt;
  const Json all = Load(path_);
  auto keys = all.find("keys");
  if (keys == all.end() || !keys->is_object()) return std::nullopt;
  const std::string wanted = absl::AsciiStrToLower(name);
  for (auto it = keys->begin(); it != keys->end(); ++it) {
    if ((it.key() != server && !Overlap(it.key(), server)) || !it->is_object()) continue;
    auto key = it->find(wanted);
    if (key != it->end() && key->is_string() && !key->get<std::string>().empty()) {
      return key->get<std::string>();
    }
  }
  return std::nullopt;
}

absl::Status SeatStore::Write(const std::string& text) {
  const std::filesystem::path file(path_);
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot create ", file.parent_path().string(), ": ", ec.message()));
  }
  chmod(file.parent_path().c_str(), 0700);
  // Written to a private temporary file, then renamed over the old one.
  const std::string tmp = path_ + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", tmp, ": ", strerror(errno)));
  fchmod(fd, 0600);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      close(fd);
      return absl::InternalError(absl::StrCat("cannot write ", tmp, ": ", strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path_.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot save ", path_, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace ply::client
