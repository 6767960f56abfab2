#include "ingest/mapped_range.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace trialdb {

std::unique_ptr<MappedRange> MappedRange::map(int fd, uint64_t offset, uint64_t length, uint64_t file_size) {
  if (offset >= file_size) return nullptr;
  const size_t size = static_cast<size_t>(std::min(length, file_size - offset));
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;   // mmap offsets are page-aligned
  const size_t mapped = size + static_cast<size_t>(offset - start);
  void* base = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (base == MAP_FAILED) return nullptr;
  char* data = static_cast<char*>(base) + (offset - start);
  return std::unique_ptr<MappedRange>(new MappedRange(base, mapped, data, size));
}

MappedRange::~MappedRange() { ::munmap(base_, mapped_); }

}  // namespace trialdb
