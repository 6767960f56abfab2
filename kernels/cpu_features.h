// What the processor the kernels run on can do, asked once per process. The kernels' vector
// paths are compiled for their instruction sets alone (target attributes) and chosen here at run
// time, so one binary runs everywhere. Every path gives the same bits.
//
// TRIALDB_VECTOR_ISA caps the instruction set the kernels use: `portable` (no vector paths),
// `avx2` or `avx512` (the default: whatever the processor has). The tests run the kernels under
// each cap, so that the narrower paths stay tested on a processor that has the wider ones:
//   TRIALDB_VECTOR_ISA=avx2 build/bin/kernels_tests
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace trialdb {

enum class VectorIsa : int {
  kPortable = 0,
  kAvx2 = 1,
  // AVX-512F with VL: the AVX2 paths' 256-bit operations, with 32 vector registers instead of 16
  // (a loop with many accumulators then keeps them all in registers).
  kAvx512Vl = 2,
};

namespace cpu_features_internal {

inline VectorIsa processor_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  // __builtin_cpu_supports also asks whether the operating system saves the registers (XGETBV).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return VectorIsa::kAvx512Vl;
  if (__builtin_cpu_supports("avx2")) return VectorIsa::kAvx2;
#endif
  return VectorIsa::kPortable;
}

inline constexpr const char* kIsaEnvironment = "TRIALDB_VECTOR_ISA";
inline constexpr struct {
  const char* name;
  VectorIsa isa;
} kIsaNames[] = {{"portable", VectorIsa::kPortable}, {"avx2", VectorIsa::kAvx2}, {"avx512", VectorIsa::kAvx512Vl}};
inline constexpr VectorIsa kNoCap = VectorIsa::kAvx512Vl;  // the widest: the processor's own is taken

// The cap TRIALDB_VECTOR_ISA names; none when unset, and, said once on stderr, when it names no
// instruction set.
inline VectorIsa isa_cap() {
  const char* name = std::getenv(kIsaEnvironment);
  if (!name || !*name) return kNoCap;
  for (const auto& known : kIsaNames)
    if (std::strcmp(name, known.name) == 0) return known.isa;
  std::fprintf(stderr, "trialdb: %s=%s is not one of", kIsaEnvironment, name);
  const char* separator = " ";
  for (const auto& known : kIsaNames) {
    std::fprintf(stderr, "%s%s", separator, known.name);
    separator = ", ";
  }
  std::fprintf(stderr, ": ignored\n");
  return kNoCap;
}

}  // namespace cpu_features_internal

// The widest instruction set the kernels use: the processor's, capped by TRIALDB_VECTOR_ISA.
inline VectorIsa vector_isa() {
  static const VectorIsa isa = [] {
    const VectorIsa processor = cpu_features_internal::processor_isa();
    const VectorIsa cap = cpu_features_internal::isa_cap();
    return static_cast<int>(cap) < static_cast<int>(processor) ? cap : processor;
  }();
  return isa;
}

inline bool cpu_has_avx2() { return static_cast<int>(vector_isa()) >= static_cast<int>(VectorIsa::kAvx2); }
inline bool cpu_has_avx512vl() { return vector_isa() == VectorIsa::kAvx512Vl; }

// F16C (float16 conversions) with AVX, which its 256-bit forms need; off when the kernels are
// capped to the portable paths. F16C is read from CPUID itself: not every compiler's
// __builtin_cpu_supports knows the feature.
inline bool cpu_has_f16c() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return vector_isa() != VectorIsa::kPortable && __builtin_cpu_supports("avx") &&
           __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace trialdb
