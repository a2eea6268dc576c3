#include "tagflow/io/tagfile/compressor.hpp"

#include <lz4.h>
#include <zstd.h>

#include <cstring>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow::tagfile {

namespace {

// Level 1 is zstd's fastest level that still entropy-codes literals (negative levels do not).
constexpr int kZstdLevel = 1;

}  // namespace

Compression compressionFromName(std::string_view name) {
  if (name == "none") return Compression::None;
  if (name == "zstd") return Compression::Zstd;
  if (name == "lz4") return Compression::Lz4;
  throw InvalidArgument("compression '" + std::string(name) +
                        "' is unknown (valid: none, zstd, lz4)");
}

std::string_view compressionName(Compression compression) {
  switch (compression) {
    case Compression::None:
      return "none";
    case Compression::Zstd:
      return "zstd";
    case Compression::Lz4:
      return "lz4";
  }
  return "unknown";
}

struct PayloadCompressor::Contexts {
  ZSTD_CCtx* zstd = nullptr;
  ~Contexts() { ZSTD_freeCCtx(zstd); }
};

PayloadCompressor::PayloadCompressor(Compression method)
    : method_(method), contexts_(std::make_unique<Contexts>()) {
  if (method_ == Compression::Zstd) {
    contexts_->zstd = ZSTD_createCCtx();
    if (contexts_->zstd == nullptr) throw std::bad_alloc();
  }
}

PayloadCompressor::~PayloadCompressor() = default;

Compression PayloadCompressor::compress(std::span<const std::uint8_t> raw,
                                        std::vector<std::uint8_t>& out) {
  std::size_t size = 0;
  if (method_ == Compression::Zstd) {
    out.resize(ZSTD_compressBound(raw.size()));
    size = ZSTD_compressCCtx(contexts_->zstd, out.data(), out.size(), raw.data(), raw.size(),
                             kZstdLevel);
    if (ZSTD_isError(size)) size = 0;
  } else if (method_ == Compression::Lz4) {
    out.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
    size = static_cast<std::size_t>(LZ4_compress_default(
        reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(out.data()),
        static_cast<int>(raw.size()), static_cast<int>(out.size())));
  }
  if (size == 0 || size >= raw.size()) {
    out.assign(raw.begin(), raw.end());
    return Compression::None;
  }
  out.resize(size);
  return method_;
}

struct PayloadDecompressor::Contexts {
  ZSTD_DCtx* zstd = nullptr;
  ~Contexts() { ZSTD_freeDCtx(zstd); }
};

PayloadDecompressor::PayloadDecompressor() : contexts_(std::make_unique<Contexts>()) {}

PayloadDecompressor::~PayloadDecompressor() = default;

void PayloadDecompressor::decompress(Compression method, std::span<const std::uint8_t> stored,
                                     std::span<std::uint8_t> raw) {
  std::size_t size = 0;
  switch (method) {
    case Compression::None:
      if (stored.size() != raw.size()) {
        throw DataError("stored size " + std::to_string(stored.size()) +
                        " differs from the raw size " + std::to_string(raw.size()));
      }
      if (!raw.empty()) std::memcpy(raw.data(), stored.data(), raw.size());
      return;
    case Compression::Zstd: {
      if (contexts_->zstd == nullptr) contexts_->zstd = ZSTD_createDCtx();
      if (contexts_->zstd == nullptr) throw std::bad_alloc();
      size = ZSTD_decompressDCtx(contexts_->zstd, raw.data(), raw.size(), stored.data(),
                                 stored.size());
      if (ZSTD_isError(size)) {
        throw DataError(std::string("zstd cannot decompress the payload: ") +
                        ZSTD_getErrorName(size));
      }
      break;
    }
    case Compression::Lz4: {
      const int got = LZ4_decompress_safe(
          reinterpret_cast<const char*>(stored.data()), reinterpret_cast<char*>(raw.data()),
          static_cast<int>(stored.size()), static_cast<int>(raw.size()));
      if (got < 0) throw DataError("lz4 cannot decompress the payload (corrupt input)");
      size = static_cast<std::size_t>(got);
      break;
    }
  }
  if (size != raw.size()) {
    throw DataError("the payload decompresses to " + std::to_string(size) +
                    " bytes instead of the raw size " + std::to_string(raw.size()));
  }
}

}  // namespace tagflow::tagfile
