// zstd page compression (zstd_codec.h).
#include "parquet/zstd_codec.h"

#include <zstd.h>

#include <memory>

#include "schema/status.h"

namespace trialdb::parquet {

ZstdCodec::ZstdCodec(int level) : ctx_(ZSTD_createCCtx()), level_(level) {
  if (!ctx_) throw Error(ErrorKind::kIo, "zstd: out of memory creating a compression context");
}

ZstdCodec::~ZstdCodec() { ZSTD_freeCCtx(ctx_); }

void ZstdCodec::compress(std::string_view bytes, std::string& out) {
  // Into a buffer left uninitialised, then appended: a string grown to the bound with resize is
  // zero-filled first, more bytes than the page itself, most of them never part of the frame.
  const size_t bound = ZSTD_compressBound(bytes.size());
  const std::unique_ptr<char[]> frame = std::make_unique_for_overwrite<char[]>(bound);
  const size_t n = ZSTD_compressCCtx(ctx_, frame.get(), bound, bytes.data(), bytes.size(), level_);
  if (ZSTD_isError(n)) throw Error(ErrorKind::kIo, std::string("zstd: ") + ZSTD_getErrorName(n));
  out.append(frame.get(), n);
}

}  // namespace trialdb::parquet
