#include "ingest/store/wal_checkpointer.h"

#include <string>

namespace trialdb {

namespace {
constexpr int64_t kStartBytes = INT64_C(32) << 20;  // worth a pass
constexpr int64_t kMaxBytes = INT64_C(1) << 30;     // the writer waits for the pass (bounds the WAL)
}  // namespace

WalCheckpointer::WalCheckpointer(Database& db) : db_(db) {
  {
    Statement q(db_.handle(), "PRAGMA journal_mode");
    if (!q.step() || q.text(0) != "wal") return;
  }
  const char* file = sqlite3_db_filename(db_.handle(), "main");
  if (!file || !*file) return;  // in-memory or temporary database
  if (sqlite3_open_v2(file, &ckpt_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(ckpt_);
    ckpt_ = nullptr;
    return;  // the writer keeps its automatic checkpoint
  }
  sqlite3_busy_timeout(ckpt_, 1000);
  // A connection learns that the file is in WAL mode when it first reads it; until then a
  // checkpoint call does nothing (and says so only by answering -1 frames).
  if (sqlite3_exec(ckpt_, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close(ckpt_);
    ckpt_ = nullptr;
    return;
  }
  sqlite3_wal_hook(db_.handle(), &WalCheckpointer::on_wal_commit, this);  // replaces the automatic checkpoint
  thread_ = std::thread([this] { run(); });
}

WalCheckpointer::~WalCheckpointer() {
  if (!ckpt_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  sqlite3_wal_autocheckpoint(db_.handle(), db_.wal_frames(kWalAutoCheckpointBytes));  // also removes our hook
  sqlite3_close(ckpt_);
}

int WalCheckpointer::on_wal_commit(void* self, sqlite3*, const char*, int frames) {
  auto* c = static_cast<WalCheckpointer*>(self);
  std::lock_guard<std::mutex> lock(c->mu_);
  c->wal_frames_ = frames;
  return SQLITE_OK;
}

void WalCheckpointer::after_commit() {
  if (!ckpt_) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (wal_frames_ < db_.wal_frames(kStartBytes)) return;
  wanted_ = true;
  cv_.notify_all();
  if (wal_frames_ >= db_.wal_frames(kMaxBytes)) {
    // The thread fell behind: let it finish a pass that starts after this commit, so every frame
    // is copied and the writer's next transaction restarts the WAL from its beginning.
    uint64_t target = passes_done_ + (running_ ? 2 : 1);
    cv_.wait(lock, [&] { return passes_done_ >= target || stop_; });
    wal_frames_ = 0;
  }
}

void WalCheckpointer::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return wanted_ || stop_; });
    if (!wanted_) return;  // stopping, and every pass asked for is done
    wanted_ = false;
    running_ = true;
    lock.unlock();
    // PASSIVE: copies what it can without waiting for the writer or readers; SQLITE_BUSY only
    // means another checkpoint runs, and any other error leaves the frames for the next pass
    // or for the writer's checkpoint at close, so the result is not needed here.
    sqlite3_wal_checkpoint_v2(ckpt_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
    running_ = false;
    ++passes_done_;
    cv_.notify_all();
  }
}

}  // namespace trialdb
