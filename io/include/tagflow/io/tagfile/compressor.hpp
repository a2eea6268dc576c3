// The general compressor behind the packed tags payload: zstd, lz4 or none, chosen per
// recording; a block that a compressor would not shrink is stored as it is (and says so in
// its record header). Contexts are kept between blocks; one compressor per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tagflow/io/tagfile/format.hpp"

namespace tagflow::tagfile {

// "none", "zstd" or "lz4"; throws InvalidArgument naming the valid names.
Compression compressionFromName(std::string_view name);
std::string_view compressionName(Compression compression);

class PayloadCompressor {
 public:
  explicit PayloadCompressor(Compression method);
  ~PayloadCompressor();
  PayloadCompressor(const PayloadCompressor&) = delete;
  PayloadCompressor& operator=(const PayloadCompressor&) = delete;

  // Replaces `out` with the stored form of `raw`; returns the method used (None when
  // compressing would not make the block smaller).
  Compression compress(std::span<const std::uint8_t> raw, std::vector<std::uint8_t>& out);

 private:
  struct Contexts;
  Compression method_;
  std::unique_ptr<Contexts> contexts_;
};

class PayloadDecompressor {
 public:
  PayloadDecompressor();
  ~PayloadDecompressor();
  PayloadDecompressor(const PayloadDecompressor&) = delete;
  PayloadDecompressor& operator=(const PayloadDecompressor&) = delete;

  // Fills `raw` (its size is the raw size from the record header) from `stored`; throws
  // DataError when the bytes do not decompress to exactly that size.
  void decompress(Compression method, std::span<const std::uint8_t> stored,
                  std::span<std::uint8_t> raw);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> contexts_;
};

}  // namespace tagflow::tagfile
