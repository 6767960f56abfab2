#include "kernels/bucket_runs.h"

#include <charconv>

namespace trialdb {

namespace {
void append_number(std::string* out, auto n) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out->append(buf, r.ptr);
}
}  // namespace

void BucketRunWriter::add(int64_t bucket, uint64_t count) {
  const int64_t octave = bucket_octave(bucket);
  if (open_ && bucket - next_ <= kMaxRunGap && octave == octave_) {
    for (; next_ < bucket; ++next_) out_ += ",0";
    out_ += ',';
  } else {
    if (open_) out_ += "],";
    out_ += '"';
    append_number(&out_, bucket);
    out_ += "\":[";
    open_ = true;
    octave_ = octave;
  }
  append_number(&out_, count);
  next_ = bucket + 1;
}

std::string BucketRunWriter::finish() {
  std::string text = std::move(out_);
  text += open_ ? "]}" : "}";
  // clear() and push_back rather than `out_ = "{"`: GCC 12 at -O3 warns about assigning a literal
  // to a moved-from string (-Wrestrict, GCC bug 105329).
  out_.clear();
  out_.push_back('{');
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
