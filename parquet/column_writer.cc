// One column chunk's data pages (column_writer.h).
#include "parquet/column_writer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <iterator>
#include <limits>
#include <tuple>
#include <type_traits>

#include "parquet/levels.h"
#include "parquet/plain.h"
#include "parquet/thrift_compact.h"
#include "schema/status.h"

namespace trialdb::parquet {

namespace {

constexpr int kDefinitionLevelBits = 1;  // flat optional columns: level 0 or 1
// The encoding of dictionary pages and of the data pages of indices: PLAIN_DICTIONARY, as
// format 1.0 writers (parquet-mr's, Arrow's) write it with data pages v1, which every reader takes.
constexpr format::Encoding::type kDictionaryEncoding = format::Encoding::PLAIN_DICTIONARY;

format::Type::type physical_type(ColumnType type) {
  switch (type) {
    case ColumnType::kBoolean: return format::Type::BOOLEAN;
    case ColumnType::kInt64: return format::Type::INT64;
    case ColumnType::kDouble: return format::Type::DOUBLE;
    case ColumnType::kString:
    case ColumnType::kBytes: return format::Type::BYTE_ARRAY;
  }
  return format::Type::BYTE_ARRAY;
}

// BOOLEAN PLAIN: one bit per value, LSB first.
std::string pack_booleans(std::string_view bytes) {
  std::string out((bytes.size() + 7) / 8, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i]) out[i / 8] = static_cast<char>(out[i / 8] | (1 << (i % 8)));
  return out;
}

// The bit width of a page's dictionary indices: as many bits as the largest index needs, and
// whole bytes beyond one byte. zstd finds a repeated run of indices (histogram_buckets' edges:
// the same buckets of another tensor or step) only when it starts at the same bit offset within a
// byte; at 13 bits a run repeats as the same bytes one time in eight. Whole bytes made the edges'
// pages 21% smaller compressed (bench/README.md), more than zstd's level 1 gives up against 3.
// A reader takes any width up to 32 (the page says it).
int index_bit_width(size_t entries) {
  constexpr int kByteBits = 8;
  const int needed = std::max(1, static_cast<int>(std::bit_width(entries - 1)));
  return needed <= kByteBits ? needed : (needed + kByteBits - 1) / kByteBits * kByteBits;
}

// Text and numbers. Booleans are a bit each in PLAIN already.
bool dictionary_encoded(ColumnType type) {
  return type == ColumnType::kString || type == ColumnType::kInt64 || type == ColumnType::kDouble;
}

}  // namespace

ColumnWriter::ColumnWriter(Column column, size_t page_bytes)
    : column_(std::move(column)),
      page_bytes_(page_bytes),
      dictionary_(dictionary_encoded(column_.type)),
      stats_(column_.type) {}

ColumnWriter::~ColumnWriter() {
  // The tasks use this writer's codecs; a copy of their futures held by the column following
  // this one would not wait for them. A page no longer in pages_aside_ was collected: done.
  for (const auto& page : pages_aside_) page.wait();
}

void ColumnWriter::add_null() {
  levels_.add(0);
  stats_.add_null();
  value_added();
}

void ColumnWriter::add(bool v) {
  levels_.add(1);
  page_values_.push_back(static_cast<char>(v));
  stats_.add(v);
  value_added();
}

void ColumnWriter::add(int64_t v) { add_number(v); }

void ColumnWriter::add(double v) { add_number(v); }

template <typename T>
void ColumnWriter::add_number(T v) {
  levels_.add(1);
  if (dictionary_) {
    add_number_index(v);
    if (dictionary_values_.size() > kMaxDictionaryBytes) give_up_dictionary();
    else if (chunk_values_ == 0 && indices_.size() == kDistinctProbeValues && numbers_mostly_distinct())
      numbers_as_plain();
  } else {
    append_plain(page_values_, v);
    stats_.add(v);
  }
  value_added();
}

template <typename T>
void ColumnWriter::add_number_index(T v) {
  const auto bits = std::bit_cast<uint64_t>(v);
  if (!has_last_ || bits != last_bits_) {  // a step or a mode repeats row after row: no lookup then
    const auto [index, added] = numbers_.insert(bits);
    if (added) {
      append_plain(dictionary_values_, v);
      stats_.add(v);  // the chunk's bounds are its distinct values' bounds
    }
    last_bits_ = bits;
    last_index_ = index;
    has_last_ = true;
  }
  indices_.push_back(last_index_);
}

void ColumnWriter::add(std::string_view v) {
  // A page's sizes are int32 in its header.
  if (v.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()) - page_values_.size() - 1024)
    throw Error(ErrorKind::kInvalidInput, "column '" + column_.name + "': a value of " + std::to_string(v.size()) +
                                              " bytes is larger than a Parquet page may be (2 GiB)");
  levels_.add(1);
  if (dictionary_) {
    add_to_dictionary(v);
  } else {
    append_plain(page_values_, v);
    stats_.add(v);
  }
  value_added();
}

void ColumnWriter::add_to_dictionary(std::string_view v) {
  if (!has_last_ || v != last_) {  // the views repeat a name row after row: no lookup then
    auto at = dictionary_index_.find(v);
    if (at == dictionary_index_.end()) {
      at = dictionary_index_.emplace(std::string(v), static_cast<uint32_t>(dictionary_index_.size())).first;
      append_plain(dictionary_values_, v);
      stats_.add(v);  // the chunk's bounds are its distinct values' bounds
    }
    last_.assign(v);
    last_index_ = at->second;
    has_last_ = true;
  }
  indices_.push_back(last_index_);
  if (dictionary_values_.size() > kMaxDictionaryBytes) give_up_dictionary();
}

void ColumnWriter::give_up_dictionary() {
  close_page();
  dictionary_ = false;
}

void ColumnWriter::value_added() {
  if (page_bytes_used() >= page_bytes_) close_page();
}

template <typename Append>
void ColumnWriter::add_run(size_t n, size_t value_bytes, uint8_t level, Append append) {
  while (n > 0) {
    // A piece of k >= 2 values grows the page by at most k * value_bytes + k / 8 + 1 bytes (the
    // levels), less than k * (value_bytes + 1): it stays below page_bytes_, so the page closes
    // after the value it would close after one by one (pieces of one value near its end).
    const size_t used = page_bytes_used();
    const size_t room = used < page_bytes_ ? page_bytes_ - used - 1 : 0;
    const size_t k = std::min(n, std::max<size_t>(1, room / (value_bytes + 1)));
    levels_.add(level, k);
    append(k);
    n -= k;
    value_added();
  }
}

namespace {

// Appends `v` k times in PLAIN encoding, from a block of copies: growing the string with resize
// would write every byte twice (zeros first).
template <typename T>
void append_plain_repeated(std::string& out, T v, size_t k) {
  constexpr size_t kBlock = 64;
  std::array<T, kBlock> block;
  std::fill_n(block.begin(), std::min(k, kBlock), v);
  while (k > 0) {
    const size_t n = std::min(k, kBlock);
    out.append(reinterpret_cast<const char*>(block.data()), n * sizeof v);
    k -= n;
  }
}

}  // namespace

void ColumnWriter::add_nulls(size_t n) {
  stats_.add_nulls(static_cast<int64_t>(n));
  add_run(n, 0, 0, [](size_t) {});
}

template <typename T>
void ColumnWriter::add_repeated_plain(T v, size_t n) {
  if (n == 0) return;
  stats_.add(v);
  add_run(n, sizeof v, 1, [&](size_t k) { append_plain_repeated(page_values_, v, k); });
}

void ColumnWriter::add_repeated(bool v, size_t n) { add_repeated_plain(v, n); }

void ColumnWriter::add_repeated(int64_t v, size_t n) { add_repeated_value(v, n); }

void ColumnWriter::add_repeated(double v, size_t n) { add_repeated_value(v, n); }

void ColumnWriter::add_repeated(std::string_view v, size_t n) { add_repeated_value(v, n); }

template <typename T>
void ColumnWriter::add_repeated_value(T v, size_t n) {
  if (n == 0) return;
  if (!dictionary_) {
    if constexpr (std::is_same_v<T, std::string_view>) {
      for (size_t i = 0; i < n; ++i) add(v);
    } else {
      add_repeated_plain(v, n);
    }
    return;
  }
  add(v);  // the dictionary, or PLAIN once it is given up, and the size check
  if (!dictionary_) {
    add_repeated_value(v, n - 1);
    return;
  }
  add_run(n - 1, sizeof(uint32_t), 1, [&](size_t k) { indices_.insert(indices_.end(), k, last_index_); });
}

template <typename T>
void ColumnWriter::add_values_of(std::span<const T> values, std::span<const int64_t> keys) {
  // Dictionary indices in pieces that fit the open page, as add_run's; a dictionary given up
  // within a piece leaves the piece's rest to PLAIN.
  while (dictionary_ && !values.empty()) {
    const size_t used = page_bytes_used();
    const size_t room = used < page_bytes_ ? page_bytes_ - used - 1 : 0;
    const size_t k = std::min(values.size(), std::max<size_t>(1, room / (sizeof(uint32_t) + 1)));
    size_t added = 0;
    if (keys.empty()) {
      while (added < k && dictionary_values_.size() <= kMaxDictionaryBytes) add_number_index(values[added++]);
    } else {
      // Most values are found in the keyed cache; the dictionary grows only on a miss.
      while (added < k) {
        const auto bits = std::bit_cast<uint64_t>(values[added]);
        uint32_t index = numbers_.cached(bits, keys[added]);
        if (index == NumberDictionary::kNotCached) {
          bool is_new;
          std::tie(index, is_new) = numbers_.insert(bits, keys[added]);
          if (is_new) {
            append_plain(dictionary_values_, values[added]);
            stats_.add(values[added]);  // the chunk's bounds are its distinct values' bounds
          }
        }
        indices_.push_back(index);
        ++added;
        if (dictionary_values_.size() > kMaxDictionaryBytes) break;
      }
      keys = keys.subspan(added);
    }
    levels_.add(1, added);
    values = values.subspan(added);
    if (dictionary_values_.size() > kMaxDictionaryBytes) give_up_dictionary();
    else value_added();
  }
  if (values.empty()) return;
  stats_.add_values(values);
  size_t at = 0;
  add_run(values.size(), sizeof(T), 1, [&](size_t k) {
    page_values_.append(reinterpret_cast<const char*>(values.data() + at), k * sizeof(T));
    at += k;
  });
}

void ColumnWriter::add_values(std::span<const int64_t> values) { add_values_of(values, {}); }

void ColumnWriter::add_values(std::span<const double> values) { add_values_of(values, {}); }

void ColumnWriter::add_values(std::span<const int64_t> values, std::span<const int64_t> keys) {
  add_values_of(values, keys);
}

void ColumnWriter::add_values(std::span<const double> values, std::span<const int64_t> keys) {
  add_values_of(values, keys);
}

size_t ColumnWriter::dictionary_entries() const {
  return column_.type == ColumnType::kString ? dictionary_index_.size() : numbers_.size();
}

bool ColumnWriter::dictionary_page_open() const { return dictionary_ && dictionary_entries() > 0; }

std::string ColumnWriter::page_body() const {
  const std::string levels = levels_.encode(kDefinitionLevelBits);
  std::string body;
  append_plain_length(body, static_cast<uint32_t>(levels.size()));
  body += levels;
  if (dictionary_page_open()) {
    // The indices' bit width (one byte), then the indices in the hybrid encoding.
    const int bit_width = index_bit_width(dictionary_entries());
    body.push_back(static_cast<char>(bit_width));
    body += encode_values(indices_, bit_width);
  } else if (column_.type == ColumnType::kBoolean) body += pack_booleans(page_values_);
  else body += page_values_;
  return body;
}

namespace {

// A data page whole: its header, then its body compressed.
CompressedPage data_page(std::string_view body, int32_t values, format::Encoding::type encoding, ZstdCodec& codec) {
  std::string compressed;
  codec.compress(body, compressed);
  format::DataPageHeader data;
  data.__set_num_values(values);
  data.__set_encoding(encoding);
  data.__set_definition_level_encoding(format::Encoding::RLE);
  data.__set_repetition_level_encoding(format::Encoding::RLE);
  format::PageHeader header;
  header.__set_type(format::PageType::DATA_PAGE);
  header.__set_uncompressed_page_size(static_cast<int32_t>(body.size()));
  header.__set_compressed_page_size(static_cast<int32_t>(compressed.size()));
  header.__set_data_page_header(data);
  CompressedPage page{compact_bytes(header), body.size()};
  page.header_bytes = page.bytes.size();
  page.bytes += compressed;
  return page;
}

}  // namespace

bool ColumnWriter::numbers_mostly_distinct() const {
  return dictionary_ && column_.type != ColumnType::kString &&
         static_cast<int64_t>(dictionary_entries()) * kMaxDistinctShare >
             chunk_values_ + static_cast<int64_t>(indices_.size());
}

void ColumnWriter::numbers_as_plain() {
  constexpr size_t kNumberBytes = sizeof(uint64_t);
  for (const uint32_t index : indices_) page_values_.append(dictionary_values_, index * kNumberBytes, kNumberBytes);
  indices_.clear();
  numbers_.clear();
  dictionary_values_.clear();
  has_last_ = false;
  dictionary_ = false;
}

void ColumnWriter::close_page() {
  if (levels_.size() == 0) return;
  // A number column whose dictionary holds more than 1 / kMaxDistinctShare of its values gains
  // less from it than its lookups cost and its dictionary page takes (a column of measurements
  // rather than of steps, edges or counts): on the chunk's first page, that page becomes PLAIN
  // and the chunk has no dictionary; later, PLAIN from the next page on.
  const bool plain_from_here = numbers_mostly_distinct();
  if (plain_from_here && chunk_values_ == 0) numbers_as_plain();
  std::string body = page_body();
  const auto values = static_cast<int32_t>(levels_.size());
  const format::Encoding::type encoding = dictionary_page_open() ? kDictionaryEncoding : format::Encoding::PLAIN;
  chunk_values_ += values;
  if (plain_from_here) dictionary_ = false;
  levels_.clear();
  page_values_.clear();
  indices_.clear();
  if (body.size() < kCompressAsideBytes) {
    collect_pages(0);  // pages stay in order
    append_page(data_page(body, values, encoding, codec_));
    return;
  }
  collect_pages(kMaxPagesAside - 1);
  pages_aside_bytes_ += body.size();
  auto shared_body = std::make_shared<const std::string>(std::move(body));
  if (const PageAside* other = previous_ ? &previous_->last_aside_ : nullptr;
      other && other->body && other->values == values && other->encoding == encoding && *other->body == *shared_body) {
    // The same header and bytes, compressed by the same settings: the same page.
    last_aside_ = {std::move(shared_body), values, encoding, other->page};
    ++pages_shared_;
  } else {
    // The codec of the page kMaxPagesAside before this one, which collect_pages has taken in.
    ZstdCodec& codec = aside_codecs_[pages_sent_aside_++ % kMaxPagesAside];
    last_aside_ = {shared_body, values, encoding,
                   std::async(std::launch::async, [shared_body, values, encoding, &codec] {
                     return data_page(*shared_body, values, encoding, codec);
                   }).share()};
  }
  pages_aside_.push_back(last_aside_.page);
}

void ColumnWriter::collect_pages(size_t keep) {
  while (pages_aside_.size() > keep) {
    CompressedPage page = pages_aside_.front().get();  // a copy; rethrows the compression's error
    pages_aside_.pop_front();
    pages_aside_bytes_ -= page.body_bytes;
    append_page(std::move(page));
  }
}

void ColumnWriter::append_page(CompressedPage page) {
  chunk_uncompressed_ += static_cast<int64_t>(page.header_bytes + page.body_bytes);
  chunk_compressed_ += static_cast<int64_t>(page.bytes.size());
  chunk_pages_.push_back(std::move(page.bytes));
}

std::string ColumnWriter::dictionary_page() {
  if (dictionary_entries() == 0) return "";
  std::string compressed;
  codec_.compress(dictionary_values_, compressed);
  format::DictionaryPageHeader dictionary;
  dictionary.__set_num_values(static_cast<int32_t>(dictionary_entries()));
  dictionary.__set_encoding(kDictionaryEncoding);
  format::PageHeader header;
  header.__set_type(format::PageType::DICTIONARY_PAGE);
  header.__set_uncompressed_page_size(static_cast<int32_t>(dictionary_values_.size()));
  header.__set_compressed_page_size(static_cast<int32_t>(compressed.size()));
  header.__set_dictionary_page_header(dictionary);
  std::string page = compact_bytes(header);
  chunk_uncompressed_ += static_cast<int64_t>(page.size() + dictionary_values_.size());
  page += compressed;
  return page;
}

ColumnChunkBytes ColumnWriter::finish_chunk() {
  close_page();
  collect_pages(0);
  ColumnChunkBytes chunk;
  std::string dictionary = dictionary_page();
  chunk.dictionary_page_bytes = dictionary.size();
  format::ColumnMetaData& m = chunk.meta;
  m.__set_type(physical_type(column_.type));
  if (dictionary.empty()) m.__set_encodings({format::Encoding::PLAIN, format::Encoding::RLE});
  else m.__set_encodings({kDictionaryEncoding, format::Encoding::PLAIN, format::Encoding::RLE});
  m.__set_path_in_schema({column_.name});
  m.__set_codec(format::CompressionCodec::ZSTD);
  m.__set_num_values(chunk_values_);
  m.__set_total_uncompressed_size(chunk_uncompressed_);
  m.__set_total_compressed_size(static_cast<int64_t>(dictionary.size()) + chunk_compressed_);
  m.__set_statistics(stats_.to_thrift());
  if (!dictionary.empty()) chunk.pages.push_back(std::move(dictionary));
  chunk.pages.insert(chunk.pages.end(), std::make_move_iterator(chunk_pages_.begin()),
                     std::make_move_iterator(chunk_pages_.end()));
  chunk_pages_.clear();
  chunk_compressed_ = 0;
  chunk_values_ = 0;
  chunk_uncompressed_ = 0;
  stats_.reset();
  dictionary_ = dictionary_encoded(column_.type);
  dictionary_values_.clear();
  dictionary_index_.clear();
  numbers_.clear();
  has_last_ = false;
  return chunk;
}

}  // namespace trialdb::parquet
