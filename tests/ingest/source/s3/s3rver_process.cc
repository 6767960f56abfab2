// s3rver child process and signed uploader for the S3 tests (see s3rver_process.h).
#include "s3rver_process.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "s3/s3_config.h"

namespace fs = std::filesystem;

namespace trialdb::test {

namespace {

bool port_accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

uint64_t S3rverProcess::bytes_sent() const {
  std::ifstream in(dir_ + "/bytes_sent");
  uint64_t total = 0;
  in >> total;
  return total;
}

std::optional<std::string> find_node() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / "node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

S3rverProcess::S3rverProcess(const std::string& node, const std::string& s3rver_js) {
  char tmpl[] = "/tmp/trialdb-s3rver-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  dir_ = tmpl;
  const std::string data = dir_ + "/data", log = dir_ + "/s3rver.log";
  fs::create_directories(data);

  // Everything the child needs is prepared before fork: after it, only exec-safe calls.
  // The shim keeps s3rver's DES continuation tokens working on OpenSSL 3 (see the file).
  std::vector<std::string> args = {node, "-r", std::string(TRIALDB_S3_TEST_DIR) + "/s3rver_des_shim.js", s3rver_js};
  for (const char* a : {"--directory", data.c_str(), "--address", "127.0.0.1", "--port", "0", "--silent"})
    args.emplace_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot create " + log);
  const pid_t parent = ::getpid();

  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(log_fd);
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);

  // s3rver prints "S3rver listening on 127.0.0.1:<port>" once bound (port 0 = the OS picks, so
  // parallel test runs never collide); then the port must actually accept.
  const std::regex listening(R"(listening on [0-9.]+:([0-9]+))");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("s3rver exited during start-up; its log:\n" + read_log());
    }
    std::smatch m;
    std::string text = read_log();
    if (port_ == 0 && std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
    if (port_ != 0 && port_accepts(port_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string text = read_log();
  stop();
  throw std::runtime_error("s3rver did not start within 30 s; its log:\n" + text);
}

S3rverProcess::~S3rverProcess() { stop(); }

std::string S3rverProcess::read_log() const {
  std::ifstream in(dir_ + "/s3rver.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void S3rverProcess::stop() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGTERM);  // its process group: node and anything it started
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    dir_.clear();
  }
}

S3Uploader::S3Uploader(std::string endpoint, std::string key, std::string secret)
    : endpoint_(std::move(endpoint)), userpwd_(key + ":" + secret) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  curl_ = curl_easy_init();
}

S3Uploader::~S3Uploader() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

long S3Uploader::request(const std::string& url, const std::string& body) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  curl_slist* headers = curl_slist_append(nullptr, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  headers = curl_slist_append(headers, "Expect:");
  std::string sink;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
  curl_easy_setopt(c, CURLOPT_USERPWD, userpwd_.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(
      c, CURLOPT_WRITEFUNCTION, +[](char*, size_t s, size_t n, void*) { return s * n; });
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  long status = 0;
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

long S3Uploader::create_bucket(const std::string& bucket) {
  return request(endpoint_ + "/" + s3_uri_encode(bucket, false), "");
}

long S3Uploader::put(const std::string& bucket, const std::string& key, const std::string& body) {
  return request(endpoint_ + "/" + s3_uri_encode(bucket, false) + "/" + s3_uri_encode(key, true), body);
}

size_t S3Uploader::put_tree(const std::string& local_dir, const std::string& bucket, const std::string& prefix) {
  size_t n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(local_dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string rel = fs::relative(entry.path(), local_dir).generic_string();
    std::string key = prefix.empty() ? rel : prefix + "/" + rel;
    long status = put(bucket, key, body);
    if (status != 200) throw std::runtime_error("PUT " + bucket + "/" + key + " answered " + std::to_string(status));
    ++n;
  }
  return n;
}

}  // namespace trialdb::test
