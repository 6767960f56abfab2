// Rule parameters (rule_settings.h): RULE.KEY=VALUE parsed, checked by the kind of the default,
// stored, and the (trial, rule) pairs whose value changed reported.
#include "rules_sql/rule_settings.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "schema/status.h"

namespace trialdb::rules {

namespace {

const char* const kModes[] = {"none", "train", "eval", "predict", "global"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1)
    items.push_back(s.substr(start, comma - start));
  items.push_back(s.substr(start));
  return items;
}

// Whether `helper(value)` (an sqlext rule_* function) accepts the value; its complaint if not.
bool accepted(Database& db, const char* helper_sql, const std::string& value, std::string* why) {
  try {
    Statement q(db.handle(), helper_sql);
    q.bind(1, value).step();
    return true;
  } catch (const Error& e) {
    *why = e.status().cause();
    if (const size_t sql = why->find(" (SQL: "); sql != std::string::npos) why->erase(sql);   // the probe is ours
    return false;
  }
}

bool is_number(Database& db, const std::string& value, std::string* why) {
  return accepted(db, "SELECT rule_real(?1)", value, why);
}

// The kind a parameter's default shows, and whether `value` is of it (*why says why not).
bool of_default_kind(Database& db, const std::string& key, const std::string& fallback, const std::string& value,
                     std::string* why) {
  std::string ignored;
  if (key.size() >= 5 && key.compare(key.size() - 5, 5, "regex") == 0)
    return accepted(db, "SELECT rule_regexp_any(?1, '')", value, why);
  if (key == "mode") {
    if (std::find(std::begin(kModes), std::end(kModes), lower(value)) != std::end(kModes)) return true;
    *why = "'" + value + "' is not a mode (none, TRAIN, EVAL, PREDICT or GLOBAL)";
    return false;
  }
  if (fallback.empty()) return true;   // "none given" defaults: names, lists of names
  const std::string d = lower(fallback);
  if (d == "true" || d == "false") return accepted(db, "SELECT rule_bool(?1)", value, why);
  if (d == "none" || d == "auto") {   // that word, or a number
    if (lower(value) == d) return true;
    if (is_number(db, value, why)) return true;
    *why = "'" + value + "' is neither '" + d + "' nor a number";
    return false;
  }
  if (is_number(db, fallback, &ignored)) return is_number(db, value, why);
  bool numbers = fallback.find(',') != std::string::npos;
  for (const std::string& item : split_list(fallback)) numbers = numbers && is_number(db, item, &ignored);
  if (numbers) {
    for (const std::string& item : split_list(value))
      if (!is_number(db, item, why)) return false;
    return true;
  }
  return true;   // text (a trial, tensor or collection name, a list of names)
}

}  // namespace

std::vector<RuleSetting> check_settings(Database& db, const std::vector<std::string>& texts) {
  std::vector<RuleSetting> out;
  for (const std::string& text : texts) {
    const size_t dot = text.find('.'), eq = text.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot == 0 || eq == dot + 1)
      throw Error(ErrorKind::kUsage, "--param " + text + ": expected RULE.KEY=VALUE");
    RuleSetting s{text.substr(0, dot), text.substr(dot + 1, eq - dot - 1), text.substr(eq + 1), text};
    Statement source(db.handle(), "SELECT source FROM rule_catalog WHERE rule = ?1");
    if (!source.bind(1, s.rule).step())
      throw Error(ErrorKind::kUsage, "--param " + text + ": no such rule '" + s.rule + "'");
    // Built-in rules' parameters must exist; a custom rule's are checked when its file gives a
    // default (INSERT INTO rule_param with trial NULL).
    const bool builtin = source.text(0) == "builtin";
    Statement any(db.handle(), "SELECT 1 FROM rule_param_default WHERE rule = ?1");
    if (builtin || any.bind(1, s.rule).step()) {
      Statement d(db.handle(), "SELECT value FROM rule_param_default WHERE rule = ?1 AND param = ?2");
      if (!d.bind(1, s.rule).bind(2, s.key).step()) {
        std::string known;
        Statement all(db.handle(), "SELECT param FROM rule_param_default WHERE rule = ?1 ORDER BY param");
        all.bind(1, s.rule);
        while (all.step()) known += (known.empty() ? "" : ", ") + all.text(0);
        throw Error(ErrorKind::kUsage, "--param " + text + ": rule " + s.rule + " has no parameter '" + s.key +
                                           "' (known: " + known + ")");
      }
      // The kind is the rule file's default's, not a value stored since.
      std::string why;
      if (!of_default_kind(db, s.key, d.is_null(0) ? "" : d.text(0), s.value, &why))
        throw Error(ErrorKind::kUsage, "--param " + s.rule + "." + s.key + "=" + s.value + ": " + why);
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> store_settings(Database& db, const std::vector<RuleSetting>& settings,
                                                                const std::vector<std::string>& trials) {
  // The effective value of a parameter for a trial: its own row, else the default.
  Statement effective(db.handle(),
                      "SELECT coalesce((SELECT value FROM rule_param WHERE trial = ?1 AND rule = ?2 AND param = ?3),"
                      "                (SELECT value FROM rule_param WHERE trial IS NULL AND rule = ?2 AND param = ?3))");
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

std::vector<std::string> unmatched_selections(Database& db, const std::string& trial, const std::string& rule) {
  std::vector<std::pair<std::string, std::string>> regexes;   // (param, value), non-empty
  std::string tensor_regex, collection_names;
  {
    Statement q(db.handle(),
                "SELECT d.param, coalesce((SELECT value FROM rule_param WHERE trial = ?1 AND rule = ?2 AND param = d.param),"
                "                         (SELECT value FROM rule_param WHERE trial IS NULL AND rule = ?2 AND param = d.param), '')"
                " FROM rule_param_default d WHERE d.rule = ?2 ORDER BY d.param");
    q.bind(1, trial).bind(2, rule);
    while (q.step()) {
      const std::string param = q.text(0), value = q.text(1);
      if (param == "tensor_regex") tensor_regex = value;
      else if (param == "collection_names") collection_names = value;
      else if (!value.empty() && param.size() >= 5 && param.compare(param.size() - 5, 5, "regex") == 0)
        regexes.emplace_back(param, value);
    }
  }
  Statement total(db.handle(), "SELECT count(*) FROM tensors WHERE trial = ?1");
  total.bind(1, trial).step();
  const std::string none_of = " of its " + std::to_string(total.int64(0)) + " tensors";
  const std::string who = rule + " on trial " + trial + ": ";
  std::vector<std::string> notes;
  if (!tensor_regex.empty() || !collection_names.empty()) {
    Statement q(db.handle(),
                "SELECT count(*) FROM tensors t WHERE t.trial = ?1 AND (rule_regexp_any(nullif(?2, ''), t.tensor) OR "
                "EXISTS (SELECT 1 FROM collections k WHERE k.trial = t.trial AND k.tensor = t.tensor "
                "        AND rule_in_list(k.collection, nullif(?3, ''))))");
    q.bind(1, trial).bind(2, tensor_regex).bind(3, collection_names).step();
    if (q.int64(0) == 0) {
      std::string what;
      if (!tensor_regex.empty()) what = "tensor_regex '" + tensor_regex + "'";
      if (!collection_names.empty()) what += (what.empty() ? "" : " and ") + std::string("collection_names '") + collection_names + "'";
      notes.push_back(who + what + (tensor_regex.empty() || collection_names.empty() ? " matches" : " match") + " none" + none_of);
    }
  }
  for (const auto& [param, value] : regexes) {
    Statement q(db.handle(), "SELECT count(*) FROM tensors WHERE trial = ?1 AND rule_regexp_any(?2, tensor)");
    q.bind(1, trial).bind(2, value).step();
    if (q.int64(0) == 0) notes.push_back(who + param + " '" + value + "' matches none" + none_of);
  }
  return notes;
}

}  // namespace trialdb::rules
