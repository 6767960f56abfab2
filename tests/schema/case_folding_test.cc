// fold_constant_cases (schema/case_folding.h): constant CASE conditions are decided, those on a
// row's columns kept in order, string literals and parentheses left as they are.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <string>

#include "schema/case_folding.h"
#include "schema/status.h"

using namespace trialdb;

namespace {

class CaseFolding : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK); }
  void TearDown() override { sqlite3_close(db_); }
  std::string fold(const std::string& sql) { return fold_constant_cases(db_, sql); }
  sqlite3* db_ = nullptr;
};

TEST_F(CaseFolding, ConstantConditionsAreDecided) {
  EXPECT_EQ(fold("CASE 2 WHEN 0 THEN v.a WHEN 1 THEN v.b WHEN 2 THEN v.c END"), "(v.c)");
  EXPECT_EQ(fold("CASE WHEN 2 IN (4, 5) THEN v.a WHEN 0 OR 2 IN (7, 8) THEN v.b ELSE v.c END"), "(v.c)");
  EXPECT_EQ(fold("CASE 3 WHEN 0 THEN v.a END"), "(NULL)");
  EXPECT_EQ(fold("abs(CASE WHEN 1 THEN v.a ELSE v.b END) + 1"), "abs ( (v.a) ) + 1");
}

TEST_F(CaseFolding, ConditionsOnTheRowStay) {
  EXPECT_EQ(fold("CASE WHEN v.s = 2 THEN CASE WHEN 2 IN (4, 5) THEN v.b ELSE v.c END END"),
            "CASE WHEN v.s = 2 THEN (v.c) ELSE NULL END");
  // A constant branch after a row's condition ends the CASE: later ones are never reached.
  EXPECT_EQ(fold("CASE WHEN v.s = 2 THEN v.a WHEN 1 THEN v.b WHEN v.t THEN v.c ELSE v.d END"),
            "CASE WHEN v.s = 2 THEN v.a ELSE v.b END");
  EXPECT_EQ(fold("CASE v.k WHEN 0 THEN v.a ELSE v.b END"), "CASE v.k WHEN 0 THEN v.a ELSE v.b END");
}

TEST_F(CaseFolding, StringLiteralsAreKept) {
  EXPECT_EQ(fold("CASE WHEN 'a  b' = 'a  b' THEN 'it''s  (x)' END"), "('it''s  (x)')");
}

TEST_F(CaseFolding, AnUnfinishedCaseIsAnError) { EXPECT_THROW(fold("CASE WHEN 1 THEN v.a"), Error); }

}  // namespace
