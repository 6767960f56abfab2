// Page compression: zstd (Debian's libzstd), with one reused context per column so a page costs
// no allocation. Parquet's ZSTD codec is a plain zstd frame per page.
#pragma once
#include <string>
#include <string_view>

struct ZSTD_CCtx_s;

namespace trialdb::parquet {

// zstd's fastest level but its negative ones: with dictionary indices in whole bytes
// (column_writer.cc) the datasets are smaller than level 3 made them with packed indices, for a
// sixth less CPU (bench/README.md).
inline constexpr int kZstdLevel = 1;

class ZstdCodec {
 public:
  explicit ZstdCodec(int level = kZstdLevel);
  ~ZstdCodec();
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;
  // Appends the compressed frame of `bytes` to out. Throws Error (kIo) when zstd fails.
  void compress(std::string_view bytes, std::string& out);

 private:
  ZSTD_CCtx_s* ctx_;
  int level_;
};

}  // namespace trialdb::parquet
