// zstd page compression (zstd_codec.h).
#include "parquet/zstd_codec.h"

#include <zstd.h>

#include "schema/status.h"

namespace trialdb::parquet {

ZstdCodec::ZstdCodec(int level) : ctx_(ZSTD_createCCtx()), level_(level) {
  if (!ctx_) throw Error(ErrorKind::kIo, "zstd: out of memory creating a compression context");
}

ZstdCodec::~ZstdCodec() { ZSTD_freeCCtx(ctx_); }

void ZstdCodec::compress(std::string_view bytes, std::string& out) {
  const size_t at = out.size();
  out.resize(at + ZSTD_compressBound(bytes.size()));
  const size_t n = ZSTD_compressCCtx(ctx_, out.data() + at, out.size() - at, bytes.data(), bytes.size(), level_);
  if (ZSTD_isError(n)) throw Error(ErrorKind::kIo, std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(at + n);
}

}  // namespace trialdb::parquet
