#include "ingest/source/mapped_range.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace trialdb {

namespace {

// The live mappings, as the SIGBUS handler sees them: lock-free atomics only, since it runs
// inside a signal. A mapping that finds no free slot is not made (the caller reads instead).
constexpr int kSlots = 256;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> begin{0}, end{0};  // begin 0: not (or no longer) to be looked at
  std::atomic<bool> hit{false};             // a fault was answered with zeros
};
Slot g_slots[kSlots];
uintptr_t g_page = 4096;
struct sigaction g_previous;
std::atomic<bool> g_installed{false};

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= s.end.load(std::memory_order_acquire)) continue;
    // The file ends before this page now: zeros in its place, and the reader is told.
    void* page = reinterpret_cast<void*>(addr & ~(g_page - 1));
    if (::mmap(page, g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      s.hit.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  // Not one of ours: whatever would have happened without this handler.
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGBUS, &dfl, nullptr);  // the faulting access runs again, and ends the process
  }
}

int claim_slot(uintptr_t begin, uintptr_t end) {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].used.compare_exchange_strong(expected, true)) continue;
    g_slots[i].hit.store(false);
    g_slots[i].end.store(end, std::memory_order_release);
    g_slots[i].begin.store(begin, std::memory_order_release);
    return i;
  }
  return -1;
}

}  // namespace

void MappedRange::install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction sa = {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
    g_installed.store(true, std::memory_order_release);
  });
}

std::unique_ptr<MappedRange> MappedRange::map(int fd, uint64_t offset, uint64_t length, uint64_t file_size) {
  if (offset >= file_size || !g_installed.load(std::memory_order_acquire)) return nullptr;
  const size_t size = static_cast<size_t>(std::min(length, file_size - offset));
  const uint64_t page = static_cast<uint64_t>(g_page);
  const uint64_t start = offset / page * page;  // mmap offsets are page-aligned
  const size_t mapped = size + static_cast<size_t>(offset - start);
  const int own_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own_fd < 0) return nullptr;
  void* base = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(start));
  const int slot = base == MAP_FAILED
                       ? -1
                       : claim_slot(reinterpret_cast<uintptr_t>(base), reinterpret_cast<uintptr_t>(base) + mapped);
  if (slot < 0) {
    if (base != MAP_FAILED) ::munmap(base, mapped);
    ::close(own_fd);
    return nullptr;
  }
  char* data = static_cast<char*>(base) + (offset - start);
  return std::unique_ptr<MappedRange>(new MappedRange(base, mapped, data, size, own_fd, offset + size, slot));
}

bool MappedRange::shrank() const {
  if (g_slots[slot_].hit.load(std::memory_order_acquire)) return true;
  struct stat st;
  return ::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) < end_;
}

MappedRange::~MappedRange() {
  Slot& s = g_slots[slot_];
  s.begin.store(0, std::memory_order_release);  // before the addresses can be mapped again
  ::munmap(base_, mapped_);
  s.end.store(0);
  s.used.store(false, std::memory_order_release);
  ::close(fd_);
}

}  // namespace trialdb
