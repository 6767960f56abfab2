// A scripted HTTP/1.1 server on 127.0.0.1 for the S3 transport tests: it records every request
// and answers with whatever the test's handler says (a status, XML, a delay, or no answer at all),
// which is how retries, throttling, timeouts, 403s and concurrency are checked without AWS.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trialdb::test {

struct StubRequest {
  std::string method;
  std::string target;                          // path and query, as sent
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // Content-Length bytes after the head (uploads)
};

struct StubReply {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int delay_ms = 0;          // wait before answering
  bool hang = false;         // never answer (until the server stops)
  long content_length = -1;  // >= 0: claim this Content-Length whatever the body (a lying server)
};

class StubHttpServer {
 public:
  using Handler = std::function<StubReply(const StubRequest&)>;
  explicit StubHttpServer(Handler handler);
  ~StubHttpServer();

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<StubRequest> requests() const;
  int max_concurrent() const { return max_concurrent_; }

 private:
  void accept_loop();
  void serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::vector<std::thread> workers_;
  std::vector<int> open_fds_;
  std::vector<StubRequest> requests_;
  int concurrent_ = 0;
  std::atomic<int> max_concurrent_{0};
};

}  // namespace trialdb::test
