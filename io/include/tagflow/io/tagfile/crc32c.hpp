// crc32c: the CRC-32C (Castagnoli) of `bytes`, continuing from `crc` (the value for the bytes
// before them; 0 to start), with the processor's CRC32 instruction (SSE4.2). One instruction
// takes 8 bytes but waits three cycles for the one before it; runs of 3 x 4096 bytes are
// therefore taken as three independent streams, whose registers are then combined by
// polynomial multiplication modulo the CRC polynomial, which about doubles the rate on the
// payloads of tag file records (tens of KiB).
#pragma once

#include <cstdint>
#include <span>

namespace tagflow::tagfile {

std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

}  // namespace tagflow::tagfile
