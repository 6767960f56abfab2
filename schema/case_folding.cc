// case_folding.h
#include "schema/case_folding.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "schema/database.h"

namespace trialdb {

namespace {

class CaseFolder {
 public:
  CaseFolder(sqlite3* db, const std::string& sql) : db_(db), tokens_(tokenize(sql)) {}

  std::string fold() {
    std::string out = expression({});
    if (at_ != tokens_.size())
      throw Error(Status::database("folding an SQL expression's CASEs: unexpected '" + tokens_[at_] + "'"));
    return out;
  }

 private:
  static std::vector<std::string> tokenize(const std::string& sql) {
    std::vector<std::string> out;
    for (size_t i = 0; i < sql.size();) {
      const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
      if (std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
      else if (word(sql[i])) {
        size_t end = i;
        while (end < sql.size() && word(sql[end])) ++end;
        out.push_back(sql.substr(i, end - i));
        i = end;
      } else if (sql[i] == '\'') {  // a string literal, its quotes doubled inside
        size_t end = i + 1;
        while (end < sql.size() && (sql[end] != '\'' || (end + 1 < sql.size() && sql[end + 1] == '\'')))
          end += sql[end] == '\'' ? 2 : 1;
        out.push_back(sql.substr(i, end + 1 - i));
        i = end + 1;
      } else if (sql.compare(i, 2, ">>") == 0 || sql.compare(i, 2, "<<") == 0 || sql.compare(i, 2, "<=") == 0 ||
                 sql.compare(i, 2, ">=") == 0 || sql.compare(i, 2, "<>") == 0 || sql.compare(i, 2, "!=") == 0) {
        out.push_back(sql.substr(i, 2));
        i += 2;
      } else out.push_back(sql.substr(i++, 1));
    }
    return out;
  }

  static std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }

  bool next_is(const std::string& keyword) const { return at_ < tokens_.size() && upper(tokens_[at_]) == keyword; }

  void expect(const std::string& keyword) {
    if (!next_is(keyword))
      throw Error(Status::database("folding an SQL expression's CASEs: no " + keyword + " where expected"));
    ++at_;
  }

  // The text up to one of `stops` outside parentheses (or the end, or a parenthesis closing an
  // outer one), its CASE expressions folded.
  std::string expression(const std::vector<std::string>& stops) {
    std::string out;
    int depth = 0;
    while (at_ < tokens_.size()) {
      const std::string word = upper(tokens_[at_]);
      if (depth == 0 && (std::find(stops.begin(), stops.end(), word) != stops.end() || word == ")")) break;
      if (word == "CASE") {
        out += folded_case() + " ";
        continue;
      }
      depth += word == "(" ? 1 : word == ")" ? -1 : 0;
      out += tokens_[at_++] + " ";
    }
    if (!out.empty()) out.pop_back();
    return out;
  }

  // Whether `condition` holds without a row: 1 or 0, or -1 when it depends on the row.
  int constant_truth(const std::string& condition) const {
    sqlite3_stmt* st = nullptr;
    const std::string sql = "SELECT CASE WHEN (" + condition + ") THEN 1 ELSE 0 END";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      return -1;  // names a column of the row (or is not whole alone): left to every row, as written
    }
    const int truth = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    return truth;
  }

  // CASE [base] WHEN c THEN r ... [ELSE e] END, its constant conditions decided.
  std::string folded_case() {
    expect("CASE");
    const std::string base = expression({"WHEN"});
    std::vector<std::pair<std::string, std::string>> kept;  // the row's conditions, in order
    std::string otherwise = "NULL";
    bool decided = false;
    while (next_is("WHEN")) {
      ++at_;
      const std::string condition = expression({"THEN"});
      expect("THEN");
      const std::string result = expression({"WHEN", "ELSE", "END"});
      if (decided) continue;
      const int truth = constant_truth(base.empty() ? condition : "(" + base + ") = (" + condition + ")");
      if (truth == 1) otherwise = result, decided = true;  // later branches are never reached
      else if (truth == -1) kept.push_back({condition, result});
    }
    if (next_is("ELSE")) {
      ++at_;
      const std::string result = expression({"END"});
      if (!decided) otherwise = result;
    }
    expect("END");
    if (kept.empty()) return "(" + otherwise + ")";
    std::string out = "CASE " + (base.empty() ? "" : base + " ");
    for (const auto& [condition, result] : kept) out += "WHEN " + condition + " THEN " + result + " ";
    return out + "ELSE " + otherwise + " END";
  }

  sqlite3* db_;
  std::vector<std::string> tokens_;
  size_t at_ = 0;
};

}  // namespace

std::string fold_constant_cases(sqlite3* db, const std::string& expression) {
  return CaseFolder(db, expression).fold();
}

}  // namespace trialdb
