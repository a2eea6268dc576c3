// crc32c (io/include/tagflow/io/tagfile/crc32c.hpp) against a bit-by-bit CRC-32C: every length
// around the three-stream runs (and none), continued from any value, and the standard check
// value.
#include <catch2/catch.hpp>

#include <random>
#include <string_view>
#include <vector>

#include "tagflow/io/tagfile/crc32c.hpp"

using namespace tagflow::tagfile;

namespace {

std::uint32_t bitByBit(const std::vector<std::uint8_t>& bytes, std::size_t begin, std::size_t end,
                       std::uint32_t crc) {
  std::uint32_t state = ~crc;
  for (std::size_t i = begin; i < end; ++i) {
    state ^= bytes[i];
    for (int bit = 0; bit < 8; ++bit) state = (state & 1) ? (state >> 1) ^ 0x82F63B78 : state >> 1;
  }
  return ~state;
}

}  // namespace

TEST_CASE("crc32c equals a bit-by-bit CRC-32C for every length and start", "[tagfile]") {
  const std::string_view check = "123456789";
  CHECK(crc32c({reinterpret_cast<const std::uint8_t*>(check.data()), check.size()}) == 0xE3069283);

  std::mt19937_64 random(5);
  std::vector<std::uint8_t> bytes(3 * 4096 * 2 + 3 * 512 * 2 + 64);
  for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random());
  std::vector<std::size_t> lengths = {
      0, 1, 7, 8, 9, 1535, 1536, 1537, 12287, 12288, 12289, 12288 + 1536 + 13, bytes.size()};
  for (int i = 0; i < 40; ++i) lengths.push_back(random() % (bytes.size() + 1));
  for (const std::size_t length : lengths) {
    CAPTURE(length);
    const std::size_t offset = random() % (bytes.size() - length + 1);
    const auto start = static_cast<std::uint32_t>(random());
    const std::span<const std::uint8_t> span(bytes.data() + offset, length);
    REQUIRE(crc32c(span) == bitByBit(bytes, offset, offset + length, 0));
    REQUIRE(crc32c(span, start) == bitByBit(bytes, offset, offset + length, start));
    // In two pieces, the second continuing from the first.
    const std::size_t cut = length == 0 ? 0 : random() % length;
    REQUIRE(crc32c(span.subspan(cut), crc32c(span.first(cut))) == crc32c(span));
  }
}
