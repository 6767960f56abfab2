// trialdb compact: give a database's free space back to the file system (schema/compaction.h),
// with a progress bar on a terminal, and say how much it saved.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "schema/compaction.h"
#include "schema/database.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/progress.h"

namespace trialdb::cli {

namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int kBarWidth = 30;
constexpr const char* kEraseToEnd = "\x1b[K";

// "[#######        ] 45%  0.51 of 1.13 GB of pages copied"
std::string compaction_line(uint64_t done, uint64_t total, uint64_t page_size) {
  const int filled = total ? static_cast<int>(kBarWidth * done / total) : kBarWidth;
  const uint64_t percent = total ? 100 * done / total : 100;
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(kBarWidth - filled), ' ') + "] " + std::to_string(percent) + "%  " +
         format_bytes(static_cast<double>(done * page_size)) + " of " +
         format_bytes(static_cast<double>(total * page_size)) + " copied";
}

void run(const std::string& path, bool quiet) {
  auto db = open_db(path, OpenMode::kExisting);
  const uint64_t page_size = [&] {
    Statement q(db->handle(), "PRAGMA page_size");  // finalized before VACUUM, which wants none open
    return q.step() ? static_cast<uint64_t>(q.int64(0)) : 0;
  }();
  const bool bar = !quiet && isatty(STDERR_FILENO);
  auto last_draw = std::chrono::steady_clock::time_point();
  const auto start = std::chrono::steady_clock::now();
  const CompactionResult r = compact(*db, [&](uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (!bar || now - last_draw < kRedrawEvery) return;
    last_draw = now;
    std::fprintf(stderr, "\r%s%s", compaction_line(done, total, page_size).c_str(), kEraseToEnd);
    std::fflush(stderr);
  });
  if (bar) std::fprintf(stderr, "\r%s", kEraseToEnd);
  if (quiet) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t saved = r.bytes_before > r.bytes_after ? r.bytes_before - r.bytes_after : 0;
  std::cerr << "trialdb compact: " << printable(path) << ": " << format_bytes(static_cast<double>(r.bytes_before))
            << " -> " << format_bytes(static_cast<double>(r.bytes_after)) << ", saved "
            << format_bytes(static_cast<double>(saved));
  if (r.page_size_after != r.page_size_before)
    std::cerr << ", pages of " << r.page_size_before << " -> " << r.page_size_after << " bytes";
  std::cerr << " (" << format_duration(seconds) << ")\n";
}

}  // namespace

void add_compact(CLI::App& app) {
  auto db = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "compact", "Give the space of removed trials back to the file system (VACUUM), and say how much it saved");
  cmd->footer(
      "The rebuild also gives the file the page size its values call for (2 KiB unless most of their bytes\n"
      "are in large tensors; README.md), when no other process has it open.\n"
      "Example:\n  trialdb rm --db trials.db --trial old_run && trialdb compact --db trials.db");
  cmd->add_option("--db", *db, "Database file")->required();
  cmd->add_flag("--quiet", *quiet, "No progress bar and no summary");
  cmd->callback([db, quiet] { run(*db, *quiet); });
}

}  // namespace trialdb::cli
