// Rule parameters (rule_settings.h): RULE.KEY=VALUE parsed, checked by the declared type,
// stored, and the (trial, rule) pairs whose value changed reported.
#include "rules_sql/rule_settings.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "rules_sql/rule_declaration.h"
#include "schema/py_regex.h"
#include "schema/status.h"

namespace trialdb::rules {

namespace {

// The declaration of rule.param as the database holds it (rule_param_declared), if any.
std::optional<ParamDeclaration> declared(Database& db, const std::string& rule, const std::string& param) {
  Statement q(db.handle(), "SELECT type, value, meaning FROM rule_param_declared WHERE rule = ?1 AND param = ?2");
  if (!q.bind(1, rule).bind(2, param).step()) return std::nullopt;
  return param_declaration(param, q.text(0), q.text(1), q.text(2));
}

}  // namespace

std::vector<RuleSetting> check_settings(Database& db, const std::vector<std::string>& texts) {
  std::vector<RuleSetting> out;
  for (const std::string& text : texts) {
    const size_t dot = text.find('.'), eq = text.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot == 0 || eq == dot + 1)
      throw Error(ErrorKind::kUsage, "--param " + text + ": expected RULE.KEY=VALUE");
    RuleSetting s{text.substr(0, dot), text.substr(dot + 1, eq - dot - 1), text.substr(eq + 1), text};
    Statement rule(db.handle(), "SELECT 1 FROM rule_catalog WHERE rule = ?1");
    if (!rule.bind(1, s.rule).step())
      throw Error(ErrorKind::kUsage, "--param " + text + ": no such rule '" + s.rule + "'");
    const std::optional<ParamDeclaration> p = declared(db, s.rule, s.key);
    if (!p) {
      std::string known;
      Statement all(db.handle(), "SELECT param FROM rule_param_declared WHERE rule = ?1 ORDER BY position");
      all.bind(1, s.rule);
      while (all.step()) known += (known.empty() ? "" : ", ") + all.text(0);
      throw Error(ErrorKind::kUsage, "--param " + text + ": rule " + s.rule + " has no parameter '" + s.key +
                                         "' (known: " + (known.empty() ? "none" : known) + ")");
    }
    std::string why;
    if (!value_fits(*p, s.value, &why))
      throw Error(ErrorKind::kUsage, "--param " + s.rule + "." + s.key + "=" + s.value + ": " + why);
    if (p->type == ParamType::kTrial) {
      Statement trial(db.handle(), "SELECT 1 FROM trials WHERE trial = ?1");
      if (!trial.bind(1, s.value).step())
        throw Error(ErrorKind::kUsage,
                    "--param " + s.rule + "." + s.key + "=" + s.value + ": no such trial in " + db.path());
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> store_settings(Database& db, const std::vector<RuleSetting>& settings,
                                                                const std::vector<std::string>& trials) {
  // The effective value of a parameter for a trial: its own row, else the row for every trial,
  // else the declared default.
  Statement effective(db.handle(),
                      "SELECT coalesce((SELECT value FROM rule_param WHERE trial = ?1 AND rule = ?2 AND param = ?3),"
                      "                (SELECT value FROM rule_param WHERE trial IS NULL AND rule = ?2 AND param = ?3),"
                      "                (SELECT value FROM rule_param_declared WHERE rule = ?2 AND param = ?3))");
  Statement upsert(db.handle(),
                   "INSERT INTO rule_param(trial, rule, param, value) VALUES (?1, ?2, ?3, ?4) "
                   "ON CONFLICT (ifnull(trial, ''), rule, param) DO UPDATE SET value = excluded.value");
  std::vector<std::string> all_trials;
  {
    Statement q(db.handle(), "SELECT trial FROM trials ORDER BY trial");
    while (q.step()) all_trials.push_back(q.text(0));
  }
  const std::vector<std::string>& affected = trials.empty() ? all_trials : trials;
  auto value_of = [&](const std::string& trial, const RuleSetting& s) {
    effective.bind(1, trial).bind(2, s.rule).bind(3, s.key);
    std::string v = effective.step() && !effective.is_null(0) ? effective.text(0) : std::string("\x01unset");
    effective.reset();
    return v;
  };
  std::set<std::pair<std::string, std::string>> changed;
  for (const RuleSetting& s : settings) {
    std::vector<std::string> before;
    for (const std::string& t : affected) before.push_back(value_of(t, s));
    if (trials.empty()) {
      upsert.bind_null(1).bind(2, s.rule).bind(3, s.key).bind(4, s.value).run();
    } else {
      for (const std::string& t : trials) upsert.bind(1, t).bind(2, s.rule).bind(3, s.key).bind(4, s.value).run();
    }
    for (size_t i = 0; i < affected.size(); ++i)
      if (value_of(affected[i], s) != before[i]) changed.emplace(affected[i], s.rule);
  }
  return {changed.begin(), changed.end()};
}

namespace {

// Calls f with each run of letters of s: "relu0_output_0" -> relu, output; ".*relu_output"
// likewise. Letters are ASCII ones (the C locale's, which trialdb runs in).
template <typename F>
void for_each_word(std::string_view s, F f) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  for (size_t i = 0; i < s.size();) {
    if (!letter(s[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < s.size() && letter(s[i])) ++i;
    f(s.substr(start, i - start));
  }
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// s's words (for_each_word) in lower case, in order.
std::vector<std::string> lower_words(std::string_view s) {
  std::vector<std::string> words;
  for_each_word(s, [&](std::string_view run) {
    std::string w;
    for (char c : run) w += lower(c);
    words.push_back(std::move(w));
  });
  return words;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A regex that matches `name` exactly where re.search looks (escaped, anchored).
std::string exact_regex(const std::string& name) {
  std::string out = "^";
  for (char c : name) {
    if (std::string_view("\\.^$|?*+()[]{},").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out + "$";
}

constexpr size_t kSuggested = 4;  // closest names a note names

// The trial's tensor names closest to `pattern`: those sharing the most words with it, by edit
// distance to its letters; none when no name shares more than half of its words (a name sharing
// only "input" with ".*embedding0_input_0" is no suggestion).
std::vector<std::string> closest_tensors(const TrialTensorNames& names, const std::string& pattern) {
  std::vector<std::string> wanted = lower_words(pattern);  // each once
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (wanted.empty()) return {};
  std::string literal;
  for (char c : pattern)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/') literal += c;
  std::vector<std::tuple<size_t, size_t, std::string>> scored;  // (-shared words, distance, name)
  std::vector<char> shared_word(wanted.size());                 // per wanted word: a word of this name
  const std::vector<std::vector<std::string>>& words = names.words();
  for (size_t n = 0; n < words.size(); ++n) {
    std::fill(shared_word.begin(), shared_word.end(), 0);
    for (const std::string& word : words[n])
      for (size_t i = 0; i < wanted.size(); ++i)
        if (word == wanted[i]) shared_word[i] = 1;
    const size_t shared = std::count(shared_word.begin(), shared_word.end(), 1);
    if (2 * shared > wanted.size())
      scored.emplace_back(wanted.size() - shared, edit_distance(literal, names.names()[n]), names.names()[n]);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> closest;  // those sharing the most words, the closest first
  for (size_t i = 0; i < scored.size() && i < kSuggested && std::get<0>(scored[i]) == std::get<0>(scored[0]); ++i)
    closest.push_back(std::get<2>(scored[i]));
  return closest;
}

// "; closest: 'a', 'b' (select them with --param R.P='^a$,^b$')", or nothing.
std::string suggestion(const TrialTensorNames& tensors, const std::string& rule, const std::string& param,
                       const std::string& pattern) {
  const std::vector<std::string> names = closest_tensors(tensors, pattern);
  if (names.empty()) return "";
  std::string listed, regex;
  for (const std::string& n : names) {
    listed += listed.empty() ? "'" : ", '";  // appended piece by piece: GCC 12's -Wrestrict at -O3
    listed += n;
    listed += '\'';
    if (!regex.empty()) regex += ',';
    regex += exact_regex(n);
  }
  return "; the closest names are " + listed + " (select them with --param " + rule + "." + param + "='" + regex + "')";
}

// Whether any pattern of the list `patterns` matches one of the names (as rule_regexp_any, which
// a trial without names never calls: its patterns are not compiled then either).
bool any_name_matches(const TrialTensorNames& names, const std::string& patterns) {
  if (names.names().empty()) return false;
  std::unique_ptr<PyRegexList> list;
  if (Status st = PyRegexList::compile(patterns, &list); !st.is_ok()) throw Error(st.prefixed("rule_regexp_any: "));
  for (const std::string& name : names.names())
    if (list->search(name)) return true;
  return false;
}

}  // namespace

TrialTensorNames::TrialTensorNames(Database& db, const std::string& trial) {
  Statement q(db.handle(), "SELECT tensor FROM tensors WHERE trial = ?1");
  q.bind(1, trial);
  while (q.step()) names_.push_back(q.text(0));
}

const std::vector<std::vector<std::string>>& TrialTensorNames::words() const {
  if (split_) return words_;
  words_.reserve(names_.size());
  for (const std::string& name : names_) words_.push_back(lower_words(name));
  split_ = true;
  return words_;
}

std::vector<std::string> unmatched_selections(Database& db, const std::string& trial, const std::string& rule,
                                              const TrialTensorNames& names) {
  std::vector<std::pair<std::string, std::string>> regexes;  // (param, value), non-empty
  std::string tensor_regex, collection_names;
  {
    Statement q(db.handle(),
                "SELECT d.param, d.type, coalesce((SELECT value FROM rule_param WHERE trial = ?1 AND rule = ?2 AND "
                "param = d.param),"
                "                                 (SELECT value FROM rule_param WHERE trial IS NULL AND rule = ?2 AND "
                "param = d.param),"
                "                                 d.value, '')"
                " FROM rule_param_declared d WHERE d.rule = ?2 ORDER BY d.position");
    q.bind(1, trial).bind(2, rule);
    while (q.step()) {
      const std::string param = q.text(0), type = q.text(1), value = q.text(2);
      if (param == "tensor_regex") tensor_regex = value;
      else if (param == "collection_names") collection_names = value;
      else if (!value.empty() && type == "regex") regexes.emplace_back(param, value);
    }
  }
  const std::string none_of = " of its " + std::to_string(names.names().size()) + " tensors";
  std::vector<std::string> notes;
  if (!tensor_regex.empty() || !collection_names.empty()) {
    // As rule_selected_tensors selects (rules_base.sql); the first match is enough.
    bool matched = any_name_matches(names, tensor_regex);
    if (!matched && !collection_names.empty()) {
      Statement q(db.handle(),
                  "SELECT EXISTS (SELECT 1 FROM collections WHERE trial = ?1 AND rule_in_list(collection, ?2))");
      matched = q.bind(1, trial).bind(2, collection_names).step() && q.int64(0) != 0;
    }
    if (!matched) {
      std::string what;
      if (!tensor_regex.empty()) what = "tensor_regex '" + tensor_regex + "'";
      if (!collection_names.empty())
        what += (what.empty() ? "" : " and ") + std::string("collection_names '") + collection_names + "'";
      notes.push_back(what + (tensor_regex.empty() || collection_names.empty() ? " matches" : " match") + " none" +
                      none_of + (tensor_regex.empty() ? "" : suggestion(names, rule, "tensor_regex", tensor_regex)));
    }
  }
  for (const auto& [param, value] : regexes)
    if (!any_name_matches(names, value))
      notes.push_back(param + " '" + value + "' matches none" + none_of + suggestion(names, rule, param, value));
  return notes;
}

}  // namespace trialdb::rules
