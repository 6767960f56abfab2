// The rules tests' helpers: fixture databases made by the built CLI (`trialdb ingest`), as a user
// would, `trialdb rules` run on them, and the findings they recorded read back.
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "schema/database.h"
#include "tests/common/temp_dir.h"

namespace trialdb::test::rules_cli {

using trialdb::Statement;
using trialdb::test::TempDir;

inline const std::string kBin = TRIALDB_BIN;
inline const std::string kFixtures = TRIALDB_FIXTURES;

using Key = std::tuple<int64_t, std::string, std::string>;  // step, tensor, worker
using Findings = std::map<std::string, std::set<Key>>;      // per rule

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct RunResult {
  int status = -1;
  std::string out, err;
};

// Runs a shell command line; captures stdout and stderr.
inline RunResult sh(const std::string& cmd, const TempDir& tmp) {
  std::string out = tmp / "stdout.txt", err = tmp / "stderr.txt";
  int rc = std::system((cmd + " >" + quote(out) + " 2>" + quote(err)).c_str());
  RunResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream o(out), e(err);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  r.out = so.str();
  r.err = se.str();
  return r;
}

inline void ingest(const std::string& trial_dir, const std::string& db, const std::string& name, const TempDir& tmp) {
  RunResult r =
      sh(quote(kBin) + " ingest " + quote(trial_dir) + " --db " + quote(db) + " --name " + quote(name) + " -q", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
}

inline RunResult rules(const std::string& db, const std::string& args, const TempDir& tmp) {
  return sh(quote(kBin) + " rules --db " + quote(db) + " " + args, tmp);
}

inline std::string zoo_params() {
  std::ifstream in(kFixtures + "/zoo.params");
  std::string line, args;
  while (std::getline(in, line))
    if (!line.empty()) args += " --param " + quote(line);
  return args;
}

inline Findings recorded(const std::string& db_path, const std::string& trial) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  Findings f;
  {
    Statement q(db,
                "SELECT rule, step, tensor, worker FROM rule_findings WHERE trial = ?1 AND rule <> 'stalled_training'");
    q.bind(1, trial);
    while (q.step()) f[q.text(0)].insert({q.int64(1), q.text(2), q.text(3)});
  }
  sqlite3_close(db);
  return f;
}

inline int64_t count_findings(const std::string& db_path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  int64_t n = -1;
  {
    Statement q(db, "SELECT count(*) FROM rule_findings");
    if (q.step()) n = q.int64(0);
  }
  sqlite3_close(db);
  return n;
}

inline Findings golden(const std::string& file) {
  std::ifstream in(kFixtures + "/" + file);
  EXPECT_TRUE(in) << file;
  nlohmann::json j = nlohmann::json::parse(in);
  Findings f;
  for (auto& [rule, list] : j.items())
    for (auto& e : list) f[rule].insert({e[0].get<int64_t>(), e[1].get<std::string>(), e[2].get<std::string>()});
  return f;
}

// A readable difference, rule by rule.
inline std::string diff(const Findings& got, const Findings& want) {
  std::string s;
  std::set<std::string> names;
  for (auto& [r, _] : got) names.insert(r);
  for (auto& [r, _] : want) names.insert(r);
  for (const auto& r : names) {
    std::set<Key> g = got.count(r) ? got.at(r) : std::set<Key>{}, w = want.count(r) ? want.at(r) : std::set<Key>{};
    for (const auto& k : g)
      if (!w.count(k))
        s += r + ": extra [" + std::to_string(std::get<0>(k)) + ", " + std::get<1>(k) + ", " + std::get<2>(k) + "]\n";
    for (const auto& k : w)
      if (!g.count(k))
        s += r + ": missing [" + std::to_string(std::get<0>(k)) + ", " + std::get<1>(k) + ", " + std::get<2>(k) + "]\n";
  }
  return s;
}

}  // namespace trialdb::test::rules_cli
