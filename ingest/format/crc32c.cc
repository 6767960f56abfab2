#include "ingest/format/crc32c.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
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
uint32_t x_pow(uint64_t e) {   // x^e mod P
  uint32_t result = 1u << 31, base = 1u << 30;   // 1 and x
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
constexpr size_t kStripe = 4096;   // bytes per stream per block
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

// Carry-less multiplication folding (the Intel "Fast CRC computation using PCLMULQDQ" scheme),
// 512 bits per instruction with VPCLMULQDQ: the crc32 instruction does 8 bytes a cycle at best,
// this 32. Each 128-bit lane of the message is folded forward over d bits by multiplying its
// two halves with x^(d+31) and x^(d-33) mod P (the -1 of reflected carry-less products folded in;
// found and checked against the table implementation, see format_test), and added to the lane
// d bits on. What remains, 128 bits, is finished with the crc32 instruction from a zero register.
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports at every use; the values are fully defined. (Clang has no such warning, and would
// warn about the unknown option.)
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__m128i fold_constants(uint64_t d) {
  return _mm_set_epi64x(static_cast<long long>(x_pow(d - 33)), static_cast<long long>(x_pow(d + 31)));
}

constexpr size_t kVpclmulMin = 256;   // crc32c_vpclmul needs this much; below, crc32c_sse42

__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2"))) inline __m512i fold512(__m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), next,
                                   0x96);   // a ^ b ^ c
}
__attribute__((target("pclmul,sse4.2"))) inline __m128i fold128(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2"))) uint32_t crc32c_vpclmul(const uint8_t* p, size_t n,
                                                                                    uint32_t crc) {
  struct K {
    __m512i by2048, by512;
    __m128i by384, by256, by128;
  };
  static const K k = {_mm512_broadcast_i32x4(fold_constants(2048)), _mm512_broadcast_i32x4(fold_constants(512)),
                      fold_constants(384), fold_constants(256), fold_constants(128)};
  // The initial register enters as the first 32 bits of the message.
  __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc))));
  __m512i x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
  p += 256;
  n -= 256;
  for (; n >= 256; p += 256, n -= 256) {   // four accumulators: each lane moves 2048 bits on
    x0 = fold512(x0, k.by2048, _mm512_loadu_si512(p));
    x1 = fold512(x1, k.by2048, _mm512_loadu_si512(p + 64));
    x2 = fold512(x2, k.by2048, _mm512_loadu_si512(p + 128));
    x3 = fold512(x3, k.by2048, _mm512_loadu_si512(p + 192));
  }
  __m512i x = fold512(fold512(fold512(x0, k.by512, x1), k.by512, x2), k.by512, x3);
  for (; n >= 64; p += 64, n -= 64) x = fold512(x, k.by512, _mm512_loadu_si512(p));
  // The four lanes of x into the last: lane i lies (3 - i) * 128 bits before it.
  __m128i r = fold128(_mm512_extracti32x4_epi32(x, 0), k.by384, _mm512_extracti32x4_epi32(x, 3));
  r = fold128(_mm512_extracti32x4_epi32(x, 1), k.by256, r);
  r = fold128(_mm512_extracti32x4_epi32(x, 2), k.by128, r);
  for (; n >= 16; p += 16, n -= 16) r = fold128(r, k.by128, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(r)));
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(r, 1)));
  return crc32c_sse42(p, n, ~static_cast<uint32_t>(c));   // the last 0-15 bytes
}

#pragma GCC diagnostic pop

bool vpclmul_available() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
                          __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
  return has;
}
#endif
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
    c = T[7][lo & 0xff] ^ T[6][(lo >> 8) & 0xff] ^ T[5][(lo >> 16) & 0xff] ^ T[4][lo >> 24] ^
        T[3][hi & 0xff] ^ T[2][(hi >> 8) & 0xff] ^ T[1][(hi >> 16) & 0xff] ^ T[0][hi >> 24];
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
  switch (kernel) {
    case Crc32cKernel::kTable: return true;
    case Crc32cKernel::kSse42: return crc32c_hardware_available();
#if defined(__x86_64__)
    case Crc32cKernel::kVpclmul: return vpclmul_available();
#else
    case Crc32cKernel::kVpclmul: return false;
#endif
  }
  return false;
}

uint32_t crc32c_with(Crc32cKernel kernel, const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (kernel == Crc32cKernel::kVpclmul && n >= kVpclmulMin) return crc32c_vpclmul(p, n, crc);
  if (kernel != Crc32cKernel::kTable) return crc32c_sse42(p, n, crc);
#endif
  return crc32c_portable(p, n, crc);
}

namespace {
Crc32cKernel best_kernel() {
  static const Crc32cKernel best = crc32c_kernel_available(Crc32cKernel::kVpclmul) ? Crc32cKernel::kVpclmul
                                   : crc32c_hardware_available()                   ? Crc32cKernel::kSse42
                                                                                   : Crc32cKernel::kTable;
  return best;
}
}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) { return crc32c_with(best_kernel(), data, n, crc); }

const char* crc32c_kernel_name() {
  switch (best_kernel()) {
    case Crc32cKernel::kVpclmul: return "vpclmulqdq";
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
