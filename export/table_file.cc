// One public view of one trial as a Parquet file (table_file.h).
#include "export/table_file.h"

#include <zlib.h>

namespace trialdb::exporter {

namespace {

// Passes bytes on to the output file, counting them and computing their CRC-32 on the way.
class ChecksumSink : public parquet::ByteSink {
 public:
  explicit ChecksumSink(OutputFile& out) : out_(out), crc_(::crc32(0, nullptr, 0)) {}
  void write(std::string_view bytes) override {
    out_.write(bytes);
    crc_ = ::crc32_z(crc_, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
    bytes_ += bytes.size();
  }
  uint32_t crc32() const { return static_cast<uint32_t>(crc_); }
  uint64_t bytes() const { return bytes_; }

 private:
  OutputFile& out_;
  uLong crc_;
  uint64_t bytes_ = 0;
};

bool view_exists(Database& db, const std::string& name) {
  Statement q(db.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ?1");
  q.bind(1, name);
  return q.step();
}

void add_cell(parquet::FileWriter& w, const Statement& q, int col, parquet::ColumnType type) {
  sqlite3_stmt* s = q.handle();
  if (sqlite3_column_type(s, col) == SQLITE_NULL) {
    w.add_null();
    return;
  }
  switch (type) {
    case parquet::ColumnType::kBoolean: w.add(sqlite3_column_int64(s, col) != 0); break;
    case parquet::ColumnType::kInt64: w.add(static_cast<int64_t>(sqlite3_column_int64(s, col))); break;
    case parquet::ColumnType::kDouble: w.add(sqlite3_column_double(s, col)); break;
    case parquet::ColumnType::kString: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
      w.add(std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s, col))));
      break;
    }
    case parquet::ColumnType::kBytes: {
      const auto* p = static_cast<const char*>(sqlite3_column_blob(s, col));
      w.add(std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s, col))));
      break;
    }
  }
}

std::string quoted_identifier(const std::string& name) { return "\"" + name + "\""; }

}  // namespace

std::string select_sql(const PublicTable& table, bool by_steps) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < table.columns.size(); ++i)
    sql += (i ? ", v." : "v.") + quoted_identifier(table.columns[i].name);
  if (by_steps) sql += ", " + table.global_step;
  sql += "\nFROM " + quoted_identifier(table.name) + " v\nWHERE v.trial = ?1";
  if (by_steps) sql += " AND (" + table.global_step + ") > ?2 AND (" + table.global_step + ") <= ?3";
  return sql;
}

WrittenFile write_table_file(Database& db, const PublicTable& table, const std::string& trial,
                             std::optional<StepRange> steps, OutputFile& out, const parquet::WriterOptions& options) {
  ChecksumSink sink(out);
  parquet::FileWriter writer(table.columns, sink, options);
  WrittenFile file;
  if (view_exists(db, table.name)) {
    Statement q(db.handle(), select_sql(table, steps.has_value()));
    q.bind(1, trial);
    if (steps) q.bind(2, steps->after).bind(3, steps->through);
    const int step_col = static_cast<int>(table.columns.size());
    while (q.step()) {
      for (size_t c = 0; c < table.columns.size(); ++c) add_cell(writer, q, static_cast<int>(c), table.columns[c].type);
      writer.end_row();
      if (steps) {
        const int64_t step = q.int64(step_col);
        file.first_step = file.first_step ? std::min(*file.first_step, step) : step;
        file.last_step = file.last_step ? std::max(*file.last_step, step) : step;
      }
    }
  }
  writer.finish();
  file.rows = writer.rows();
  file.bytes = sink.bytes();
  file.crc32 = sink.crc32();
  return file;
}

}  // namespace trialdb::exporter
