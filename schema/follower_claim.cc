#include "schema/follower_claim.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "schema/database.h"

namespace trialdb {

namespace {

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// Field 22 of /proc/<pid>/stat, the process's start time in clock ticks after boot; 0 when
// there is no such process or no /proc. The command name (field 2) may hold spaces and
// parentheses: the fields after it start after its last ')'.
int64_t process_start(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return std::stoll(field);
  return 0;
}

bool process_alive(int64_t pid, int64_t started) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  return started == 0 || process_start(pid) == started;
}

bool live(const FollowerClaim& c, const std::string& host, double now) {
  if (c.host == host) return process_alive(c.pid, c.started);
  return now - c.heartbeat < kClaimExpirySeconds;
}

std::string utc_time(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

std::string describe(const FollowerClaim& claim) {
  return "ingest --follow, pid " + std::to_string(claim.pid) + " on host " + claim.host + ", since " +
         utc_time(claim.since);
}

std::vector<FollowerClaim> live_followers(Database& db, int64_t trial_id) {
  const std::string host = this_host();
  const double now = unix_now();
  std::vector<FollowerClaim> alive;
  std::vector<FollowerClaim> expired;
  {
    Statement q(db.handle(),
                "SELECT host, pid, started, since, heartbeat FROM trial_follower WHERE trial_id = ?1 ORDER BY since");
    q.bind(1, trial_id);
    while (q.step()) {
      FollowerClaim c{q.text(0), q.int64(1), q.int64(2), q.real(3), q.real(4)};
      (live(c, host, now) ? alive : expired).push_back(std::move(c));
    }
  }
  Statement del(db.handle(), "DELETE FROM trial_follower WHERE trial_id = ?1 AND host = ?2 AND pid = ?3");
  for (const FollowerClaim& c : expired) del.bind(1, trial_id).bind(2, c.host).bind(3, c.pid).run();
  return alive;
}

HeldClaim::HeldClaim(Database& db, int64_t trial_id) : db_(db), trial_id_(trial_id) {
  self_.host = this_host();
  self_.pid = getpid();
  self_.started = process_start(self_.pid);
  self_.since = self_.heartbeat = unix_now();
  Transaction tx(db_);
  // Only while the trial exists: one removed in the meantime leaves held() false.
  Statement q(db_.handle(),
              "INSERT OR REPLACE INTO trial_follower(trial_id, host, pid, started, since, heartbeat) "
              "SELECT ?1, ?2, ?3, ?4, ?5, ?5 WHERE EXISTS (SELECT 1 FROM trial WHERE trial_id = ?1)");
  q.bind(1, trial_id_).bind(2, self_.host).bind(3, self_.pid).bind(4, self_.started).bind(5, self_.since).run();
  tx.commit();
}

HeldClaim::~HeldClaim() {
  try {
    Statement q(db_.handle(), "DELETE FROM trial_follower WHERE trial_id = ?1 AND host = ?2 AND pid = ?3");
    q.bind(1, trial_id_).bind(2, self_.host).bind(3, self_.pid).run();
  } catch (const Error&) {  // it expires on its own
  }
}

void HeldClaim::heartbeat() {
  self_.heartbeat = unix_now();
  Statement q(db_.handle(), "UPDATE trial_follower SET heartbeat = ?4 WHERE trial_id = ?1 AND host = ?2 AND pid = ?3");
  q.bind(1, trial_id_).bind(2, self_.host).bind(3, self_.pid).bind(4, self_.heartbeat).run();
}

bool HeldClaim::held() {
  Statement q(db_.handle(), "SELECT 1 FROM trial_follower WHERE trial_id = ?1 AND host = ?2 AND pid = ?3");
  return q.bind(1, trial_id_).bind(2, self_.host).bind(3, self_.pid).step();
}

}  // namespace trialdb
