#include "schema/histogram_blob.h"

#include <algorithm>
#include <charconv>

namespace trialdb {

namespace {

constexpr int kVarintGroupBits = 7;
constexpr uint8_t kVarintMore = 0x80;
constexpr int kMaxVarintBytes = 10;  // 64 bits in groups of 7

// Writes n's varint at p (at most kMaxVarintBytes); returns the end.
char* put_varint(char* p, uint64_t n) {
  while (n >= kVarintMore) {
    *p++ = static_cast<char>(static_cast<uint8_t>(n) | kVarintMore);
    n >>= kVarintGroupBits;
  }
  *p++ = static_cast<char>(n);
  return p;
}

// Packs counts of kBits bits each, least significant bits first, into ceil(n x kBits / 8) bytes.
template <int kBits, class Count>
char* pack(const Count* counts, size_t n, char* out) {
  constexpr size_t kPerByte = 8 / kBits;
  size_t i = 0;
  for (; i + kPerByte <= n; i += kPerByte) {
    uint8_t b = 0;
    for (size_t j = 0; j < kPerByte; ++j) b |= static_cast<uint8_t>(counts[i + j] << (j * kBits));
    *out++ = static_cast<char>(b);
  }
  if (i < n) {
    uint8_t b = 0;
    for (size_t j = 0; i + j < n; ++j) b |= static_cast<uint8_t>(counts[i + j] << (j * kBits));
    *out++ = static_cast<char>(b);
  }
  return out;
}

uint64_t zigzag(int64_t n) { return (static_cast<uint64_t>(n) << 1) ^ static_cast<uint64_t>(n >> 63); }
int64_t unzigzag(uint64_t n) { return static_cast<int64_t>(n >> 1) ^ -static_cast<int64_t>(n & 1); }

// The counts of a run packed kBits each (a width_bits() of 1, 2, 4 or 8), LSB first, into
// counts.size() counts: a loop per width, so that the shifts are constants.
template <int kBits>
void unpack_counts(const uint8_t* p, std::vector<uint64_t>& counts) {
  constexpr unsigned kMask = (1u << kBits) - 1;
  constexpr size_t kPerByte = 8 / kBits;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = (p[i / kPerByte] >> (kBits * (i % kPerByte))) & kMask;
}

// The bits a packed count of this width takes (0 for kVarint).
int width_bits(CountWidth w) {
  switch (w) {
    case CountWidth::kBits1: return 1;
    case CountWidth::kBits2: return 2;
    case CountWidth::kBits4: return 4;
    case CountWidth::kBits8: return 8;
    case CountWidth::kVarint: return 0;
  }
  return 0;
}

CountWidth narrowest_width(uint64_t max_count) {
  if (max_count < 2) return CountWidth::kBits1;
  if (max_count < 4) return CountWidth::kBits2;
  if (max_count < 16) return CountWidth::kBits4;
  if (max_count < 256) return CountWidth::kBits8;
  return CountWidth::kVarint;
}

}  // namespace

void HistogramBlobWriter::begin_run(int64_t first_bucket) {
  if (open_) end_run();
  run_first_ = first_bucket;
  open_ = true;
}

void HistogramBlobWriter::end_run() {
  add_run(run_first_, run_.data(), run_.size(), run_max_);
  run_.clear();
  run_max_ = 0;
  open_ = false;
}

void HistogramBlobWriter::add_run(int64_t run_first, const uint64_t* counts, size_t length, uint64_t counts_or) {
  write_run(run_first, counts, length, counts_or);
}

void HistogramBlobWriter::add_run(int64_t run_first, const uint32_t* counts, size_t length, uint64_t counts_or) {
  write_run(run_first, counts, length, counts_or);
}

// Written through a pointer into room made ahead, as the ingest writes every value's histogram.
template <class Count>
void HistogramBlobWriter::write_run(int64_t run_first, const Count* counts, size_t length, uint64_t counts_or) {
  if (length == 0) return;  // a run without counts is no run
  const CountWidth width = narrowest_width(counts_or);
  const size_t bits = static_cast<size_t>(width_bits(width));
  const size_t counts_bytes = bits ? (length * bits + 7) / 8 : kMaxVarintBytes * length;
  const size_t most = used_ + 2 * kMaxVarintBytes + counts_bytes;  // the most the run can take
  if (out_.size() < most) out_.resize(std::max(most, 2 * out_.size()));
  char* p = out_.data() + used_;
  p = put_varint(p, first_run_ ? zigzag(run_first) : static_cast<uint64_t>(run_first - next_));
  p = put_varint(p, static_cast<uint64_t>(length - 1) << kCountWidthBits | static_cast<uint64_t>(width));
  switch (width) {
    case CountWidth::kBits1: p = pack<1>(counts, length, p); break;
    case CountWidth::kBits2: p = pack<2>(counts, length, p); break;
    case CountWidth::kBits4: p = pack<4>(counts, length, p); break;
    case CountWidth::kBits8: p = pack<8>(counts, length, p); break;
    case CountWidth::kVarint:
      for (size_t i = 0; i < length; ++i) p = put_varint(p, counts[i]);
      break;
  }
  used_ = static_cast<size_t>(p - out_.data());
  next_ = run_first + static_cast<int64_t>(length);
  first_run_ = false;
}

std::string HistogramBlobWriter::finish() {
  if (open_) end_run();
  std::string blob(out_.data(), used_);
  clear();
  return blob;
}

void HistogramBlobWriter::clear() {
  used_ = 1;  // out_[0] stays the format byte
  run_.clear();
  run_max_ = 0;
  next_ = 0;
  open_ = false;
  first_run_ = true;
}

HistogramBlobReader::HistogramBlobReader(std::string_view blob)
    : p_(reinterpret_cast<const uint8_t*>(blob.data())), end_(p_ + blob.size()) {
  if (p_ == end_) fail("empty (no format byte)");
  else if (*p_ != kHistogramFormatPacked) fail("unknown format byte");
  else ++p_;
}

bool HistogramBlobReader::fail(const char* what) {
  if (error_.is_ok()) error_ = Status::invalid(std::string("histogram blob: ") + what);
  p_ = end_;
  return false;
}

bool HistogramBlobReader::varint(uint64_t* out) {
  uint64_t n = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (p_ == end_) return fail("truncated varint");
    const uint8_t b = *p_++;
    const uint64_t group = b & (kVarintMore - 1);
    if (i == kMaxVarintBytes - 1 && group > 1) return fail("varint over 64 bits");
    n |= group << (kVarintGroupBits * i);
    if (!(b & kVarintMore)) {
      *out = n;
      return true;
    }
  }
  return fail("varint over 64 bits");
}

bool HistogramBlobReader::next(int64_t* first_bucket, const std::vector<uint64_t>** counts) {
  if (p_ == end_) return false;
  uint64_t start, shape;
  if (!varint(&start) || !varint(&shape)) return false;
  int64_t first;
  if (first_run_) {
    first = unzigzag(start);
    if (first < -kHistogramBucketLimit || first > kHistogramBucketLimit) return fail("bucket out of range");
  } else {
    if (start > static_cast<uint64_t>(2 * kHistogramBucketLimit)) return fail("bucket out of range");
    first = next_ + static_cast<int64_t>(start);
  }
  const uint64_t width_code = shape & kCountWidthMask;
  if (width_code > static_cast<uint64_t>(CountWidth::kVarint)) return fail("unknown count width");
  const uint64_t length_code = shape >> kCountWidthBits;
  if (length_code >= static_cast<uint64_t>(kHistogramMaxRun)) return fail("run too long");
  const int64_t length = static_cast<int64_t>(length_code) + 1;
  if (first + length - 1 > kHistogramBucketLimit) return fail("bucket out of range");
  counts_.clear();
  if (const int bits = width_bits(static_cast<CountWidth>(width_code))) {
    const uint64_t bytes = (static_cast<uint64_t>(length) * bits + 7) / 8;
    if (bytes > static_cast<uint64_t>(end_ - p_)) return fail("truncated run");
    counts_.resize(static_cast<size_t>(length));
    switch (bits) {
      case 1: unpack_counts<1>(p_, counts_); break;
      case 2: unpack_counts<2>(p_, counts_); break;
      case 4: unpack_counts<4>(p_, counts_); break;
      default: unpack_counts<8>(p_, counts_); break;
    }
    p_ += bytes;
  } else {
    // Each count is at least one byte: a run longer than what is left is truncated.
    if (static_cast<uint64_t>(length) > static_cast<uint64_t>(end_ - p_)) return fail("truncated run");
    for (int64_t i = 0; i < length; ++i) {
      uint64_t c;
      if (!varint(&c)) return false;
      counts_.push_back(c);
    }
  }
  next_ = first + length;
  first_run_ = false;
  *first_bucket = first;
  *counts = &counts_;
  return true;
}

Status decode_histogram_blob(std::string_view blob, std::vector<std::pair<int64_t, uint64_t>>* out) {
  out->clear();
  HistogramBlobReader r(blob);
  int64_t first;
  const std::vector<uint64_t>* counts;
  while (r.next(&first, &counts))
    for (uint64_t c : *counts) {
      if (c) out->emplace_back(first, c);
      ++first;
    }
  return r.error();
}

Status histogram_blob_json(std::string_view blob, std::string* out) {
  out->assign(1, '{');
  HistogramBlobReader r(blob);
  int64_t first;
  const std::vector<uint64_t>* counts;
  char number[24];
  auto put = [&](auto n) { out->append(number, std::to_chars(number, number + sizeof number, n).ptr); };
  while (r.next(&first, &counts)) {
    if (out->size() > 1) out->push_back(',');
    out->push_back('"');
    put(first);
    out->append("\":[");
    for (size_t i = 0; i < counts->size(); ++i) {
      if (i) out->push_back(',');
      put((*counts)[i]);
    }
    out->push_back(']');
  }
  out->push_back('}');
  return r.error();
}

}  // namespace trialdb
