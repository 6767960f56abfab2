// One column of the row group being written: its values encoded into data pages (v1) of about
// page_bytes each, with definition levels (1 = a value, 0 = NULL), each page compressed with zstd
// once it is full (large pages on a thread of their own), and the chunk's statistics.
// finish_chunk() hands the row group's pages over and starts the next row group.
//
// Strings and numbers are dictionary-encoded (a dictionary page of the chunk's distinct values
// and data pages of their indices, PLAIN_DICTIONARY), as Parquet writers do by default: the views
// repeat a few names (tensor, worker, mode, reduction) and steps on every row, and
// histogram_buckets' edges and counts come from a few thousand values; the indices of such a
// column take a few bits per row (whole bytes beyond eight: index_bit_width in the .cc) where
// PLAIN values would take 8 bytes or more to write and compress (zstd was nearly all of an
// export's instructions). Once the dictionary passes
// kMaxDictionaryBytes, or a number column's dictionary holds more than 1 / kMaxDistinctShare of
// the chunk's values, the chunk's later pages are PLAIN (readers take both in one chunk); when
// that is so on the chunk's first page (judged after kDistinctProbeValues values, and when it
// closes), the chunk is PLAIN throughout.
// Booleans are PLAIN.
#pragma once
#include <cstdint>
#include <string>
#include <array>
#include <deque>
#include <future>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parquet/column.h"
#include "parquet/levels.h"
#include "parquet/number_dictionary.h"
#include "parquet/parquet_format_types.h"
#include "parquet/statistics.h"
#include "parquet/zstd_codec.h"

namespace trialdb::parquet {

// A column chunk ready to be placed in the file: its pages (headers and compressed data) and its
// metadata, data_page_offset left for the file writer to set.
struct ColumnChunkBytes {
  // The dictionary page (if any), then the data pages, each its header and compressed body: kept
  // apart, so that a chunk of many pages is never copied into one string as it grows.
  std::vector<std::string> pages;
  size_t dictionary_page_bytes = 0;  // 0: no dictionary page
  format::ColumnMetaData meta;
};

inline constexpr size_t kMaxDictionaryBytes = 1u << 20;
inline constexpr int64_t kMaxDistinctShare = 2;
// A number column's first page is judged after this many values too: mostly distinct ones
// (measurements) go PLAIN at once rather than filling a dictionary of a page's worth of values,
// a hash table of hundreds of thousands of entries whose probes miss the cache.
inline constexpr size_t kDistinctProbeValues = 4096;

// Pages of at least kCompressAsideBytes are compressed on a thread of their own while the column
// goes on filling the next page (zstd is a fifth of an export's CPU), at most kMaxPagesAside at a
// time per column, in order; smaller ones (small tables, the last page of a file) at once.
// A column that follows another (follow()) takes, instead of compressing it again, a page of the
// same bytes (and values and encoding) as the one the other column last sent aside:
// histogram_buckets' lo and hi see each bucket's two edges first in the same row, so their
// dictionary indices are the same page for page.
inline constexpr size_t kCompressAsideBytes = 256u << 10;
inline constexpr size_t kMaxPagesAside = 2;

// A data page ready for its chunk: header and compressed body, and the sizes the metadata counts.
struct CompressedPage {
  std::string bytes;
  size_t body_bytes = 0;  // uncompressed
  size_t header_bytes = 0;
};

class ColumnWriter {
 public:
  ColumnWriter(Column column, size_t page_bytes);
  ~ColumnWriter();  // waits for the pages being compressed aside
  ColumnWriter(const ColumnWriter&) = delete;
  ColumnWriter& operator=(const ColumnWriter&) = delete;

  // The column before this one in the file, whose last page compressed aside this one's may
  // repeat; it must outlive this writer's use.
  void follow(const ColumnWriter* previous) { previous_ = previous; }
  // Data pages taken from the column followed rather than compressed here.
  size_t pages_shared() const { return pages_shared_; }

  void add_null();
  void add(bool v);
  void add(int64_t v);
  void add(double v);
  void add(std::string_view v);  // kString and kBytes
  // Many values at once: `n` NULLs, one value `n` times, or each of a span. The pages are those
  // the values added one by one would make; the statistics see a repeated value once.
  void add_nulls(size_t n);
  void add_repeated(bool v, size_t n);
  void add_repeated(int64_t v, size_t n);
  void add_repeated(double v, size_t n);
  void add_repeated(std::string_view v, size_t n);
  void add_values(std::span<const int64_t> values);
  void add_values(std::span<const double> values);
  // The same, each value named by the key at its position (the same key for the same value, a
  // small integer: NumberDictionary's keyed lookup); the pages are those add_values makes.
  void add_values(std::span<const int64_t> values, std::span<const int64_t> keys);
  void add_values(std::span<const double> values, std::span<const int64_t> keys);

  const Column& column() const { return column_; }
  // Bytes of the row group so far before compression (closed pages and the open one).
  size_t uncompressed_bytes() const {
    return chunk_uncompressed_ + pages_aside_bytes_ + dictionary_values_.size() + page_bytes_used();
  }
  ColumnChunkBytes finish_chunk();

 private:
  void value_added();
  template <typename T>
  void add_number(T v);  // INT64 and DOUBLE
  template <typename T>
  void add_number_index(T v);  // its dictionary index to the open page
  template <typename T>
  void add_repeated_value(T v, size_t n);  // numbers and strings
  void give_up_dictionary();               // PLAIN from the next page on
  bool numbers_mostly_distinct() const;    // the dictionary does not pay (close_page)
  void numbers_as_plain();                 // the open page's indices as their PLAIN numbers, no dictionary
  // Adds `n` values of `value_bytes` each (in the page) with definition level `level`, in pieces
  // that fit the open page: append(k) appends the next k values.
  template <typename Append>
  void add_run(size_t n, size_t value_bytes, uint8_t level, Append append);
  template <typename T>
  void add_repeated_plain(T v, size_t n);  // booleans (one byte each until the page closes) and numbers
  template <typename T>
  void add_values_of(std::span<const T> values, std::span<const int64_t> keys);  // keys: none or one a value
  size_t page_bytes_used() const {
    return page_values_.size() + indices_.size() * sizeof(uint32_t) + levels_.size() / 8;
  }
  void close_page();
  void collect_pages(size_t keep);  // takes pages compressed aside into the chunk until `keep` are left
  void append_page(CompressedPage page);
  std::string page_body() const;               // levels with their length, then the values
  void add_to_dictionary(std::string_view v);  // its index, and v to the dictionary if new
  size_t dictionary_entries() const;
  bool dictionary_page_open() const;  // the open page holds dictionary indices
  std::string dictionary_page();      // its header and compressed values; "" without a dictionary

  Column column_;
  size_t page_bytes_;
  ZstdCodec codec_;
  PageLevels levels_;        // the open page's definition levels
  std::string page_values_;  // its PLAIN values (booleans: one byte each until the page closes)
  // Dictionary encoding: whether it is still in use in this chunk, the dictionary's PLAIN values
  // and the index of each (strings' or numbers'), the open page's indices, the last value added.
  bool dictionary_ = false;
  std::string dictionary_values_;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> dictionary_index_;
  NumberDictionary numbers_;
  std::vector<uint32_t> indices_;
  std::string last_;
  uint64_t last_bits_ = 0;
  uint32_t last_index_ = 0;
  bool has_last_ = false;
  // The codecs of pages compressed aside, used in turn (a zstd context costs more to make than a
  // page to compress); the destructor waits for the pages' work, whose futures the column
  // following this one may share (a shared future does not wait when destroyed).
  std::array<ZstdCodec, kMaxPagesAside> aside_codecs_;
  size_t pages_sent_aside_ = 0;
  std::deque<std::shared_future<CompressedPage>> pages_aside_;  // being compressed, in page order
  size_t pages_aside_bytes_ = 0;                                // their bodies' bytes
  // The page this column last sent aside, which the column following it may take (follow()).
  struct PageAside {
    std::shared_ptr<const std::string> body;  // uncompressed
    int32_t values = 0;
    format::Encoding::type encoding = format::Encoding::PLAIN;
    std::shared_future<CompressedPage> page;
  };
  PageAside last_aside_;
  const ColumnWriter* previous_ = nullptr;
  size_t pages_shared_ = 0;
  std::vector<std::string> chunk_pages_;
  int64_t chunk_compressed_ = 0;  // their bytes
  int64_t chunk_values_ = 0;
  int64_t chunk_uncompressed_ = 0;
  ColumnStatistics stats_;
};

}  // namespace trialdb::parquet
