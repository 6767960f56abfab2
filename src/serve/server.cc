// server.h: routes, the security every response carries, and errors as JSON. Only GET is
// served: the app's embedded files (web/assets.h) and the JSON endpoints (api.h); any other
// path is 404 and any other method 405.
#include "src/serve/server.h"

#include <httplib.h>

#include <functional>
#include <iostream>
#include <set>

#include "src/output.h"
#include "src/serve/api.h"
#include "src/serve/connection_pool.h"
#include "web/assets.h"

namespace trialdb::serve {

namespace {

// Nothing is read from a request's body; one larger than this is refused before it is read.
constexpr size_t kMaxRequestBody = 64 << 10;
// Requests served at once (each holds one connection while it runs).
constexpr size_t kConnections = 4;

enum HttpStatus : int {
  kOk = 200,
  kBadRequest = 400,
  kUnauthorized = 401,
  kForbidden = 403,
  kNotFound = 404,
  kMethodNotAllowed = 405,
  kServerError = 500,
  kUnavailable = 503,
};

// Sent with every response: no script but the app's own files, no framing, no content sniffing.
const httplib::Headers& security_headers() {
  static const httplib::Headers headers = {
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
  };
  return headers;
}

void send_json(httplib::Response& res, const std::string& text, int status = kOk) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(text, "application/json");
}

void send_json(httplib::Response& res, const Json& j, int status = kOk) { send_json(res, json_text(j), status); }

bool is_busy(int sqlite_code) {
  const int primary = sqlite_code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

// Runs an endpoint on a borrowed connection, answering its errors as JSON: a bad parameter or
// SQL 400, a database locked by a writer 503 (the page says so and tries again).
void answer(ConnectionPool& pool, httplib::Response& res, const std::function<std::string(ReadConnection&)>& endpoint) {
  try {
    ConnectionPool::Lease c = pool.borrow();
    c->set_time_limit(std::chrono::milliseconds(kQueryTimeLimitMs));
    send_json(res, endpoint(*c));
  } catch (const Error& e) {
    if (is_busy(e.sqlite_code()))
      send_json(res, {{"error", "the database is locked by a writer (a one-shot ingest); try again"}, {"locked", true}},
                kUnavailable);
    else send_json(res, {{"error", e.what()}}, e.kind() == ErrorKind::kInvalidInput ? kBadRequest : kServerError);
  } catch (const std::exception& e) {
    send_json(res, {{"error", e.what()}}, kServerError);
  }
}

bool is_loopback(const std::string& host) { return host == kLoopback || host == "localhost" || host == "::1"; }

// The Host headers a loopback server answers: a page on another site that resolves its own name
// to 127.0.0.1 (DNS rebinding) is refused.
std::set<std::string> loopback_hosts(const std::string& host, int port) {
  std::string p(1, ':');  // appended: `":" + number` trips GCC 12's -Wrestrict at -O3
  p += std::to_string(port);
  return {host + p, "127.0.0.1" + p, "localhost" + p, "[::1]" + p};
}

// Constant-time comparison, so a guess learns nothing from how long the refusal took.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void route(httplib::Server& svr, ConnectionPool& pool, const ServeOptions& o) {
  using Endpoint = std::function<std::string(ReadConnection&, const Params&)>;
  using DocumentEndpoint = std::function<Json(ReadConnection&, const Params&)>;
  const auto document = [](DocumentEndpoint e) -> Endpoint {
    return [e](ReadConnection& c, const Params& p) { return json_text(e(c, p)); };
  };
  const std::vector<std::pair<std::string, Endpoint>> endpoints = {
      {"/api/info", document([dbs = o.databases](ReadConnection& c, const Params&) { return api_info(c, dbs); })},
      {"/api/status", document([](ReadConnection& c, const Params&) {
         try {
           return api_status(c);
         } catch (const Error& e) {
           if (!is_busy(e.sqlite_code())) throw;
           return Json{{"fingerprint", nullptr}, {"locked", true}};
         }
       })},
      {"/api/trials", document(api_trials)},
      {"/api/tensors", document(api_tensors)},
      {"/api/scalars", [&pool](ReadConnection& c, const Params& p) { return api_scalars(c, p, &pool); }},
      {"/api/scalars/at",
       document([&pool](ReadConnection& c, const Params& p) { return api_scalars_at(c, p, &pool); })},
      {"/api/distribution", document(api_distribution)},
      {"/api/histogram", document(api_histogram)},
      {"/api/heatmap", document(api_heatmap)},
      {"/api/findings", document(api_findings)},
      {"/api/sql", document(api_sql)},
  };
  for (const auto& entry : endpoints)  // not a structured binding: clang 14 cannot capture one
    svr.Get(entry.first, [&pool, endpoint = entry.second](const httplib::Request& req, httplib::Response& res) {
      answer(pool, res, [&](ReadConnection& c) { return endpoint(c, req.params); });
    });
  svr.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    const web::Asset* a = web::find_asset(req.path);
    if (!a) {
      send_json(res, {{"error", "not found"}}, kNotFound);
      return;
    }
    res.set_content(std::string(a->bytes), std::string(web::content_type(a->path)));
  });
  const auto refuse = [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Allow", "GET, HEAD");
    send_json(res, {{"error", "read-only: only GET is served"}}, kMethodNotAllowed);
  };
  svr.Post(".*", refuse).Put(".*", refuse).Delete(".*", refuse).Patch(".*", refuse).Options(".*", refuse);
}

}  // namespace

void run_server(const ServeOptions& o) {
  ConnectionPool pool(o.databases, kConnections);  // opens every database now: errors come before the URL
  {
    ConnectionPool::Lease c = pool.borrow();
    Statement dup(c->handle(), "SELECT trial FROM trials GROUP BY trial HAVING count(*) > 1 ORDER BY trial");
    std::vector<std::string> names;
    while (dup.step()) names.push_back(dup.text(0));
    if (!names.empty())
      throw Error(ErrorKind::kInvalidInput, "trial names in more than one database: " + cli::join(names, ", ") +
                                                " (rename them with trialdb rename so each names one trial)");
  }
  httplib::Server svr;
  svr.set_default_headers(security_headers());
  svr.set_payload_max_length(kMaxRequestBody);
  route(svr, pool, o);
  const int port = o.port == 0 ? svr.bind_to_any_port(o.host) : (svr.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) throw Error(ErrorKind::kIo, "cannot listen on " + o.host + ":" + std::to_string(o.port));
  const std::set<std::string> hosts = loopback_hosts(o.host, port);
  const bool check_host = is_loopback(o.host);
  svr.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    // No compression: cpp-httplib compresses at brotli's or gzip's highest level, which for a
    // 2 MB chart costs seconds of CPU, far more than sending it. The library decides from the
    // request's Accept-Encoding and offers no switch, so the header is dropped (the request is
    // the server's own object; the handler only gets a const view of it).
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    if (check_host && !hosts.count(req.get_header_value("Host"))) {
      send_json(res, {{"error", "unexpected Host header"}}, kForbidden);
      return httplib::Server::HandlerResponse::Handled;
    }
    // The app's files hold no data: only the endpoints ask for the token.
    if (!o.token.empty() && req.path.starts_with("/api/") &&
        !same_secret(req.get_header_value("Authorization"), "Bearer " + o.token)) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_json(res, {{"error", "a bearer token is required"}}, kUnauthorized);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  if (!check_host)
    std::cerr << "trialdb serve: warning: listening on " << o.host << ": whoever reaches this machine's port " << port
              << " can read these databases" << (o.token.empty() ? " (give --token to require a bearer token)" : "")
              << "\n";
  const std::string shown_host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  std::cout << "trialdb serve: http://" << shown_host << ":" << port << "/"
            << (o.token.empty() ? "" : "#token=" + o.token) << "  (read-only; Ctrl-C stops it)" << std::endl;
  if (!svr.listen_after_bind()) throw Error(ErrorKind::kIo, "the server stopped: cannot accept connections");
}

}  // namespace trialdb::serve
