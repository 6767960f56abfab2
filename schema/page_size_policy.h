// The page size a new database is made with, chosen from the sizes of the values it will hold.
//
// Why it varies: SQLite stores a blob larger than a page as a chain of overflow pages, and its
// costs are per page. A trial of large tensors written with 2 KiB pages spends most of the
// writer's time on page bookkeeping (a 1 GB ResNet-like trial ingests in 0.75x the time with the
// 32 KiB pages chosen here, and its rules run in 0.65x: bench/README.md, "Page size"). But a
// page is also the unit of waste: a blob's tail fills its last page only in part, and blobs
// smaller than a page share leaves only as far as they fit, so a trial of 4-20 KiB tensors (a
// CNN's, a transformer's layers) is 4-30% larger with pages of 4 KiB or more. No one size suits
// both; each database takes the one its first trial calls for, and `trialdb compact` chooses
// again from what the file holds.
//
// How: choose_page_size models SQLite's storage of the sampled blobs for each power of two
// from the smallest to the largest allowed (SQLite's cell format: a blob up to U - 35 bytes stays
// on its leaf; a larger one keeps a local part on the leaf, sized as SQLite sizes it, and the
// rest in overflow pages of U - 4 bytes; leaves filled in order, as appends fill them), and takes
// the largest that stores the sample within kPageSizeTolerance of the most compact, bounded so
// that
//   - the value that carries the median byte spans at least kMinPagesPerValue pages (larger pages
//     would make reading one small value fetch many others with it), and
//   - a step's values fit in half the page cache one leaf each (a write transaction touches one
//     leaf of the value table per tensor: database.cc).
// An empty sample, or one of small values only, gets the smallest size.
//
// Example: a CNN's sample (median byte in a 19 KiB value) gets 2 KiB pages; a ResNet's (the
// median byte in a 1 MiB weight) 32 KiB; 4 MiB activations 64 KiB.
//
// Free of SQLite, as the model is of its file format, not of a connection.
#pragma once
#include <cstdint>
#include <vector>

namespace trialdb {

// What the choice is made from: the sizes in bytes of the blobs the database will store, and the
// largest number of values one step of one worker saves.
struct PageSizeSample {
  std::vector<uint64_t> blob_bytes;
  uint64_t max_values_per_step = 0;
};

// SQLite's largest page size (stored as 1 in the file header's two bytes).
inline constexpr int kSqliteLargestPageSize = 65536;

struct PageSizeLimits {
  int smallest = 0;          // the size for small values (schema/database.h: kPageSize)
  int largest = 0;           // at most kSqliteLargestPageSize
  uint64_t cache_bytes = 0;  // the connection's page cache (0: no bound from it)
};

// The storage cost of a sample stays within this fraction of the most compact page size's.
inline constexpr double kPageSizeTolerance = 0.01;
// The value that carries the median byte of the sample spans at least this many pages.
inline constexpr uint64_t kMinPagesPerValue = 8;

// Bytes of pages SQLite takes to hold these blobs, in this order, as the one column of a rowid
// table (leaves, overflow pages, interior pages and auto_vacuum's pointer map).
uint64_t blob_table_bytes(const std::vector<uint64_t>& blob_bytes, int page_size);

// A power of two in [limits.smallest, limits.largest] (both powers of two).
int choose_page_size(const PageSizeSample& sample, const PageSizeLimits& limits);

}  // namespace trialdb
