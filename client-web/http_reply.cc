#include "client-web/http_reply.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lobby-client/lobby_link.h"

namespace ply::web {

using nlohmann::json;

int HttpStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 502;
  }
}

std::string JsonText(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(JsonText(body), kJsonType);
}

bool SendEvent(httplib::DataSink& sink, const std::string& event, const json& data) {
  const std::string out = absl::StrCat("event: ", event, "\ndata: ", JsonText(data), "\n\n");
  return sink.write(out.data(), out.size());
}

std::string ErrorText(const absl::Status& status) {
  std::string message(status.message());
  if (client::ReachedNoLobby(status)) {
    message = "the lobby cannot be reached just now; try again in a moment";
  } else if (status.code() == absl::StatusCode::kUnavailable) {
    // The lobby answered: it cannot do this now (its database or bots are away).
    message = absl::StrCat("the lobby cannot do this now: ", message, " (try again shortly)");
  } else if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    message = "the lobby did not answer in time";
  }
  return message;
}

void SendError(httplib::Response& res, const absl::Status& status) {
  SendJson(res, HttpStatus(status.code()),
           {{"error", ErrorText(status)}, {"code", absl::StatusCodeToString(status.code())}});
}

absl::StatusOr<json> Body(const httplib::Request& req) {
  const std::string type = req.get_header_value("Content-Type");
  if (!absl::StartsWith(type, "application/json")) {
    return absl::InvalidArgumentError("send the request as application/json");
  }
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return absl::InvalidArgumentError("the request is not valid JSON");
  return body;
}

}  // namespace ply::web
