// What the processor the kernels run on can do, asked once per process. The kernels' vector
// paths are compiled for their instruction sets alone (target attributes) and chosen here at run
// time, so one binary runs everywhere.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace trialdb {

inline bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
#else
  return false;
#endif
}

// F16C (float16 conversions) with AVX, which its 256-bit forms need. F16C is read from CPUID
// itself: not every compiler's __builtin_cpu_supports knows the feature.
inline bool cpu_has_f16c() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace trialdb
