// One incremental pass over a trial (ingester.h).
#include "ingest/pipeline/ingester.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "ingest/format/index_file.h"
#include "ingest/format/index_file_writer.h"
#include "ingest/pipeline/catalog.h"
#include "ingest/pipeline/file_ledger.h"
#include "ingest/pipeline/ordered_pool.h"
#include "ingest/pipeline/prepare_file.h"
#include "ingest/pipeline/prepared_file.h"
#include "ingest/pipeline/step_completion.h"
#include "ingest/pipeline/tensor_summary_writer.h"
#include "ingest/pipeline/value_backfill.h"
#include "ingest/pipeline/value_writer.h"
#include "ingest/store/bulk_load.h"
#include "ingest/store/wal_checkpointer.h"

namespace trialdb {

namespace {

constexpr std::string_view kEndMarker = "training_job_end.ts";
constexpr std::string_view kIndexSuffix = ".json";

// The window of files prepared ahead of the writer: two per thread, files of fewer bytes than
// kLightFileBytes not counting, up to kFilesAhead in all (ordered_pool.h). A trial that saves its
// big tensors every n steps and a loss every step then has its next big file prepared while the
// writer stores this one, rather than only the small files between them.
constexpr uint64_t kLightFileBytes = 1u << 20;
constexpr size_t kFilesAhead = 64;

// Commit policy: a transaction commits after this many event bytes or files...
constexpr size_t kCommitBytes = 64u << 20;
constexpr size_t kCommitFiles = 256;
// ...and a bulk load (while in effect) far less often: each commit's fdatasync waits for the
// device to finish the writes before it, and nobody reads the database meanwhile.
constexpr size_t kBulkCommitBytes = size_t{1} << 30;
constexpr size_t kBulkCommitFiles = 4096;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string default_trial_name(const std::string& location) {
  std::string s = location;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  const size_t slash = s.rfind('/');
  std::string base = slash == std::string::npos ? s : s.substr(slash + 1);
  return base.empty() ? s : base;
}

Ingester::Ingester(Database& db, TrialSource& source, IngestOptions options, ValueBufferLimits value_buffer)
    : db_(db), source_(source), opt_(std::move(options)) {
  catalog_ = std::make_unique<Catalog>(db_, opt_.name.empty() ? default_trial_name(source_.root()) : opt_.name,
                                       source_.root());
  ledger_ = std::make_unique<FileLedger>(db_, catalog_->trial_id());
  steps_ = std::make_unique<StepCompletion>(db_, catalog_->trial_id());
  summary_ = std::make_unique<TensorSummaryWriter>(db_, catalog_->trial_id());
  writer_ = std::make_unique<ValueWriter>(db_, catalog_->trial_id(), opt_.compress, *summary_, value_buffer);
}

Ingester::~Ingester() = default;

int64_t Ingester::trial_id() const { return catalog_->trial_id(); }
const std::string& Ingester::trial_name() const { return catalog_->name(); }

void Ingester::record_error(const Status& e, IngestStats* stats) {
  stats->errors.push_back(e);
  ledger_->record_error(e);
}

void Ingester::record_retry(const Status& e, IngestStats* stats) {
  if (retries_reported_.insert(e.to_string()).second) stats->errors.push_back(e);
  ledger_->record_error(e);
}

// The index files not ingested yet, in (step, worker) order. What the listing found but cannot
// ingest is reported: a path the source could not offer (a folder it could not list, a FIFO, a
// dangling symlink), a .json whose name is not <step>_<worker>.json, or one outside the folder of
// its step (index/<step / 1000>/), which also leaves every (step, worker) one path.
//
// The first pass of a run, and every pass once training has ended, list all of index/: a file
// may land after later steps completed (a step written late by a worker of its own, or a whole
// step late), below where a repeated listing starts. The passes between (--follow) start there.
std::vector<PendingFile> Ingester::list_pending(IngestStats* stats, bool ended) {
  const std::string start_after =
      listed_whole_ && !ended ? ledger_->list_start_after(catalog_->expected_workers()) : std::string();
  listed_whole_ = true;
  std::vector<PendingFile> pending;
  std::vector<Status> permanent, retry;
  std::vector<std::string> skipped;  // index files of steps the selection leaves out
  std::set<std::string> listed;
  for (auto& f : source_.list("index/", start_after)) {
    listed.insert(f.path);
    if (ledger_->ingested(f.path) || ledger_->partial_under(f.path, selection_->key())) continue;
    PendingFile p{f.path, 0, {}, {}};
    const bool named = parse_index_path(f.path, &p.step, &p.worker);
    const int64_t step = named ? p.step : Status::kNoStep;
    if (!f.problem.is_ok()) {
      (f.problem.kind() == ErrorKind::kIo ? retry : permanent).push_back(f.problem.at(f.path, step));
    } else if (!named) {
      if (ends_with(f.path, kIndexSuffix))
        permanent.push_back(Status::invalid("index file name is not <12-digit step>_<worker>.json").at(f.path));
    } else if (f.path != index_file_name(p.step, p.worker)) {
      permanent.push_back(Status::invalid("index file is not where its step's index files are (" +
                                          index_file_name(p.step, p.worker) + ")")
                              .at(f.path, step));
    } else if (!selection_->selects_step(p.step)) {
      if (!ledger_->partial(f.path)) skipped.push_back(f.path);
    } else {
      if (ledger_->partial(f.path)) p.stored = ledger_->stored_tensors(p.step, p.worker);
      pending.push_back(std::move(p));
    }
  }
  const std::vector<std::string> gone = ledger_->unlisted(listed, start_after);
  if (!permanent.empty() || !retry.empty() || !gone.empty() || !skipped.empty()) {
    Transaction tx(db_);
    for (const auto& path : skipped) ledger_->mark_partial(path, selection_->key());
    for (const auto& e : permanent) {
      record_error(e, stats);
      ledger_->mark_ingested(e.file());
    }
    for (const auto& e : retry) {
      record_retry(e, stats);
      if (!ledger_->waiting(e.file())) ledger_->mark_waiting(e.file());
    }
    for (const auto& w : gone) ledger_->forget_waiting(w);
    tx.commit();
    if (opt_.strict && !(permanent.empty() && retry.empty()))
      throw Error(permanent.empty() ? retry.front() : permanent.front());
  }
  std::sort(pending.begin(), pending.end(), [](const PendingFile& a, const PendingFile& b) {
    return a.step != b.step ? a.step < b.step : a.worker < b.worker;
  });
  return pending;
}

// Writes one prepared file inside the open transaction: its step, values, errors and ledger row.
void Ingester::write_file(PreparedFile& f, IngestStats* stats) {
  if (ledger_->ingested_by_another(f.file.path)) return;
  if (!f.index_valid) {  // unusable index (ended trial): report it, never look at it again
    for (const auto& e : f.errors) record_error(e, stats);
    ledger_->mark_ingested(f.file.path);
    return;
  }
  const int64_t worker_id = catalog_->worker_id(f.file.worker);
  const int64_t tensor_step = steps_->record_step(f);
  stats->values += writer_->write(
      f, worker_id, tensor_step, [this](const std::string& name) { return catalog_->tensor_id(name); },
      [&](const Status& e) { record_error(e, stats); });
  for (const auto& e : catalog_->take_membership_errors()) record_error(e, stats);
  for (const auto& e : f.errors) record_error(e, stats);
  steps_->record_step_worker(f.file.step, worker_id);
  if (f.left_out) ledger_->mark_partial(f.file.path, selection_->key());
  else ledger_->mark_ingested(f.file.path);
  ++stats->files_ingested;
}

// --values all: the bytes of values stored without them, before anything new is read.
size_t Ingester::add_missing_values(IngestStats* stats) {
  // Nearly every byte written is a blob appended to the file: written once, as in a pass.
  std::unique_ptr<BulkLoad> bulk;
  if (opt_.bulk_load) bulk = std::make_unique<BulkLoad>(db_);
  std::vector<Status> errors;
  const size_t added = trialdb::add_missing_values(
      db_, source_, catalog_->trial_id(), *selection_, opt_.compress, [&](const Status& e) { errors.push_back(e); },
      &stats->bytes_read);
  if (!errors.empty()) {
    Transaction tx(db_);
    for (const auto& e : errors) record_error(e, stats);
    tx.commit();
    if (opt_.strict) throw Error(errors.front());
  }
  return added;
}

IngestStats Ingester::run_once() {
  IngestStats stats;
  // The end marker is checked before listing: everything listed after it is final.
  const bool ended = source_.exists(std::string(kEndMarker));
  stats.ended = ended;
  // Collections files are read on every pass: their errors count once per Ingester.
  catalog_->load_collections(source_, ended, [&](const Status& e) { record_retry(e, &stats); });
  ledger_->reload_waiting();
  if (opt_.strict && !stats.errors.empty()) throw Error(stats.errors.front());
  selection_ = std::make_unique<Selection>(opt_.selection, *catalog_);
  if (opt_.add_missing_values) stats.values_added = add_missing_values(&stats);

  std::vector<PendingFile> pending = list_pending(&stats, ended);

  // Preparing: a window of files ahead of the writer, bounded by the read-ahead budget.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = std::min(opt_.threads > 0 ? opt_.threads : cores, kMaxThreads);
  const PoolWindow window{static_cast<size_t>(threads) * 2, kFilesAhead};  // the pool keeps any >= heavy
  ReadBudget budget(kReadAheadBytes);
  PrepareOptions prepare;
  prepare.ended = ended;
  prepare.compress = opt_.compress;
  prepare.threads = threads;
  prepare.max_blob_bytes = static_cast<uint64_t>(sqlite3_limit(db_.handle(), SQLITE_LIMIT_LENGTH, -1));
  prepare.budget = &budget;
  if (!selection_->whole()) prepare.selection = selection_.get();
  prepare.store_values = opt_.store_values;
  // Writing: a rollback journal if asked for and nobody else has the database open, else the
  // WAL with checkpoints beside the writer. Both are declared before tx: a transaction left open
  // by an exception is rolled back before they end.
  std::unique_ptr<BulkLoad> bulk;
  std::unique_ptr<WalCheckpointer> checkpointer;
  if (!pending.empty() && opt_.bulk_load) bulk = std::make_unique<BulkLoad>(db_);
  if (!pending.empty() && !(bulk && bulk->active())) checkpointer = std::make_unique<WalCheckpointer>(db_);
  std::unique_ptr<Transaction> tx;
  size_t tx_bytes = 0, tx_files = 0;
  auto completed_steps = [&](int64_t completed) {
    stats.steps_completed += completed;
    if (completed > 0 && opt_.on_steps_completed) opt_.on_steps_completed(completed);
  };
  auto commit = [&] {
    if (!tx) return;
    writer_->flush();  // what completes steps reads the values
    catalog_->flush();
    const int64_t completed = steps_->complete(catalog_->expected_workers(), false, *summary_);
    tx->commit();
    tx.reset();
    if (bulk) bulk->size_cache(false);  // what runs between transactions (rules) reads at random
    if (checkpointer) checkpointer->after_commit();
    tx_bytes = tx_files = 0;
    completed_steps(completed);
  };
  // --strict: what was committed stays, the error is recorded, and the pass stops.
  auto stop_strict = [&](const Status& e) {
    commit();
    Transaction etx(db_);
    record_error(e, &stats);
    etx.commit();
    throw Error(e);
  };
  // Files are prepared on `threads` long-lived threads, at most `window` ahead of the writer
  // (ordered_pool.h). Started last: where few threads can be had (a pids limit), the writer's
  // helpers above take them, and the writer prepares each file itself when it gets to it.
  std::optional<OrderedPool<PreparedFile>> preparing(
      std::in_place, pending.size(), static_cast<size_t>(threads), window,
      [this, &pending, &prepare](size_t t) { return prepare_file(source_, pending[t], t, prepare); },
      [](const PreparedFile& f) { return f.bytes < kLightFileBytes; });
  try {
    for (size_t i = 0; i < pending.size(); ++i) {
      PreparedFile f = preparing->take(i);
      struct Release {
        ReadBudget& budget;
        uint64_t bytes;
        ~Release() { budget.release(bytes); }
      } release{budget, f.reserved};
      stats.bytes_read += f.bytes;
      if (f.status == FileStatus::kWait || f.status == FileStatus::kRetry) {
        if (f.status == FileStatus::kRetry && opt_.strict) stop_strict(f.errors.front());
        if (f.status == FileStatus::kWait) ++stats.files_waiting;
        if (!f.errors.empty() || !ledger_->waiting(f.file.path)) {
          if (!tx) tx = std::make_unique<Transaction>(db_);
          for (const auto& e : f.errors) record_retry(e, &stats);
          if (!ledger_->waiting(f.file.path)) ledger_->mark_waiting(f.file.path);
        }
      } else {
        if (f.index_valid) steps_->check_mode(f);
        if (opt_.strict && !f.errors.empty()) stop_strict(f.errors.front());
        if (!tx) tx = std::make_unique<Transaction>(db_);
        write_file(f, &stats);
        // Whether the transaction only appends is known once its first file is written.
        if (bulk && tx_files == 0) bulk->size_cache(writer_->defers_step_index());
        if (f.mapped_span && f.mapped_span->shrank())  // the open transaction is rolled back
          throw Error(Status::io("the file shrank while its tensors were being stored (truncated by another "
                                 "process?); nothing of it was stored. Run the ingest again.")
                          .at(source_.root() + "/" + f.mapped_file));
        tx_bytes += f.bytes;
        ++tx_files;
        // At the usual size, unless a bulk load still in effect waits for its own larger one
        // (in_effect is a query: asked only once the usual size is reached).
        const bool usual_size = tx_bytes >= kCommitBytes || tx_files >= kCommitFiles;
        const bool bulk_size = tx_bytes >= kBulkCommitBytes || tx_files >= kBulkCommitFiles;
        if (usual_size && (bulk_size || !bulk || !bulk->in_effect())) commit();
      }
      if (opt_.progress) opt_.progress(i + 1, pending.size());
    }
    commit();
  } catch (...) {
    writer_->discard();  // its transaction is rolled back
    catalog_->discard();
    budget.abort();
    preparing.reset();  // lets the files being prepared finish
    throw;
  }
  if (ended) {
    Transaction etx(db_);
    Statement u(db_.handle(), "UPDATE trial SET ended = 1 WHERE trial_id = ?");
    u.bind(1, catalog_->trial_id()).run();
    const int64_t completed = steps_->complete(catalog_->expected_workers(), true, *summary_);
    Statement any(db_.handle(), "SELECT EXISTS (SELECT 1 FROM step WHERE trial_id = ?)");
    any.bind(1, catalog_->trial_id());
    if (any.step() && any.int64(0) == 0)
      record_error(Status::invalid("training has ended (" + std::string(kEndMarker) + ") but the trial has no steps")
                       .at("index/"),
                   &stats);
    etx.commit();
    completed_steps(completed);
  }
  return stats;
}

}  // namespace trialdb
