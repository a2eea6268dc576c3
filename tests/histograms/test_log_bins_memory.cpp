// HistogramLogBins keeps only the starts that a later click can still pair with: a stream of
// 20 million starts and no clicks (a silent click channel, or a click gate that stays closed)
// must leave its memory where it was, not 160 MB (8 bytes a start) higher.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <optional>

#include "support/pairs.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// The resident memory of this process now, in bytes.
std::int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// 2000 blocks of 1 us, each with 10 000 starts on channel 1, 100 ps apart. The blocks are
// written in place: a source that allocated each one would grow the process by itself under
// AddressSanitizer, which holds freed memory back.
class StartsOnly : public Source {
 public:
  bool next(BlockBuffer& out) override {
    if (block_ == 2000) return false;
    out.storage.resize(10'000);
    for (std::size_t j = 0; j < out.storage.size(); ++j) {
      out.storage[j] = makeTimeTag(1, block_ * 1'000'000 + static_cast<timestamp_t>(j) * 100);
    }
    out.publishStorage();
    out.begin_time = block_ * 1'000'000;
    out.end_time = (block_ + 1) * 1'000'000;
    ++block_;
    return true;
  }
  std::size_t maxBlockTags() const override { return 10'000; }
  std::string describe() const override { return "starts only"; }

 private:
  timestamp_t block_ = 0;
};

// Runs 20 million starts through `histogram`; the growth of the resident memory while the
// histogram, with whatever it keeps, is still alive.
std::int64_t growthWithStartsOnly(HistogramLogBins& histogram) {
  StartsOnly source;
  const std::int64_t before = residentBytes();
  runGraph(source, {&histogram});
  return residentBytes() - before;
}

constexpr std::int64_t kAllowedGrowth = 40 << 20;

}  // namespace

TEST_CASE("HistogramLogBins drops starts no click can reach, with and without clicks",
          "[histogram_log_bins]") {
  SECTION("no clicks at all") {
    HistogramLogBins histogram("h", 2, 1, -12, -6, 100);
    CHECK(growthWithStartsOnly(histogram) < kAllowedGrowth);
    // Starts count from one span (1 us, the first block of 10 000) after the capture start.
    CHECK(histogram.getDataObject().n_start == 20'000'000 - 10'000);
  }
  SECTION("a click gate that stays closed") {
    HistogramLogBins histogram("h", 2, 1, -12, -6, 100, ChannelGate{3, 4, false});
    CHECK(growthWithStartsOnly(histogram) < kAllowedGrowth);
  }
}
