// The same photons recorded in T2 and in T3 give the same g2: a heralded pair stream (channel
// 2 a jittered copy of channel 1, 3 ns later) is written as a generic T2 PTU file (PtuWriter)
// and as a generic T3 PTU file (sync every 30 ns, 1 ps dtime, built here record by record),
// both are read back through the graph, and a Correlation of 2 against 1 gives the identical
// histogram, its peak at +3 ns; the T3 file's sync channel holds one tag per sync period with
// a photon.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ptu_builder.hpp"
#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "tagflow/io/vendor/ptu_writer.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr timestamp_t kSyncPeriod = 30'000;  // dtime, 15 bits of 1 ps, spans 32.767 ns

std::vector<std::int64_t> g2Of(const std::string& path) {
  VendorFileSource source(openPtuFile(path), 8192);
  MeasurementGraph graph(source);
  auto& g2 = graph.emplace<Correlation>("g2", 2, 1, 100, 200);
  graph.run();
  return g2.getData();
}

}  // namespace

TEST_CASE("T2 and T3 recordings of the same photons give the same g2", "[vendor][g2]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6),
                     SyntheticChannel::partner(2, 1, 3000, 200, 0.4)};
  config.duration_ps = 100'000'000'000;
  SyntheticSource source(config);
  const std::vector<Tag> tags = drain(source).tags;
  REQUIRE(tags.size() > 200'000);

  TempDir dir;
  const std::string t2 = dir.file("pairs_t2.ptu");
  PtuWriter writer(t2);
  writer.write(tags);
  writer.close(config.duration_ps);

  // T3: nsync = time / period (overflows of 1024 periods as counted records), dtime = the rest.
  std::vector<std::uint32_t> words;
  std::uint64_t overflows = 0;
  std::uint64_t syncs_with_photons = 0;
  std::uint64_t last_sync = ~std::uint64_t{0};
  for (const Tag& tag : tags) {
    const auto nsync = static_cast<std::uint64_t>(tag.time / kSyncPeriod);
    const auto dtime = static_cast<std::uint32_t>(tag.time % kSyncPeriod);
    if (nsync / 1024 > overflows) {
      words.push_back((1u << 31) | (0x3Fu << 25) |
                      static_cast<std::uint32_t>(nsync / 1024 - overflows));
      overflows = nsync / 1024;
    }
    words.push_back((static_cast<std::uint32_t>(tag.channel - 1) << 25) | (dtime << 10) |
                    static_cast<std::uint32_t>(nsync % 1024));
    syncs_with_photons += nsync != last_sync ? 1 : 0;
    last_sync = nsync;
  }
  const std::string t3 = dir.file("pairs_t3.ptu");
  PtuBuilder()
      .standard(0x00010307, kSyncPeriod * 1e-12, 1e-12, static_cast<std::int64_t>(words.size()))
      .records(words)
      .write(t3);

  const auto from_t2 = g2Of(t2);
  const auto from_t3 = g2Of(t3);
  CHECK(from_t2 == from_t3);
  // 200 bins of 100 ps centred on zero: +3 ns is the edge between bins 129 and 130, so the
  // echoes' Gaussian (sigma 200 ps) fills both alike (which one holds the maximum is up to the
  // stream) and their neighbours less.
  const auto peak = std::max_element(from_t2.begin(), from_t2.end()) - from_t2.begin();
  CHECK((peak == 129 || peak == 130));
  CHECK(std::min(from_t2[129], from_t2[130]) > std::max(from_t2[128], from_t2[131]));

  VendorFileSource reread(openPtuFile(t3), 8192);
  const auto read_back = drain(reread).tags;
  const auto syncs = std::count_if(read_back.begin(), read_back.end(),
                                   [](const Tag& tag) { return tag.channel == 100; });
  CHECK(static_cast<std::uint64_t>(syncs) == syncs_with_photons);
  CHECK(read_back.size() == tags.size() + syncs_with_photons);
}
