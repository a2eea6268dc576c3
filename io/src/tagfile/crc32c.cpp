#include "tagflow/io/tagfile/crc32c.hpp"

#include <nmmintrin.h>

#include <array>
#include <cstring>

namespace tagflow::tagfile {

namespace {

// CRC-32C in the bit order of the CRC32 instruction: bit 31 holds the coefficient of x^0.
constexpr std::uint32_t kPolynomial = 0x82F63B78;

// a * b modulo the polynomial.
constexpr std::uint32_t multiplyModulo(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (std::uint32_t bit = std::uint32_t{1} << 31; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPolynomial : b >> 1;  // b * x
  }
  return product;
}

// x^(8 * bytes) modulo the polynomial: what a register becomes over `bytes` zero bytes.
constexpr std::uint32_t zeroBytesFactor(std::size_t bytes) {
  std::uint32_t power = std::uint32_t{1} << 31;  // x^0
  for (std::size_t i = 0; i < 8 * bytes; ++i) {
    power = (power & 1) ? (power >> 1) ^ kPolynomial : power >> 1;
  }
  return power;
}

// The register a register becomes over `kBytes` zero bytes, by four table look-ups: the
// multiplication is linear, so each byte of the register contributes its own product.
template <std::size_t kBytes>
class ZeroBytes {
 public:
  ZeroBytes() {
    constexpr std::uint32_t factor = zeroBytesFactor(kBytes);
    for (std::uint32_t byte = 0; byte < 4; ++byte) {
      for (std::uint32_t value = 0; value < 256; ++value) {
        tables_[byte][value] = multiplyModulo(value << (8 * byte), factor);
      }
    }
  }
  std::uint32_t operator()(std::uint32_t state) const {
    return tables_[0][state & 0xFF] ^ tables_[1][(state >> 8) & 0xFF] ^
           tables_[2][(state >> 16) & 0xFF] ^ tables_[3][state >> 24];
  }

 private:
  std::array<std::array<std::uint32_t, 256>, 4> tables_{};
};

__attribute__((target("sse4.2"))) std::uint64_t word(std::uint64_t state, const std::uint8_t* at) {
  std::uint64_t value;
  std::memcpy(&value, at, sizeof value);
  return _mm_crc32_u64(state, value);
}

// Consumes runs of 3 * kStream bytes as three streams: register(A B C) is
// (register(A) over |B| zeros ^ register_0(B)) over |C| zeros ^ register_0(C).
template <std::size_t kStream>
__attribute__((target("sse4.2"))) std::uint32_t threeStreams(const std::uint8_t*& data,
                                                             std::size_t& size,
                                                             std::uint32_t state) {
  static const ZeroBytes<kStream> over_stream;
  for (; size >= 3 * kStream; size -= 3 * kStream, data += 3 * kStream) {
    std::uint64_t a = state, b = 0, c = 0;
    for (std::size_t i = 0; i < kStream; i += 8) {
      a = word(a, data + i);
      b = word(b, data + kStream + i);
      c = word(c, data + 2 * kStream + i);
    }
    state =
        over_stream(over_stream(static_cast<std::uint32_t>(a)) ^ static_cast<std::uint32_t>(b)) ^
        static_cast<std::uint32_t>(c);
  }
  return state;
}

}  // namespace

__attribute__((target("sse4.2"))) std::uint32_t crc32c(std::span<const std::uint8_t> bytes,
                                                       std::uint32_t crc) {
  const std::uint8_t* data = bytes.data();
  std::size_t size = bytes.size();
  std::uint32_t state = ~crc;
  state = threeStreams<4096>(data, size, state);
  state = threeStreams<512>(data, size, state);
  std::uint64_t wide = state;
  for (; size >= 8; size -= 8, data += 8) wide = word(wide, data);
  state = static_cast<std::uint32_t>(wide);
  for (; size > 0; --size, ++data) state = _mm_crc32_u8(state, *data);
  return ~state;
}

}  // namespace tagflow::tagfile
