// The error convention (schema/status.h) and how the database layer follows it: every SQLite
// failure is an Error of kind kDatabase naming the database file, quoting the statement's SQL
// and carrying SQLite's extended result code.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "schema/database.h"
#include "schema/status.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;

TEST(Status, PrintsFileStepAndCause) {
  EXPECT_TRUE(Status().is_ok());
  EXPECT_TRUE(Status::ok().is_ok());
  Status s = Status::invalid("bad CRC");
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(s.to_string(), "bad CRC");
  EXPECT_EQ(s.at("index/x.json").to_string(), "index/x.json: bad CRC");
  EXPECT_EQ(s.at("index/x.json", 12).to_string(), "index/x.json (step 12): bad CRC");
  EXPECT_EQ(s.at("", 0).to_string(), "step 0: bad CRC");
  EXPECT_EQ(s.at("f", 3).prefixed("tensor 'w': ").to_string(), "f (step 3): tensor 'w': bad CRC");
  EXPECT_EQ(Status::incomplete("x").kind(), ErrorKind::kIncomplete);
  EXPECT_EQ(Status::io("x").kind(), ErrorKind::kIo);
  EXPECT_EQ(Status::usage("x").kind(), ErrorKind::kUsage);
  EXPECT_EQ(Status::database("x").kind(), ErrorKind::kDatabase);
}

TEST(Status, ErrorCarriesTheStatus) {
  Error e(Status::io("no such file").at("a/b"));
  EXPECT_STREQ(e.what(), "a/b: no such file");
  EXPECT_EQ(e.kind(), ErrorKind::kIo);
  EXPECT_EQ(e.status().file(), "a/b");
  EXPECT_EQ(e.sqlite_code(), 0);
  Error u(ErrorKind::kUsage, "--bins must be between 2 and 1000");
  EXPECT_STREQ(u.what(), "--bins must be between 2 and 1000");
}

TEST(DatabaseErrors, StatementErrorsNameTheDatabaseAndTheSql) {
  test::TempDir dir;
  const std::string path = dir / "t.db";
  Database db(path);
  try {
    Statement q(db.handle(), "SELECT no_such_column FROM trial");
    FAIL() << "prepared";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kDatabase);
    EXPECT_EQ(e.sqlite_code() & 0xff, SQLITE_ERROR);
    EXPECT_NE(what.find("t.db"), std::string::npos) << what;
    EXPECT_NE(what.find("no such column: no_such_column"), std::string::npos) << what;
    EXPECT_NE(what.find("SELECT no_such_column FROM trial"), std::string::npos) << what;
  }
  db.exec("CREATE TABLE u(x INTEGER PRIMARY KEY, padding_to_make_this_statement_long TEXT)");
  Statement ins(db.handle(),
                "INSERT INTO u(x, padding_to_make_this_statement_long)\n      VALUES (?, 'some long text here')");
  ins.bind(1, 1).run();
  try {
    ins.bind(1, 1).step();
    FAIL() << "inserted twice";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kDatabase);
    EXPECT_EQ(e.sqlite_code(), SQLITE_CONSTRAINT_PRIMARYKEY);
    EXPECT_NE(what.find("t.db"), std::string::npos) << what;
    EXPECT_NE(what.find("UNIQUE constraint failed: u.x"), std::string::npos) << what;
    // The SQL on one line, cut after ~80 characters.
    EXPECT_NE(what.find("INSERT INTO u(x, padding_to_make_this_statement_long) VALUES"), std::string::npos) << what;
    EXPECT_NE(what.find("..."), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  ins.reset();
  try {
    db.exec("INSERT INTO no_such_table VALUES (1)");
    FAIL() << "exec succeeded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.status().file(), path);
    EXPECT_NE(what.find("no such table: no_such_table"), std::string::npos) << what;
    EXPECT_NE(what.find("INSERT INTO no_such_table"), std::string::npos) << what;
  }
}

TEST(DatabaseErrors, OpeningAMissingDatabaseNamesIt) {
  test::TempDir dir;
  const std::string path = dir / "missing.db";
  try {
    Database db(path, OpenMode::kExisting);
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDatabase);
    EXPECT_EQ(e.status().file(), path);
    EXPECT_NE(std::string(e.what()).find("cannot open database"), std::string::npos) << e.what();
  }
}
