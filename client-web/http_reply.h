// ply-web's answers over HTTP: a status's HTTP code and words, JSON bodies, server-sent events,
// and the JSON a request brings. Shared by the gateway's files (gateway.cc, gateway_players.cc).
#ifndef PLY_CLIENT_WEB_HTTP_REPLY_H_
#define PLY_CLIENT_WEB_HTTP_REPLY_H_

#include <httplib.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ply::web {

inline constexpr char kJsonType[] = "application/json; charset=utf-8";

// `body` as JSON text. Text that is not UTF-8 (a query parameter a client made up, echoed in an
// error) comes out with U+FFFD in its place: nlohmann's plain dump() throws on it, and a throw
// in an event stream's provider would end the process.
std::string JsonText(const nlohmann::json& body);
// The HTTP status for a lobby's (or a check's) status code.
int HttpStatus(absl::StatusCode code);
void SendJson(httplib::Response& res, int status, const nlohmann::json& body);
// One server-sent event named `event` carrying `data`; false once the page has gone.
bool SendEvent(httplib::DataSink& sink, const std::string& event, const nlohmann::json& data);
// The lobby's sentence for people, or what went wrong reaching it.
std::string ErrorText(const absl::Status& status);
// {"error", "code"} with the status's HTTP code.
void SendError(httplib::Response& res, const absl::Status& status);
// The body as JSON. Only application/json is taken: a cross-site form cannot send it without a
// CORS preflight, which this server never grants.
absl::StatusOr<nlohmann::json> Body(const httplib::Request& req);

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_HTTP_REPLY_H_
