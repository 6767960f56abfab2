// A rule's declaration: the block of `-- @` lines that opens its .sql file, the one place where
// its name, kind and parameters are written. Built-in rules and custom rule files (--rule-file)
// use the same block:
//
//   -- @rule overfit batch
//   -- @param tensor_regex    regex   ""   the losses compared (empty: the collection losses)
//   -- @param ratio_threshold real    0.1  relative excess of the EVAL loss that counts
//
// `@rule NAME KIND` (kind: batch, step or clock; docs/RULES.md) comes first, then one `@param
// NAME TYPE DEFAULT MEANING` per parameter. DEFAULT is a word without spaces or a double-quoted
// text ("" is empty); MEANING is the rest of the line. TYPE is one of the types below, optionally
// followed by `|WORD` for a parameter that is that word or a value of the type (`integer|none`).
//
// From the declaration the runner makes the parameters' defaults (rule_param_declared), the
// typed view rule_<name>_cfg, the checks of --param, `rules --list` and docs/RULES.md's table.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb::rules {

enum class ParamType {
  kReal,       // a finite decimal number
  kRealOrInf,  // a decimal number, or inf / +inf / -inf
  kInteger,    // a decimal integer
  kBoolean,    // true or false
  kRegex,      // comma-separated Python regexes (re.search); empty: none
  kText,       // any text
  kTrial,      // the name of a trial of the database
  kList,       // comma-separated names; empty: none
  kRealList,   // comma-separated decimal numbers (inf allowed)
  kMode,       // none, TRAIN, EVAL, PREDICT or GLOBAL
};

struct ParamDeclaration {
  std::string name;
  ParamType type = ParamType::kText;
  std::string word;  // the word a `TYPE|WORD` parameter may also be; empty: none
  std::string default_value;
  std::string meaning;
};

struct RuleDeclaration {
  std::string name, kind;
  std::vector<ParamDeclaration> params;
  const ParamDeclaration* param(std::string_view name) const;
};

// The kinds a rule may be (rule_catalog.kind).
inline constexpr const char* kBatchKind = "batch";
inline constexpr const char* kStepKind = "step";
inline constexpr const char* kClockKind = "clock";

// Parses the declaration block that opens `sql`. Throws Error (kUsage) naming `source`, the line
// and what is wrong; a file without a block is an error too. Each default is checked against its
// type (a trial-name default must be empty: no trial can be known in advance).
RuleDeclaration parse_declaration(std::string_view sql, const std::string& source);

// A parameter from its declared parts, the type as the block spells it; throws Error (kUsage)
// for a type that is not one.
ParamDeclaration param_declaration(const std::string& name, const std::string& type, const std::string& default_value,
                                   const std::string& meaning);

// The type as the block spells it ("integer|none").
std::string type_text(const ParamDeclaration& p);
// What a value of the type is, for messages and listings ("a decimal integer, or none").
std::string type_description(const ParamDeclaration& p);

// Whether `value` is of p's type; *why says why not. A trial name is checked by the caller
// (it needs the database): here it only must not be empty.
bool value_fits(const ParamDeclaration& p, const std::string& value, std::string* why);

// The SQL that installs the declaration in a database with rules_base.sql's tables: the
// catalog row (source: 'builtin' or the file), the declared parameters and the view
// rule_<name>_cfg, one typed column per parameter.
std::string declaration_sql(const RuleDeclaration& d, const std::string& source);

// docs/RULES.md's table of the parameters of `rules`: a Markdown table, a row per parameter
// (rule, parameter, type, default, meaning), in the order given.
std::string parameter_table_markdown(const std::vector<RuleDeclaration>& rules);

// An SQL string literal.
std::string sql_literal(std::string_view s);

}  // namespace trialdb::rules
