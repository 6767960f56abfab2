#include "schema/page_size_policy.h"

#include <algorithm>
#include <utility>

namespace trialdb {

namespace {

// SQLite's file format (fileformat2.html, "B-tree Pages" and "Cell Payload Overflow Pages").
constexpr uint64_t kLeafHeaderBytes = 8;       // a table b-tree leaf's page header
constexpr uint64_t kInteriorHeaderBytes = 12;  // an interior page's
constexpr uint64_t kCellPointerBytes = 2;      // each cell's entry in its page's pointer array
constexpr uint64_t kOverflowLinkBytes = 4;     // the next-page number heading an overflow page
constexpr uint64_t kChildPointerBytes = 4;     // an interior cell's left child
constexpr uint64_t kPointerMapEntryBytes = 5;  // auto_vacuum's entry per page

uint64_t varint_bytes(uint64_t v) {
  uint64_t n = 1;
  for (; v >= 0x80 && n < 9; v >>= 7) ++n;
  return n;
}

// A blob of n bytes as the record of (value_id INTEGER PRIMARY KEY, data BLOB): the header's own
// size, the rowid alias's serial type (0: stored as the rowid) and the blob's (2n + 12).
uint64_t record_bytes(uint64_t n) {
  const uint64_t header = 1 + 1 + varint_bytes(2 * n + 12);
  return header + n;
}

// The median byte's value: the size of the blob that holds, in size order, the byte in the
// middle of all of them.
uint64_t median_byte_value(std::vector<uint64_t> sizes) {
  std::sort(sizes.begin(), sizes.end());
  uint64_t total = 0;
  for (uint64_t n : sizes) total += n;
  uint64_t seen = 0;
  for (uint64_t n : sizes) {
    seen += n;
    if (2 * seen >= total) return n;
  }
  return 0;
}

}  // namespace

uint64_t blob_table_bytes(const std::vector<uint64_t>& blob_bytes, int page_size) {
  const uint64_t usable = static_cast<uint64_t>(page_size);
  const uint64_t max_local = usable - 35;
  const uint64_t min_local = (usable - 12) * 32 / 255 - 23;
  const uint64_t per_overflow_page = usable - kOverflowLinkBytes;
  uint64_t overflow_pages = 0, leaves = 0, leaf_room = 0, rowid = 0;
  for (uint64_t n : blob_bytes) {
    ++rowid;
    const uint64_t payload = record_bytes(n);
    uint64_t local = payload, overflow = 0;
    if (payload > max_local) {
      const uint64_t surplus = min_local + (payload - min_local) % per_overflow_page;
      local = surplus <= max_local ? surplus : min_local;
      overflow = (payload - local + per_overflow_page - 1) / per_overflow_page;
    }
    const uint64_t cell =
        varint_bytes(payload) + varint_bytes(rowid) + local + (overflow ? kOverflowLinkBytes : 0) + kCellPointerBytes;
    // Appending at the table's end: a cell that does not fit starts a leaf of its own.
    if (cell > leaf_room) {
      ++leaves;
      leaf_room = usable - kLeafHeaderBytes;
    }
    leaf_room -= std::min(cell, leaf_room);
    overflow_pages += overflow;
  }
  const uint64_t interior_cell = kChildPointerBytes + varint_bytes(rowid) + kCellPointerBytes;
  const uint64_t interior = leaves > 1 ? leaves / ((usable - kInteriorHeaderBytes) / interior_cell) + 1 : 0;
  const uint64_t pages = overflow_pages + leaves + interior;
  const uint64_t pointer_map = pages / (usable / kPointerMapEntryBytes) + (pages > 0 ? 1 : 0);
  return (pages + pointer_map) * usable;
}

int choose_page_size(const PageSizeSample& sample, const PageSizeLimits& limits) {
  // The largest size the median byte's value and the page cache allow.
  const uint64_t median = median_byte_value(sample.blob_bytes);
  int bound = limits.smallest;
  auto allowed = [&](int size) {
    const uint64_t bytes = static_cast<uint64_t>(size);
    if (median / bytes < kMinPagesPerValue) return false;
    return limits.cache_bytes == 0 || sample.max_values_per_step * bytes <= limits.cache_bytes / 2;
  };
  while (bound < limits.largest && allowed(bound * 2)) bound *= 2;
  if (bound == limits.smallest) return bound;

  std::vector<std::pair<int, uint64_t>> cost;  // (page size, bytes)
  uint64_t least = UINT64_MAX;
  for (int size = limits.smallest; size <= bound; size *= 2) {
    cost.emplace_back(size, blob_table_bytes(sample.blob_bytes, size));
    least = std::min(least, cost.back().second);
  }
  int chosen = limits.smallest;
  for (const auto& [size, bytes] : cost)
    if (static_cast<double>(bytes) <= static_cast<double>(least) * (1 + kPageSizeTolerance)) chosen = size;
  return chosen;
}

}  // namespace trialdb
