// Who follows a trial: `trialdb ingest --follow` holds a claim on its trial (table
// trial_follower, schema.sql) for as long as it runs, so that `rm` and `rename` can refuse to
// pull the trial from under it, naming the follower.
//
// A claim is live while its follower is: on the follower's own host, while a process with its
// pid and start time exists (a crashed follower's claim expires at once, a reused pid does not
// keep it alive); seen from another host, while its heartbeat is younger than
// kClaimExpirySeconds. Expired claims are deleted by whoever finds them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trialdb {

class Database;

// How long a follower on another host stays live without a heartbeat. Followers beat at every
// pass, and at least every kHeartbeatSeconds while a pass waits.
inline constexpr double kClaimExpirySeconds = 120;
inline constexpr double kHeartbeatSeconds = 10;

struct FollowerClaim {
  std::string host;
  int64_t pid = 0;
  int64_t started = 0;              // clock ticks after boot (/proc/<pid>/stat), 0 where unknown
  double since = 0, heartbeat = 0;  // unix times
};

// "ingest --follow, pid 123 on host h, since 2026-11-26 12:00:00 UTC"
std::string describe(const FollowerClaim& claim);

// The live claims on a trial; deletes the expired ones (call it in a write transaction).
std::vector<FollowerClaim> live_followers(Database& db, int64_t trial_id);

// This process's claim on a trial, taken on construction (its own transaction) and given back
// on destruction. heartbeat() keeps it live for other hosts; held() says whether it still
// exists (false: the trial was removed, or the claim was taken for expired).
class HeldClaim {
 public:
  HeldClaim(Database& db, int64_t trial_id);
  ~HeldClaim();
  HeldClaim(const HeldClaim&) = delete;
  HeldClaim& operator=(const HeldClaim&) = delete;

  void heartbeat();
  bool held();

 private:
  Database& db_;
  int64_t trial_id_;
  FollowerClaim self_;
};

}  // namespace trialdb
