#include "kernels/bucket_runs.h"

#include <algorithm>
#include <charconv>

namespace trialdb {

namespace {
char* put_number(char* p, auto n) { return std::to_chars(p, p + 24, n).ptr; }
}  // namespace

// Written through a pointer into room made ahead: every value's histogram is written here, and
// appending it to the string piece by piece (the gap's zeros, the separator, the number) was
// ~8% of the ingest's instructions on the CNN profile. A run's last bucket is kept rather than
// its octave (one compare per bucket), and counts under 10, most of a small value's, are one
// character.
void BucketRunWriter::add(int64_t bucket, uint64_t count) {
  if (out_.size() - used_ < kMaxAdd) out_.resize(std::max(2 * out_.size(), used_ + kMaxAdd));
  char* p = out_.data() + used_;
  if (open_ && bucket <= run_last_ && bucket - next_ <= kMaxRunGap) {
    for (; next_ < bucket; ++next_) *p++ = ',', *p++ = '0';
    *p++ = ',';
  } else {
    if (open_) *p++ = ']', *p++ = ',';
    *p++ = '"';
    p = put_number(p, bucket);
    *p++ = '"', *p++ = ':', *p++ = '[';
    open_ = true;
    run_last_ = last_of_octave(bucket);
  }
  if (count < 10) *p++ = static_cast<char>('0' + count);
  else p = put_number(p, count);
  used_ = static_cast<size_t>(p - out_.data());
  next_ = bucket + 1;
}

std::string BucketRunWriter::finish() {
  out_.resize(used_);
  out_ += open_ ? "]}" : "}";
  std::string text = std::move(out_);
  // clear() and push_back rather than `out_ = "{"`: GCC 12 at -O3 warns about assigning a literal
  // to a moved-from string (-Wrestrict, GCC bug 105329).
  out_.clear();
  out_.push_back('{');
  used_ = 1;
  open_ = false;
  return text;
}

bool decode_bucket_runs(std::string_view text, std::vector<std::pair<int64_t, uint64_t>>* out) {
  out->clear();
  const char* p = text.data();
  const char* end = p + text.size();
  auto eat = [&](char c) { return p < end && *p == c ? (++p, true) : false; };
  auto number = [&](auto* n) {
    const auto r = std::from_chars(p, end, *n);
    if (r.ec != std::errc()) return false;
    p = r.ptr;
    return true;
  };
  if (!eat('{')) return false;
  if (eat('}')) return p == end;
  int64_t previous = INT64_MIN;
  do {
    int64_t bucket;
    if (!eat('"') || !number(&bucket) || !eat('"') || !eat(':') || !eat('[')) return false;
    if (bucket <= previous) return false;
    do {
      uint64_t count;
      if (!number(&count)) return false;
      if (count) out->emplace_back(bucket, count);
      previous = bucket++;
    } while (eat(','));
    if (!eat(']')) return false;
  } while (eat(','));
  return eat('}') && p == end;
}

}  // namespace trialdb
