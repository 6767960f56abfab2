// A test connection with the trialdb functions registered, and helpers that run one query and
// give its first value as text ("NULL" for NULL, "ERROR: <message>" for an error).
#pragma once
#include <sqlite3.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sqlext/register.h"

namespace trialdb::test {

class SqlConn {
 public:
  SqlConn() {
    sqlite3_open(":memory:", &db_);
    EXPECT_EQ(trialdb_register_sql_functions(db_), SQLITE_OK);
  }
  ~SqlConn() { sqlite3_close(db_); }
  sqlite3* db() { return db_; }

  // First column of the first row as text; blobs are bound to ?1, ?2... in order.
  std::string q(const std::string& sql, const std::vector<std::string>& blobs = {}) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      return std::string("ERROR: ") + sqlite3_errmsg(db_);
    for (size_t i = 0; i < blobs.size(); ++i)
      sqlite3_bind_blob(st, static_cast<int>(i + 1), blobs[i].data(), static_cast<int>(blobs[i].size()), SQLITE_STATIC);
    std::string out;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out = sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" : std::string(reinterpret_cast<const char*>(t));
    } else if (rc == SQLITE_DONE) {
      out = "NO ROW";
    } else {
      out = std::string("ERROR: ") + sqlite3_errmsg(db_);
    }
    sqlite3_finalize(st);
    return out;
  }

  // Runs statements; "" or the error message.
  std::string exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return "";
    std::string e = err ? err : "?";
    sqlite3_free(err);
    return e;
  }

  // All rows, columns joined with '|', rows with '\n'.
  std::string rows(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      return std::string("ERROR: ") + sqlite3_errmsg(db_);
    std::string out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (!out.empty()) out += '\n';
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        if (c) out += '|';
        const unsigned char* t = sqlite3_column_text(st, c);
        out += t ? reinterpret_cast<const char*>(t) : "NULL";
      }
    }
    if (rc != SQLITE_DONE) out = std::string("ERROR: ") + sqlite3_errmsg(db_);
    sqlite3_finalize(st);
    return out;
  }

  double d(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    double r = -12345.678;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      r = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return r;
  }

 private:
  sqlite3* db_ = nullptr;
};

inline bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// A test with a connection of its own; q() runs one query as SqlConn::q does.
class SqlTest : public ::testing::Test {
 protected:
  SqlConn c;
  std::string q(const std::string& sql) { return c.q(sql); }
};

}  // namespace trialdb::test
