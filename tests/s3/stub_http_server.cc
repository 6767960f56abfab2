// Scripted loopback HTTP server (see stub_http_server.h). One thread per connection, keep-alive.
#include "stub_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>

namespace trialdb::test {

namespace {

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

StubHttpServer::StubHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw std::runtime_error("stub: socket failed");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0)
    throw std::runtime_error("stub: bind/listen failed");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

StubHttpServer::~StubHttpServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  stop_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

std::vector<StubRequest> StubHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void StubHttpServer::accept_loop() {
  while (!stopping_) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

void StubHttpServer::serve(int fd) {
  // Forget the fd before closing it, so the destructor never shuts down a reused descriptor.
  auto close_conn = [this, fd] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_fds_.erase(std::find(open_fds_.begin(), open_fds_.end(), fd));
    }
    ::close(fd);
  };
  std::string buf;
  char chunk[4096];
  while (!stopping_) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return close_conn();
      buf.append(chunk, static_cast<size_t>(n));
    }
    std::string head = buf.substr(0, end);
    buf.erase(0, end + 4);  // the body, if any, follows (read below)

    StubRequest req;
    size_t line_end = head.find("\r\n");
    std::string first = head.substr(0, line_end);
    size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    for (size_t at = line_end; at != std::string::npos && at < head.size();) {
      size_t next = head.find("\r\n", at + 2);
      std::string line = head.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        size_t v = line.find_first_not_of(' ', colon + 1);
        req.headers[name] = v == std::string::npos ? "" : line.substr(v);
      }
      at = next;
    }

    if (auto length = req.headers.find("content-length"); length != req.headers.end()) {
      const size_t n = std::stoul(length->second);
      while (buf.size() < n) {
        ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
        if (got <= 0) return close_conn();
        buf.append(chunk, static_cast<size_t>(got));
      }
      req.body = buf.substr(0, n);
      buf.erase(0, n);
    }

    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
      max_concurrent_ = std::max(max_concurrent_.load(), ++concurrent_);
    }
    StubReply reply = handler_(req);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (reply.hang) stop_cv_.wait(lock, [this] { return stopping_.load(); });
      else if (reply.delay_ms > 0)
        stop_cv_.wait_for(lock, std::chrono::milliseconds(reply.delay_ms), [this] { return stopping_.load(); });
      --concurrent_;
    }
    if (reply.hang || stopping_) break;

    std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + reason(reply.status) + "\r\n";
    for (const auto& [k, v] : reply.headers) out += k + ": " + v + "\r\n";
    size_t length = reply.content_length >= 0 ? static_cast<size_t>(reply.content_length) : reply.body.size();
    out += "Content-Length: " + std::to_string(length) + "\r\n\r\n";
    if (req.method != "HEAD") out += reply.body;
    if (!send_all(fd, out)) break;
  }
  close_conn();
}

}  // namespace trialdb::test
