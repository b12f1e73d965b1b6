// Runs a ply server (ply-bot, ply-lobby) as a real child process for integration tests: starts
// it with --port=0-style flags, reads the "listening on HOST:PORT" line it prints on stdout,
// waits until its gRPC health service says SERVING, and kills it when the test is done (or when
// the test process dies: the child gets SIGKILL with its parent).
#ifndef PLY_TESTS_PROCESS_HELPER_H_
#define PLY_TESTS_PROCESS_HELPER_H_

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace ply::testing {

class ServerProcess {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

  // Starts `binary` with `args`; ready once it has printed "listening on HOST:PORT" and its
  // health service answers SERVING, all within `timeout`. `credentials` are for a server that
  // speaks TLS (plaintext when null).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      absl::Duration timeout = absl::Seconds(15),
      std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr) {
    const absl::Time deadline = absl::Now() + timeout;
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = Spawn(binary, args, deadline);
    if (!server.ok()) return server.status();
    (*server)->channel_ = grpc::CreateChannel(
        (*server)->address_, credentials ? credentials : grpc::InsecureChannelCredentials());
    while (absl::Now() < deadline) {
      absl::StatusOr<ServingStatus> health = (*server)->Health(absl::Milliseconds(500));
      if (health.ok() && *health == grpc::health::v1::HealthCheckResponse::SERVING) {
        return server;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return absl::DeadlineExceededError(absl::StrCat(binary, " never reported SERVING"));
  }

  // Starts a server that is not a gRPC one (ply-web): ready once it has printed its "listening
  // on" line.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartPlain(
      const std::string& binary, const std::vector<std::string>& args,
      absl::Duration timeout = absl::Seconds(15)) {
    return Spawn(binary, args, absl::Now() + timeout);
  }

  ~ServerProcess() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(stdout_fd_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // "127.0.0.1:PORT", for channels.
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The "listening on ..." line the server printed (it may name more endpoints).
  const std::string& ready_line() const { return ready_line_; }
  // A channel to this process alone (no retries, no load balancing).
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  void Signal(int signo) { kill(pid_, signo); }

  // Waits for the process to end: its exit code, 128 + signal when a signal ended it, or
  // nullopt when it is still running after `timeout`.
  std::optional<int> WaitExit(absl::Duration timeout) {
    if (exited_) return exit_code_;
    const absl::Time deadline = absl::Now() + timeout;
    do {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (absl::Now() < deadline);
    return std::nullopt;
  }

  // What the standard health service says for the whole server.
  absl::StatusOr<ServingStatus> Health(absl::Duration timeout) {
    auto stub = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = stub->Check(&context, request, &response);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return response.status();
  }

 private:
  // The process, started, with the port of its "listening on [scheme://]HOST:PORT" line.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Spawn(const std::string& binary,
                                                              const std::vector<std::string>& args,
                                                              absl::Time deadline) {
    // Built before fork: the child of a threaded process may only make async-signal-safe calls.
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
    pid_t pid = fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    close(out[1]);
    auto server = std::unique_ptr<ServerProcess>(new ServerProcess(pid, out[0]));
    absl::StatusOr<std::string> line = server->ReadLineContaining("listening on ", deadline);
    if (!line.ok()) return line.status();
    server->ready_line_ = *line;
    std::string rest = line->substr(line->find("listening on ") + 13);
    rest = rest.substr(0, rest.find_first_of(" \n"));
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos) return absl::InternalError("no port in: " + *line);
    server->port_ = std::stoi(rest.substr(colon + 1));
    server->address_ = absl::StrCat("127.0.0.1:", server->port_);
    return server;
  }

  ServerProcess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}

  absl::StatusOr<std::string> ReadLineContaining(const std::string& marker, absl::Time deadline) {
    std::string buffer;
    for (;;) {
      size_t newline;
      while ((newline = buffer.find('\n')) != std::string::npos) {
        std::string line = buffer.substr(0, newline);
        buffer.erase(0, newline + 1);
        if (line.find(marker) != std::string::npos) return line;
      }
      int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (wait_ms <= 0) break;
      pollfd p{.fd = stdout_fd_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, wait_ms) <= 0) break;
      char chunk[512];
      ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
      if (n <= 0) break;  // the process closed stdout: it died
      buffer.append(chunk, static_cast<size_t>(n));
    }
    return absl::DeadlineExceededError(
        absl::StrCat("the server never printed '", marker, "' (output so far: ", buffer, ")"));
  }

  pid_t pid_;
  int stdout_fd_;
  int port_ = 0;
  std::string address_;
  std::string ready_line_;
  std::shared_ptr<grpc::Channel> channel_;
  bool exited_ = false;
  int exit_code_ = 0;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_PROCESS_HELPER_H_
