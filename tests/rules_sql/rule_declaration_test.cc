// Rule declarations (rules_sql/rule_declaration.h): the built-in rules' blocks parse, types check
// values, docs/RULES.md's parameter table is the declarations', and the names reserved for the
// runner are exactly those rules_base.sql creates.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "rules_sql/rule_declaration.h"
#include "rules_sql/rule_runner.h"
#include "schema/database.h"
#include "schema/status.h"
#include "tests/common/temp_dir.h"

namespace {

using trialdb::Database;
using trialdb::Error;
using trialdb::Statement;
using trialdb::rules::ParamType;
using trialdb::rules::parse_declaration;

TEST(RuleDeclaration, EveryBuiltInRuleDeclaresItselfWithTypedDefaults) {
  const auto& declared = trialdb::rules::builtin_declarations();
  ASSERT_EQ(declared.size(), trialdb::rules::builtin_rule_names().size());
  for (size_t i = 0; i < declared.size(); ++i) {
    EXPECT_EQ(declared[i].name, trialdb::rules::builtin_rule_names()[i]);
    for (const auto& p : declared[i].params) EXPECT_FALSE(p.meaning.empty()) << declared[i].name << "." << p.name;
  }
  EXPECT_EQ(declared[17].name, "stalled_training");
  EXPECT_EQ(declared[17].kind, "clock");
  const auto* other = declared[12].param("other_trial");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->type, ParamType::kTrial);
  const auto* num_steps = declared[2].param("num_steps");
  ASSERT_NE(num_steps, nullptr);
  EXPECT_EQ(trialdb::rules::type_text(*num_steps), "integer|none");
}

TEST(RuleDeclaration, ValuesAreCheckedByTheirType) {
  auto fits = [](const char* type, const std::string& value) {
    const auto p = trialdb::rules::param_declaration("p", type, "", "m");
    std::string why;
    return trialdb::rules::value_fits(p, value, &why);
  };
  // Decimal numbers as [+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)? writes them, and finite.
  for (const char* good : {"0.1", "-3", "1e-7", ".5", "+2.", " 4 ", "2.E+3", "-.25e2", "7E0", "+0"})
    EXPECT_TRUE(fits("real", good)) << good;
  for (const char* bad : {"",   "nan", "NaN", "inf", "0x10", "1e999", "1,2", "abc", "1.5x",  ".",   "+",
                          "-.", "e5",  ".e5", "1e",  "1e+",  "1.2.3", "1 2", "--1", "1e5.0", "+-1", "1_000"})
    EXPECT_FALSE(fits("real", bad)) << bad;
  EXPECT_TRUE(fits("real_or_inf", "-inf"));
  EXPECT_FALSE(fits("real_or_inf", "nan"));
  EXPECT_TRUE(fits("integer", "12"));
  for (const char* good : {"-12", "+0", " 7"}) EXPECT_TRUE(fits("integer", good)) << good;
  for (const char* bad : {"2.5", "1e3", "0x10", "", "+", "3.", "1 2", "9007199254740992"})
    EXPECT_FALSE(fits("integer", bad)) << bad;
  EXPECT_TRUE(fits("integer|none", "None"));
  EXPECT_FALSE(fits("integer|none", "auto"));
  EXPECT_TRUE(fits("boolean", "FALSE"));
  EXPECT_FALSE(fits("boolean", "1"));
  EXPECT_TRUE(fits("regex", "a.*b,^c$"));
  EXPECT_TRUE(fits("regex", ""));
  EXPECT_FALSE(fits("regex", "x,(["));
  EXPECT_TRUE(fits("real_list", "-9.5, 9.5"));
  EXPECT_FALSE(fits("real_list", "1,,2"));
  EXPECT_TRUE(fits("mode", "eval"));
  EXPECT_FALSE(fits("mode", "EVALUATION"));
  EXPECT_FALSE(fits("trial", ""));
}

TEST(RuleDeclaration, ABadBlockIsAnErrorNamingTheFileAndLine) {
  auto error = [](const std::string& sql) {
    try {
      parse_declaration(sql, "f.sql");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("CREATE VIEW rule_x AS SELECT 1;").find("f.sql: no declaration"), std::string::npos);
  EXPECT_NE(error("-- @rule x sometimes\n").find("f.sql:1: kind 'sometimes'"), std::string::npos);
  EXPECT_NE(error("-- @rule x batch\n-- @param t number 1 m\n").find("f.sql:2: parameter t: unknown type 'number'"),
            std::string::npos);
  EXPECT_NE(error("-- @rule x batch\n-- @param t real nan m\n").find("f.sql:2: the default of t"), std::string::npos);
  EXPECT_NE(error("-- @rule x batch\n-- @param t real 1\n").find("has no meaning"), std::string::npos);
  EXPECT_NE(error("-- @rule x-y batch\n").find("not an SQL identifier"), std::string::npos);
  EXPECT_NE(error("-- @rule x batch\n-- @param limit integer 3 m\n").find("'limit' is an SQL keyword"),
            std::string::npos);
  const auto d = parse_declaration(
      "-- a comment first\n-- @rule x step\n-- @param r regex \"\" what it picks\nSELECT 1;\n", "f.sql");
  EXPECT_EQ(d.kind, "step");
  ASSERT_EQ(d.params.size(), 1u);
  EXPECT_EQ(d.params[0].default_value, "");
  EXPECT_EQ(d.params[0].meaning, "what it picks");
}

// docs/RULES.md's parameter table is generated from the declarations: when they drift, this
// prints the table to paste.
TEST(RuleDeclaration, TheDocsParameterTableIsTheDeclarations) {
  std::ifstream in(TRIALDB_SOURCE "/docs/RULES.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string md = text.str();
  const std::string begin = "<!-- parameters: begin -->\n", end = "<!-- parameters: end -->";
  const size_t from = md.find(begin), to = md.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const std::string want = trialdb::rules::parameter_table_markdown(trialdb::rules::builtin_declarations());
  EXPECT_EQ(md.substr(from + begin.size(), to - from - begin.size()), want) << "docs/RULES.md should hold:\n" << want;
}

// Every object rules_base.sql creates is reserved, and nothing else: install the rules and
// compare with the schema's rule_* objects that are no built-in rule's.
TEST(RuleDeclaration, ReservedNamesAreWhatTheBaseCreates) {
  trialdb::test::TempDir tmp;
  Database db(tmp / "t.db");
  trialdb::rules::RuleRunner runner(db, {});
  std::set<std::string> created;
  Statement q(db.handle(), "SELECT substr(name, 6) FROM sqlite_schema WHERE name LIKE 'rule\\_%' ESCAPE '\\'");
  while (q.step()) {
    const std::string name = q.text(0);
    bool builtin = false;
    for (const std::string& rule : trialdb::rules::builtin_rule_names())
      builtin = builtin || name == rule || name.rfind(rule + "_", 0) == 0;
    if (!builtin) created.insert(name);
  }
  EXPECT_EQ(created, trialdb::rules::reserved_names());
  EXPECT_TRUE(created.count("selected_tensors"));
  EXPECT_TRUE(created.count("collections"));
}

}  // namespace
