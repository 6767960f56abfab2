// CRC-32C (Castagnoli) and TFRecord's masked form.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run time) and a
// slicing-by-8 table otherwise; both give identical results.
#pragma once
#include <cstddef>
#include <cstdint>

namespace trialdb {

uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc = 0);  // table version, for tests
bool crc32c_hardware_available();

inline uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t masked_crc32c(const void* data, size_t n) { return mask_crc32c(crc32c(data, n)); }

// The footer smdebug writes when checksums are off: masked_crc32c of the ASCII "0x12345678".
uint32_t smdebug_constant_footer();

}  // namespace trialdb
