// TRIALDB_VECTOR_ISA (kernels/cpu_features.h) caps the kernels' instruction set: the kernels
// tests run again under each cap (CMakeLists.txt), which is only worth something when the cap
// does take the kernels off the wider paths.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "kernels/cpu_features.h"

namespace trialdb::test {
namespace {

TEST(CpuFeatures, TheEnvironmentCapsTheInstructionSet) {
  const char* cap = std::getenv("TRIALDB_VECTOR_ISA");
  const std::string named = cap ? cap : "";
  if (named == "portable") {
    EXPECT_EQ(vector_isa(), VectorIsa::kPortable);
    EXPECT_FALSE(cpu_has_avx2());
    EXPECT_FALSE(cpu_has_f16c());
  } else if (named == "avx2") {
    EXPECT_NE(vector_isa(), VectorIsa::kAvx512Vl);
    EXPECT_FALSE(cpu_has_avx512vl());
  }
  // Whatever the cap, the answers agree with each other.
  EXPECT_EQ(cpu_has_avx512vl(), vector_isa() == VectorIsa::kAvx512Vl);
  EXPECT_EQ(cpu_has_avx2(), vector_isa() != VectorIsa::kPortable);
}

}  // namespace
}  // namespace trialdb::test
