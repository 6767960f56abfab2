// /api/status: what the page polls for live updates, a fingerprint of what the views show (the
// trials, their complete steps, whether they ended, the findings) that changes when an ingest or
// a rule run commits; and /api/info: the databases served and the limits.
#include <filesystem>

#include "schema/database.h"
#include "src/serve/api.h"

namespace trialdb::serve {

Json api_status(ReadConnection& c) {
  Statement q(c.handle(),
              "SELECT (SELECT count(*) FROM trials) || '/' || (SELECT total(ended) FROM trials) || '/' ||\n"
              "       (SELECT count(*) FROM steps WHERE complete) || '/' || (SELECT ifnull(max(step), -1) FROM steps "
              "WHERE complete)");
  q.step();
  std::string fingerprint = q.text(0);
  if (c.has_view("rule_findings")) {
    Statement f(c.handle(), "SELECT count(*) FROM rule_findings");
    f.step();
    fingerprint += '/';  // appended piece by piece: GCC 12's -Wrestrict at -O3
    fingerprint += std::to_string(f.int64(0));
  }
  return {{"fingerprint", fingerprint}, {"locked", false}};
}

Json api_info(ReadConnection&, const std::vector<std::string>& databases) {
  Json paths = Json::array();
  for (const std::string& d : databases) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(d, ec);
    paths.push_back(ec ? d : abs.string());
  }
  // The loadable extension beside this binary (build/bin/trialdb -> build/lib/trialdb.so), for
  // the SQL box's "copy for sqlite3" command.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path ext = exe.parent_path().parent_path() / "lib" / "trialdb";
  Json extension = nullptr;
  if (!ec && std::filesystem::exists(ext.string() + ".so", ec)) extension = ext.string();
  return {{"databases", paths},
          {"extension", extension},
          {"sql_row_limit", kSqlRowLimit},
          {"sql_time_limit_ms", kSqlTimeLimitMs}};
}

}  // namespace trialdb::serve
