// The branch-free selections against the plain expressions they stand for, on values that
// include the edges of their types (the x86-64 versions are inline assembly).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "fast_path/branch_free.hpp"

using namespace tagflow;
using namespace tagflow::fast_path;

namespace {

const std::vector<std::uint32_t> kKeys = {0,           1,           2,           7,
                                          0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
const std::vector<std::uint64_t> kValues = {0, 1, 42, std::numeric_limits<std::uint64_t>::max()};

}  // namespace

TEST_CASE("flagIfEqual, countIfEqual and moveIfEqual select like a == b", "[core][branch_free]") {
  for (std::uint32_t a : kKeys) {
    for (std::uint32_t b : kKeys) {
      INFO("a " << a << ", b " << b);
      CHECK(flagIfEqual(a, b) == (a == b ? 1u : 0u));
      for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{1} << 40}) {
        CHECK(countIfEqual(count, a, b) == count + (a == b ? 1 : 0));
      }
      for (std::uint64_t yes : kValues) {
        for (std::uint64_t no : kValues) {
          CHECK(moveIfEqual(a, b, yes, no) == (a == b ? yes : no));
        }
      }
    }
  }
}

TEST_CASE("moveBothIfEqual moves both values or neither", "[core][branch_free]") {
  int cells[2] = {0, 0};
  for (std::uint32_t a : kKeys) {
    for (std::uint32_t b : kKeys) {
      for (std::uint64_t yes : kValues) {
        INFO("a " << a << ", b " << b << ", value " << yes);
        std::uint64_t first = 7;
        const int* second = &cells[0];
        moveBothIfEqual(a, b, first, yes, second, static_cast<const int*>(&cells[1]));
        CHECK(first == (a == b ? yes : 7));
        CHECK(second == (a == b ? &cells[1] : &cells[0]));
      }
    }
  }
}

TEST_CASE("selectByFlag and moveIfFlag pick by a 0/1 flag", "[core][branch_free]") {
  for (std::uint64_t flag : {std::uint64_t{0}, std::uint64_t{1}}) {
    for (std::uint64_t yes : kValues) {
      for (std::uint64_t no : kValues) {
        CHECK(selectByFlag(flag, yes, no) == (flag ? yes : no));
        CHECK(moveIfFlag(flag, yes, no) == (flag ? yes : no));
      }
    }
    CHECK(opaqueFlag(flag == 1) == flag);
  }
}
