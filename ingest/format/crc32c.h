// CRC-32C (Castagnoli) and TFRecord's masked form.
//
// Picks, once at run time, the fastest kernel the CPU has: the SSE4.2 crc32 instruction in three
// interleaved streams, else a slicing-by-8 table. Both give identical results.
#pragma once
#include <cstddef>
#include <cstdint>

namespace trialdb {

uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc = 0);  // table version, for tests
bool crc32c_hardware_available();                                        // SSE4.2

// The kernels crc32c chooses from, each callable on its own for tests and benchmarks (a kernel
// the CPU lacks must not be called).
enum class Crc32cKernel { kTable, kSse42 };
bool crc32c_kernel_available(Crc32cKernel kernel);
uint32_t crc32c_with(Crc32cKernel kernel, const void* data, size_t n, uint32_t crc = 0);
const char* crc32c_kernel_name();  // the one crc32c uses: "sse4.2" or "table"

inline uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t masked_crc32c(const void* data, size_t n) { return mask_crc32c(crc32c(data, n)); }

// The footer smdebug writes when checksums are off: masked_crc32c of the ASCII "0x12345678".
uint32_t smdebug_constant_footer();

}  // namespace trialdb
