// Rule declarations (rule_declaration.h): the `-- @rule` / `-- @param` block parsed, values
// checked by their declared type, and the SQL made from it.
#include "rules_sql/rule_declaration.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <sqlite3.h>

#include "schema/param_list.h"
#include "schema/py_regex.h"
#include "schema/status.h"

namespace trialdb::rules {

namespace {

struct TypeName {
  ParamType type;
  const char* name;
  const char* description;
};

const TypeName kTypes[] = {
    {ParamType::kReal, "real", "a decimal number"},
    {ParamType::kRealOrInf, "real_or_inf", "a decimal number, inf or -inf"},
    {ParamType::kInteger, "integer", "a decimal integer"},
    {ParamType::kBoolean, "boolean", "true or false"},
    {ParamType::kRegex, "regex", "comma-separated Python regexes (re.search), empty for none"},
    {ParamType::kText, "text", "any text"},
    {ParamType::kTrial, "trial", "the name of a trial of the database"},
    {ParamType::kList, "list", "comma-separated names, empty for none"},
    {ParamType::kRealList, "real_list", "comma-separated decimal numbers"},
    {ParamType::kMode, "mode", "none, TRAIN, EVAL, PREDICT or GLOBAL"},
};

const TypeName& type_entry(ParamType t) {
  for (const TypeName& e : kTypes)
    if (e.type == t) return e;
  return kTypes[0];
}

const char* const kKinds[] = {kBatchKind, kStepKind, kClockKind};
const char* const kModes[] = {"none", "train", "eval", "predict", "global"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// How many digits `text` has from `at` on.
size_t digits_at(std::string_view text, size_t at) {
  size_t n = 0;
  while (at + n < text.size() && std::isdigit(static_cast<unsigned char>(text[at + n]))) ++n;
  return n;
}

// Whether `text` is written [+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?, or [+-]?[0-9]+ for
// an integer. Scanned by hand: every command checks the built-in rules' defaults, and compiling a
// std::regex costs more than the check.
bool is_decimal_text(std::string_view text, bool integer) {
  size_t at = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const size_t whole = digits_at(text, at);
  at += whole;
  if (integer) return whole > 0 && at == text.size();
  size_t fraction = 0;
  if (at < text.size() && text[at] == '.') {
    fraction = digits_at(text, at + 1);
    at += 1 + fraction;
  }
  if (whole == 0 && fraction == 0) return false;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    const size_t exponent = digits_at(text, at);
    if (exponent == 0) return false;
    at += exponent;
  }
  return at == text.size();
}

// Decimal numbers only: no hex, no NaN, no inf spelled as a number, nothing after the digits.
bool is_decimal(std::string_view s, bool integer) {
  const std::string text(trim_blanks(s));
  if (!is_decimal_text(text, integer)) return false;
  errno = 0;
  const double d = std::strtod(text.c_str(), nullptr);
  return std::isfinite(d) && (!integer || (errno == 0 && std::fabs(d) < 9.007199254740992e15));
}

bool is_infinity(std::string_view s) {
  const std::string l = lower(trim_blanks(s));
  return l == "inf" || l == "+inf" || l == "-inf";
}

// The next token of a declaration line: a word, or a double-quoted text.
bool next_token(std::string_view* rest, std::string* token) {
  *rest = trim_blanks(*rest);
  if (rest->empty()) return false;
  if (rest->front() == '"') {
    const size_t close = rest->find('"', 1);
    if (close == std::string_view::npos) return false;
    *token = std::string(rest->substr(1, close - 1));
    rest->remove_prefix(close + 1);
    return true;
  }
  size_t end = 0;
  while (end < rest->size() && (*rest)[end] != ' ' && (*rest)[end] != '\t') ++end;
  *token = std::string(rest->substr(0, end));
  rest->remove_prefix(end);
  return true;
}

// The typed column of a parameter in rule_<name>_cfg, from its text `v`.
std::string column_expression(const ParamDeclaration& p, const std::string& v) {
  std::string e;
  switch (p.type) {
    case ParamType::kReal:
    case ParamType::kRealOrInf: e = "rule_real(" + v + ")"; break;
    case ParamType::kInteger: e = "CAST(rule_real(" + v + ") AS INTEGER)"; break;
    case ParamType::kBoolean: e = "rule_bool(" + v + ")"; break;
    case ParamType::kRegex:
    case ParamType::kTrial:
    case ParamType::kList: e = "nullif(" + v + ", '')"; break;
    case ParamType::kText: e = v; break;
    case ParamType::kRealList: e = "rule_list_json(" + v + ")"; break;
    case ParamType::kMode: e = "nullif(nullif(upper(trim(" + v + ")), ''), 'NONE')"; break;
  }
  if (!p.word.empty())
    e = "CASE WHEN lower(trim(" + v + ")) = " + sql_literal(p.word) + " THEN NULL ELSE " + e + " END";
  return e;
}

// Sets p's type and word from "TYPE" or "TYPE|WORD"; false (and *why) when it is not one.
bool parse_type(std::string type, ParamDeclaration* p, std::string* why) {
  p->word.clear();
  if (const size_t bar = type.find('|'); bar != std::string::npos) {
    p->word = lower(type.substr(bar + 1));
    type.erase(bar);
    if (p->word.empty()) return *why = "an empty word after '|'", false;
  }
  const auto t = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const TypeName& e) { return type == e.name; });
  if (t == std::end(kTypes)) {
    std::string known;
    for (const TypeName& e : kTypes) known += (known.empty() ? "" : ", ") + std::string(e.name);
    return *why = "unknown type '" + type + "' (known: " + known + ")", false;
  }
  p->type = t->type;
  return true;
}

}  // namespace

ParamDeclaration param_declaration(const std::string& name, const std::string& type, const std::string& default_value,
                                   const std::string& meaning) {
  ParamDeclaration p{name, ParamType::kText, "", default_value, meaning};
  std::string why;
  if (!parse_type(type, &p, &why)) throw Error(ErrorKind::kUsage, "parameter " + name + ": " + why);
  return p;
}

const ParamDeclaration* RuleDeclaration::param(std::string_view name) const {
  for (const ParamDeclaration& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

std::string sql_literal(std::string_view s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string type_text(const ParamDeclaration& p) {
  return std::string(type_entry(p.type).name) + (p.word.empty() ? "" : "|" + p.word);
}

std::string type_description(const ParamDeclaration& p) {
  return std::string(type_entry(p.type).description) + (p.word.empty() ? "" : ", or " + p.word);
}

bool value_fits(const ParamDeclaration& p, const std::string& value, std::string* why) {
  if (!p.word.empty() && lower(trim_blanks(value)) == p.word) return true;
  const std::string quoted = "'" + value + "'";
  auto fail = [&](const std::string& what) {
    *why = what + " (" + type_description(p) + ")";
    return false;
  };
  switch (p.type) {
    case ParamType::kReal: return is_decimal(value, false) || fail(quoted + " is not a decimal number");
    case ParamType::kRealOrInf:
      return is_decimal(value, false) || is_infinity(value) || fail(quoted + " is not a decimal number");
    case ParamType::kInteger: return is_decimal(value, true) || fail(quoted + " is not an integer");
    case ParamType::kBoolean: {
      const std::string l = lower(trim_blanks(value));
      return l == "true" || l == "false" || fail(quoted + " is not true or false");
    }
    case ParamType::kRegex:
      for (std::string_view pattern : split_param_list(value)) {
        std::unique_ptr<PyRegex> re;
        if (Status st = PyRegex::compile(pattern, &re); !st.is_ok()) return fail(st.cause());
      }
      return true;
    case ParamType::kText:
    case ParamType::kList: return true;
    case ParamType::kTrial: return !trim_blanks(value).empty() || fail("the name of a trial is empty");
    case ParamType::kRealList: {
      const std::vector<std::string_view> items = split_param_list(value);
      if (items.empty()) return fail("no number given");
      for (std::string_view item : items)
        if (!is_decimal(item, false) && !is_infinity(item))
          return fail("'" + std::string(item) + "' is not a decimal number");
      return true;
    }
    case ParamType::kMode:
      return std::find(std::begin(kModes), std::end(kModes), lower(trim_blanks(value))) != std::end(kModes) ||
             fail(quoted + " is not a mode");
  }
  return true;
}

RuleDeclaration parse_declaration(std::string_view sql, const std::string& source) {
  RuleDeclaration d;
  int line_no = 0;
  auto fail = [&](const std::string& what) -> Error {
    return Error(ErrorKind::kUsage, source + ":" + std::to_string(line_no) + ": " + what);
  };
  size_t pos = 0;
  while (pos < sql.size()) {
    const size_t eol = std::min(sql.find('\n', pos), sql.size());
    const std::string_view line = trim_blanks(sql.substr(pos, eol - pos));
    pos = eol + 1;
    ++line_no;
    if (line.empty() && d.name.empty()) continue;  // blank lines before the block
    if (line.rfind("-- @", 0) != 0) {
      if (d.name.empty() && line.rfind("--", 0) == 0) continue;  // a comment before the block
      break;                                                     // the block ends
    }
    std::string_view rest = line.substr(4);
    std::string keyword;
    next_token(&rest, &keyword);
    if (keyword == "rule") {
      if (!d.name.empty()) throw fail("a second @rule: a file declares one rule");
      std::string kind;
      if (!next_token(&rest, &d.name) || !next_token(&rest, &kind) || !trim_blanks(rest).empty())
        throw fail("expected '-- @rule NAME KIND'");
      if (!is_identifier(d.name))
        throw fail("rule name '" + d.name + "' is not an SQL identifier (letters, digits, _)");
      if (std::find_if(std::begin(kKinds), std::end(kKinds), [&](const char* k) { return kind == k; }) ==
          std::end(kKinds))
        throw fail("kind '" + kind + "' is not batch, step or clock");
      d.kind = kind;
    } else if (keyword == "param") {
      if (d.name.empty()) throw fail("@param before @rule");
      ParamDeclaration p;
      std::string type;
      if (!next_token(&rest, &p.name) || !next_token(&rest, &type) || !next_token(&rest, &p.default_value))
        throw fail("expected '-- @param NAME TYPE DEFAULT MEANING'");
      p.meaning = std::string(trim_blanks(rest));
      if (!is_identifier(p.name)) throw fail("parameter name '" + p.name + "' is not an identifier");
      // A rule reads it as cfg.<name>: an SQL keyword there would need quotes.
      if (sqlite3_keyword_check(p.name.data(), static_cast<int>(p.name.size())))
        throw fail("parameter name '" + p.name + "' is an SQL keyword");
      if (d.param(p.name)) throw fail("parameter " + p.name + " is declared twice");
      std::string why;
      if (!parse_type(type, &p, &why)) throw fail("parameter " + p.name + ": " + why);
      if (p.meaning.empty())
        throw fail("parameter " + p.name + " has no meaning (the rest of the line says what it is)");
      const bool no_trial = p.type == ParamType::kTrial && p.default_value.empty();
      if (!no_trial && !value_fits(p, p.default_value, &why)) throw fail("the default of " + p.name + ": " + why);
      d.params.push_back(std::move(p));
    } else {
      throw fail("unknown declaration '@" + keyword + "' (expected @rule or @param)");
    }
  }
  if (d.name.empty())
    throw Error(ErrorKind::kUsage, source +
                                       ": no declaration: a rule file opens with '-- @rule NAME KIND' "
                                       "and a '-- @param NAME TYPE DEFAULT MEANING' line per parameter");
  return d;
}

std::string declaration_sql(const RuleDeclaration& d, const std::string& source) {
  const std::string rule = sql_literal(d.name);
  std::string sql = "INSERT INTO rule_catalog(rule, kind, source) VALUES (" + rule + ", " + sql_literal(d.kind) + ", " +
                    sql_literal(source) +
                    ")\n  ON CONFLICT (rule) DO UPDATE SET kind = excluded.kind, source = excluded.source;\n";
  sql += "DELETE FROM rule_param_declared WHERE rule = " + rule + ";\n";
  for (size_t i = 0; i < d.params.size(); ++i) {
    const ParamDeclaration& p = d.params[i];
    sql += "INSERT INTO rule_param_declared(rule, position, param, type, value, meaning) VALUES (" + rule + ", " +
           std::to_string(i) + ", " + sql_literal(p.name) + ", " + sql_literal(type_text(p)) + ", " +
           sql_literal(p.default_value) + ", " + sql_literal(p.meaning) + ");\n";
  }
  sql += "DROP VIEW IF EXISTS rule_" + d.name + "_cfg;\n";
  sql += "CREATE VIEW rule_" + d.name + "_cfg AS\nSELECT ";
  if (d.params.empty()) sql += "1 AS none";
  for (size_t i = 0; i < d.params.size(); ++i) {
    const ParamDeclaration& p = d.params[i];
    sql += (i ? ",\n       " : "") +
           column_expression(p, "max(value) FILTER (WHERE param = " + sql_literal(p.name) + ")") + " AS " + p.name;
  }
  sql += "\nFROM rule_params\nWHERE rule = " + rule + ";\n";
  return sql;
}

std::string parameter_table_markdown(const std::vector<RuleDeclaration>& rules) {
  auto cell = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string md = "| rule | parameter | type | default | meaning |\n|---|---|---|---|---|\n";
  for (const RuleDeclaration& d : rules)
    for (const ParamDeclaration& p : d.params)
      md += "| " + d.name + " | `" + p.name + "` | " + cell(type_text(p)) + " | " +
            (p.default_value.empty() ? std::string() : "`" + cell(p.default_value) + "`") + " | " + cell(p.meaning) +
            " |\n";
  return md;
}

}  // namespace trialdb::rules
