#include "ingest/format/crc32c.h"

#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace trialdb {

namespace {
struct Tables {
  uint32_t t[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

// GF(2) arithmetic modulo the CRC-32C polynomial, bit-reflected (bit 31 is x^0), to combine
// CRCs of consecutive blocks: crc(A || B) = crc(A) * x^(8 |B|) xor crc(B) on raw registers.
constexpr uint32_t kPoly = 0x82f63b78u;
uint32_t mul_mod_p(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}
uint32_t x_pow(uint64_t e) {                    // x^e mod P
  uint32_t result = 1u << 31, base = 1u << 30;  // 1 and x
  for (; e; e >>= 1) {
    if (e & 1) result = mul_mod_p(result, base);
    base = mul_mod_p(base, base);
  }
  return result;
}
uint32_t x_pow_8n(uint64_t n) { return x_pow(8 * n); }

#if defined(__x86_64__)
// The crc32 instruction has a latency of 3 cycles and a throughput of 1: three independent
// streams over thirds of a block keep it busy, and the thirds are combined with two GF(2)
// multiplications per block.
constexpr size_t kStripe = 4096;  // bytes per stream per block
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const uint8_t* p, size_t n, uint32_t crc) {
  static const uint32_t k1 = x_pow_8n(kStripe), k2 = x_pow_8n(2 * kStripe);
  uint64_t c = ~crc;
  while (n >= 3 * kStripe) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t* q = p;
    for (size_t i = 0; i < kStripe; i += 8, q += 8) {
      uint64_t a, b, d;
      std::memcpy(&a, q, 8);
      std::memcpy(&b, q + kStripe, 8);
      std::memcpy(&d, q + 2 * kStripe, 8);
      c = _mm_crc32_u64(c, a);
      c1 = _mm_crc32_u64(c1, b);
      c2 = _mm_crc32_u64(c2, d);
    }
    c = mul_mod_p(k2, static_cast<uint32_t>(c)) ^ mul_mod_p(k1, static_cast<uint32_t>(c1)) ^ static_cast<uint32_t>(c2);
    p += 3 * kStripe;
    n -= 3 * kStripe;
  }
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

#endif

Crc32cKernel best_kernel() {
  static const Crc32cKernel best = crc32c_hardware_available() ? Crc32cKernel::kSse42 : Crc32cKernel::kTable;
  return best;
}

}  // namespace

uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc) {
  const auto& T = tables().t;
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = T[7][lo & 0xff] ^ T[6][(lo >> 8) & 0xff] ^ T[5][(lo >> 16) & 0xff] ^ T[4][lo >> 24] ^ T[3][hi & 0xff] ^
        T[2][(hi >> 8) & 0xff] ^ T[1][(hi >> 16) & 0xff] ^ T[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ T[0][(c ^ *p++) & 0xff];
  return ~c;
}

bool crc32c_hardware_available() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
#else
  return false;
#endif
}

bool crc32c_kernel_available(Crc32cKernel kernel) {
  return kernel == Crc32cKernel::kTable || crc32c_hardware_available();
}

uint32_t crc32c_with(Crc32cKernel kernel, const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (kernel != Crc32cKernel::kTable) return crc32c_sse42(p, n, crc);
#endif
  return crc32c_portable(p, n, crc);
}

uint32_t crc32c(const void* data, size_t n, uint32_t crc) { return crc32c_with(best_kernel(), data, n, crc); }

const char* crc32c_kernel_name() {
  switch (best_kernel()) {
    case Crc32cKernel::kSse42: return "sse4.2";
    case Crc32cKernel::kTable: break;
  }
  return "table";
}

uint32_t smdebug_constant_footer() {
  static const uint32_t v = masked_crc32c("0x12345678", 10);
  return v;
}

}  // namespace trialdb
