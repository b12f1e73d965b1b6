// A throwaway PostgreSQL cluster for tests: initdb into a fresh temporary folder, a server on a
// free loopback port, databases created on demand, everything removed at the end. As root
// (PostgreSQL refuses to run as root) the server runs as the `postgres` user.
#ifndef PLY_TESTS_POSTGRES_HELPER_H_
#define PLY_TESTS_POSTGRES_HELPER_H_

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace ply::testing {

// A port nobody listens on right now (the kernel's choice for an ephemeral bind).
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class PostgresCluster {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresCluster>> Start() {
    auto c = std::unique_ptr<PostgresCluster>(new PostgresCluster());
    const char* env_bin = std::getenv("PLY_PG_BIN");
    c->bin_ = env_bin != nullptr ? env_bin : "/usr/lib/postgresql/15/bin";
    if (!std::filesystem::exists(absl::StrCat(c->bin_, "/initdb"))) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no PostgreSQL server binaries in ", c->bin_, " (install the postgresql package)"));
    }
    char dir[] = "/tmp/ply-pg-XXXXXX";
    if (mkdtemp(dir) == nullptr) return absl::InternalError("mkdtemp failed");
    c->dir_ = dir;
    if (geteuid() == 0) {
      passwd* pw = getpwnam("postgres");
      if (pw == nullptr) return absl::FailedPreconditionError("no postgres user to run as");
      if (chown(dir, pw->pw_uid, pw->pw_gid) != 0) return absl::InternalError("chown failed");
      c->as_ = "runuser -u postgres -- ";
    }
    c->port_ = FreePort();
    if (int rc = c->Run(absl::StrCat(c->bin_, "/initdb -D ", c->dir_,
                                     "/data -A trust -U postgres --no-sync >", c->dir_,
                                     "/initdb.log 2>&1"));
        rc != 0) {
      return absl::InternalError(absl::StrCat("initdb failed (see ", c->dir_, "/initdb.log)"));
    }
    if (absl::Status s = c->StartServer(); !s.ok()) return s;
    // pg_ctl detaches the server, so a test killed by a signal (a ctest timeout, ^C) would leave
    // it running: a watchdog stops it and removes the folder once this process is gone.
    c->Run(
        absl::StrCat("nohup sh -c 'while kill -0 ", getpid(), " 2>/dev/null; do sleep 1; ",
                     "done; ", c->as_, c->bin_, "/pg_ctl -D ", c->dir_,
                     "/data -m immediate stop; rm -rf ", c->dir_, "' </dev/null >/dev/null 2>&1 &"),
        /*as_postgres=*/false);
    return c;
  }

  ~PostgresCluster() {
    Run(absl::StrCat(bin_, "/pg_ctl -D ", dir_, "/data -m immediate stop >/dev/null 2>&1"));
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Starts the server again after StopServer (same data, same port).
  absl::Status StartServer() {
    // fsync off: tests need durability against a killed lobby, not against a power cut.
    const std::string options =
        absl::StrCat("-p ", port_, " -k ", dir_, " -c listen_addresses=127.0.0.1 -c fsync=off");
    if (Run(absl::StrCat(bin_, "/pg_ctl -D ", dir_, "/data -o '", options, "' -l ", dir_,
                         "/server.log -w -t 30 start >/dev/null 2>&1")) != 0) {
      return absl::InternalError(absl::StrCat("pg_ctl start failed (see ", dir_, "/server.log)"));
    }
    return absl::OkStatus();
  }
  // A fast shutdown: clients are disconnected at once.
  absl::Status StopServer() {
    if (Run(absl::StrCat(bin_, "/pg_ctl -D ", dir_, "/data -m fast -w stop >/dev/null 2>&1")) !=
        0) {
      return absl::InternalError("pg_ctl stop failed");
    }
    return absl::OkStatus();
  }

  // Creates database `name` and returns its connection string.
  absl::StatusOr<std::string> CreateDatabase(const std::string& name) {
    if (Run(absl::StrCat(bin_, "/createdb -h 127.0.0.1 -p ", port_, " -U postgres ", name,
                         " >/dev/null 2>&1")) != 0) {
      return absl::InternalError(absl::StrCat("createdb ", name, " failed"));
    }
    return Url(name);
  }
  std::string Url(const std::string& db) const {
    return absl::StrCat("host=127.0.0.1 port=", port_, " dbname=", db, " user=postgres");
  }
  // Runs one SQL command with psql; returns its unaligned output.
  std::string Query(const std::string& db, const std::string& sql) const {
    std::string out;
    const std::string psql =
        std::filesystem::exists(absl::StrCat(bin_, "/psql")) ? absl::StrCat(bin_, "/psql") : "psql";
    const std::string cmd = absl::StrCat(psql, " -X -A -t -h 127.0.0.1 -p ", port_,
                                         " -U postgres -d ", db, " -c \"", sql, "\" 2>&1");
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }
  int port() const { return port_; }
  const std::string& bin() const { return bin_; }

 private:
  PostgresCluster() = default;
  int Run(const std::string& command, bool as_postgres = true) const {
    return std::system(((as_postgres ? as_ : "") + command).c_str());
  }

  std::string bin_;
  std::string dir_;
  std::string as_;
  int port_ = 0;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_POSTGRES_HELPER_H_
