// Custom rule files (rule_file.h): read with a size limit, run under an authorizer.
#include "rules_sql/rule_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "schema/status.h"

namespace trialdb::rules {

namespace {

std::string lower(const char* s) {
  std::string out(s ? s : "");
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// What the authorizer allows: the file's statements (kFile), or the compiled bodies of the
// views and triggers it created (kCheck: only writes made inside the rule's own triggers are
// the file's; the probe's own write and the built-in rules' triggers are the runner's).
struct Guard {
  enum Mode { kFile, kCheck } mode = kFile;
  std::string own;      // "rule_<name>", lower case
  std::string refused;  // what the last refused action would have done
};

bool is_own(const Guard& g, const char* name) { return lower(name).rfind(g.own + "_", 0) == 0; }

int authorize(void* user, int action, const char* a1, const char* a2, const char* database, const char* inner) {
  Guard& g = *static_cast<Guard*>(user);
  const std::string arg1 = a1 ? a1 : "", arg2 = a2 ? a2 : "";
  auto refuse = [&](const std::string& what) {
    g.refused = what;
    return SQLITE_DENY;
  };
  if (database && lower(database) == "temp") return refuse("creates or changes a temporary object");
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: return SQLITE_OK;
    case SQLITE_FUNCTION: return lower(a2) == "load_extension" ? refuse("calls load_extension") : SQLITE_OK;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE: {
      const std::string table = lower(a1);
      // CREATE and DROP write the schema table; writing it otherwise needs PRAGMA writable_schema.
      if (table == "sqlite_master" || table == "sqlite_temp_master") return SQLITE_OK;
      if (g.mode == Guard::kCheck && !(inner && is_own(g, inner))) return SQLITE_OK;
      if (is_own(g, a1)) return SQLITE_OK;
      const char* verb = action == SQLITE_INSERT   ? "inserts into"
                         : action == SQLITE_UPDATE ? "updates"
                                                   : "deletes from";
      return refuse(std::string(verb) + " table " + arg1 + (inner ? std::string(" (in ") + inner + ")" : ""));
    }
    case SQLITE_CREATE_TABLE:
    case SQLITE_DROP_TABLE:
      return is_own(g, a1)
                 ? SQLITE_OK
                 : refuse((action == SQLITE_CREATE_TABLE ? "creates" : "drops") + std::string(" table ") + arg1);
    case SQLITE_CREATE_INDEX:  // also the automatic index of a PRIMARY KEY or UNIQUE: named by SQLite
    case SQLITE_DROP_INDEX: return is_own(g, a2) ? SQLITE_OK : refuse("creates or drops index " + arg1 + " on " + arg2);
    case SQLITE_CREATE_VIEW:
    case SQLITE_DROP_VIEW: {
      const std::string view = lower(a1);
      if (view == g.own + "_cfg") return refuse("defines view " + arg1 + ", which the declaration makes");
      return view == g.own || is_own(g, a1) ? SQLITE_OK : refuse("creates or drops view " + arg1);
    }
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_DROP_TRIGGER:
      return is_own(g, a1) && lower(a2) == "rule_progress" ? SQLITE_OK
                                                           : refuse("creates or drops trigger " + arg1 + " on " + arg2);
    case SQLITE_REINDEX:  // CREATE INDEX fills the new index
      return is_own(g, a1) ? SQLITE_OK : refuse("reindexes " + arg1);
    case SQLITE_ALTER_TABLE:  // RENAME TO would carry a table out of the rule's names
      return refuse("alters table " + arg2);
    case SQLITE_PRAGMA: return refuse("PRAGMA " + arg1);
    case SQLITE_ATTACH: return refuse("ATTACH");
    case SQLITE_DETACH: return refuse("DETACH");
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT: return refuse("controls the transaction (the runner's transaction holds the whole file)");
    default: return refuse("is not a statement a rule makes (authorizer action " + std::to_string(action) + ")");
  }
}

// The authorizer installed for the lifetime of the object.
class Authorized {
 public:
  Authorized(sqlite3* h, Guard* g) : h_(h) { sqlite3_set_authorizer(h_, authorize, g); }
  ~Authorized() { sqlite3_set_authorizer(h_, nullptr, nullptr); }
  Authorized(const Authorized&) = delete;
  Authorized& operator=(const Authorized&) = delete;

 private:
  sqlite3* h_;
};

// Where the statement that starts at `start` ends: after the first ';' that completes it (the
// text itself when none does).
std::string_view first_statement(const char* start) {
  const std::string_view text(start);
  for (size_t semicolon = text.find(';'); semicolon != std::string_view::npos;
       semicolon = text.find(';', semicolon + 1))
    if (sqlite3_complete(std::string(text.substr(0, semicolon + 1)).c_str())) return text.substr(0, semicolon + 1);
  return text;
}

// A statement's text for a message: from its first line that is not a comment, on one line.
std::string statement_text(std::string_view s) {
  for (;;) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    if (s.substr(0, 2) != "--") break;
    const size_t eol = s.find('\n');
    s.remove_prefix(eol == std::string_view::npos ? s.size() : eol + 1);
  }
  std::string out;
  for (char c : s.substr(0, 120)) out += c == '\n' || c == '\r' || c == '\t' ? ' ' : c;
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out + (s.size() > 120 ? "..." : "");
}

const char* const kAllowed =
    "a rule file may create its view rule_{}, views and tables rule_{}_*, and triggers rule_{}_* on rule_progress";

std::string allowed(const std::string& name) {
  std::string s = kAllowed;
  for (size_t at; (at = s.find("{}")) != std::string::npos;) s.replace(at, 2, name);
  return s;
}

// Compiles `sql` (never runs it) under the guard in check mode; throws naming `what`.
void check_compiles(sqlite3* h, Guard* g, const RuleFile& file, const std::string& sql, const std::string& what) {
  g->mode = Guard::kCheck;
  g->refused.clear();
  sqlite3_stmt* stmt = nullptr;
  int rc;
  std::string err;
  {
    Authorized on(h, g);
    rc = sqlite3_prepare_v2(h, sql.c_str(), -1, &stmt, nullptr);
    if (rc != SQLITE_OK) err = sqlite3_errmsg(h);
  }
  sqlite3_finalize(stmt);
  if (rc == SQLITE_OK) return;
  if (!g->refused.empty())
    throw Error(ErrorKind::kUsage, "--rule-file " + file.path + ": " + what + " " + g->refused + ": not allowed (" +
                                       allowed(file.declaration.name) + ")");
  throw Error(ErrorKind::kUsage, "--rule-file " + file.path + ": " + what + ": " + err);
}

}  // namespace

RuleFile read_rule_file(const std::string& path) {
  RuleFile f;
  f.path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::kUsage, "--rule-file " + path + ": cannot open the file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::kUsage,
                "--rule-file " + path + ": not a regular file (a FIFO, device or directory is not read)");
  }
  f.sql.resize(kMaxRuleFileBytes + 1);
  size_t got = 0;
  for (ssize_t n; got < f.sql.size() && (n = ::read(fd, f.sql.data() + got, f.sql.size() - got)) != 0;) {
    if (n < 0) {
      ::close(fd);
      throw Error(ErrorKind::kUsage, "--rule-file " + path + ": cannot read the file");
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > kMaxRuleFileBytes)
    throw Error(ErrorKind::kUsage,
                "--rule-file " + path + ": larger than " + std::to_string(kMaxRuleFileBytes) + " bytes");
  f.sql.resize(got);
  if (f.sql.find('\0') != std::string::npos)
    throw Error(ErrorKind::kUsage, "--rule-file " + path + ": not a text file");
  f.declaration = parse_declaration(f.sql, "--rule-file " + path);
  return f;
}

void run_rule_file(Database& db, const RuleFile& file) {
  sqlite3* h = db.handle();
  const std::string& name = file.declaration.name;
  Guard guard;
  guard.own = "rule_" + lower(name.c_str());
  const char* tail = file.sql.c_str();
  for (int n = 1; *tail; ++n) {
    const char* start = tail;
    sqlite3_stmt* stmt = nullptr;
    guard.mode = Guard::kFile;
    guard.refused.clear();
    int rc;
    bool prepared = false;
    std::string err;
    {
      Authorized on(h, &guard);
      rc = sqlite3_prepare_v2(h, start, -1, &stmt, &tail);
      prepared = rc == SQLITE_OK;
      if (prepared && stmt) {
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        }
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
      }
      if (rc != SQLITE_OK) err = sqlite3_errmsg(h);
    }
    sqlite3_finalize(stmt);
    const std::string where =
        "--rule-file " + file.path + ": statement " + std::to_string(n) + " (" +
        statement_text(prepared ? std::string_view(start, static_cast<size_t>(tail - start)) : first_statement(start)) +
        ")";
    if (rc != SQLITE_OK && !guard.refused.empty())
      throw Error(ErrorKind::kUsage, where + " " + guard.refused + ": not allowed (" + allowed(name) + ")");
    if (rc != SQLITE_OK) throw Error(ErrorKind::kUsage, where + ": " + err);
    if (!stmt) break;  // only comments and blanks were left
  }

  Statement view(h, "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ?1");
  if (!view.bind(1, "rule_" + name).step())
    throw Error(ErrorKind::kUsage, "--rule-file " + file.path + ": declares rule " + name +
                                       " but creates no view rule_" + name +
                                       " (columns trial, step, tensor, worker, value, message)");
  check_compiles(h, &guard, file, "SELECT trial, step, tensor, worker, value, message FROM rule_" + name,
                 "view rule_" + name + " (it must have the columns trial, step, tensor, worker, value, message)");
  // Every trigger on rule_progress fires for one of these; compiling them compiles the bodies.
  for (const char* probe :
       {"INSERT INTO rule_progress(trial, rule, step) SELECT '', '', NULL WHERE 0",
        "UPDATE rule_progress SET step = step, evaluated = evaluated WHERE 0", "DELETE FROM rule_progress WHERE 0"})
    check_compiles(h, &guard, file, probe, "a trigger of rule " + name);
}

}  // namespace trialdb::rules
