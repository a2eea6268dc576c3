// The receiver's counters reach the results file: writeResultsHdf5 with the statistics of a
// UDP source writes them as attributes of /source, equal to what the source reports.
#include <hdf5.h>

#include <catch2/catch.hpp>

#include <future>

#include "support/generators.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

std::int64_t intAttribute(hid_t object, const char* name) {
  const hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  REQUIRE(attribute >= 0);
  std::int64_t value = -1;
  REQUIRE(H5Aread(attribute, H5T_NATIVE_INT64, &value) >= 0);
  H5Aclose(attribute);
  return value;
}

}  // namespace

TEST_CASE("The receiver's counters are written under /source", "[udp][results][graph]") {
  const auto tags =
      std::make_shared<const std::vector<Tag>>(randomTags(4, {1, 2}, 0, 200'000'000, 10'000));
  UdpStreamSource receiver(loopbackReceiver());
  UdpSenderConfig config = loopbackSender(receiver.port());
  config.mtu = 1500;
  config.drop = {2};
  UdpStreamSender sender(config);
  auto sending = std::async(std::launch::async, [&] {
    MemorySource source(tags, 1000, 0, 200'000'000);
    return sender.send(source);
  });
  MeasurementGraph graph(receiver);
  auto& rate = graph.emplace<Countrate>("rate", std::vector<channel_t>{1, 2});
  const Profile profile = graph.run();
  sending.get();

  const Parameters statistics = sourceStatistics(receiver);
  const UdpReceiverStats stats = receiver.stats();
  REQUIRE(stats.datagrams_lost == 1);
  TempDir folder;
  const std::string path = folder.file("udp.h5");
  writeResultsHdf5(path, {rate.getResults()}, profile,
                   RunInfo{receiver.describe(), "", statistics});

  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t group = H5Gopen2(file, "source", H5P_DEFAULT);
  REQUIRE(group >= 0);
  CHECK(intAttribute(group, "datagrams_lost") == 1);
  CHECK(intAttribute(group, "gaps") == 1);
  CHECK(static_cast<std::uint64_t>(intAttribute(group, "datagrams_accepted")) ==
        stats.datagrams_accepted);
  CHECK(static_cast<std::uint64_t>(intAttribute(group, "tags")) == stats.tags);
  CHECK(static_cast<std::uint64_t>(intAttribute(group, "events_lost")) == stats.events_lost);
  CHECK(intAttribute(group, "malformed") == 0);
  CHECK(intAttribute(group, "largest_datagram_bytes") <= 1500 - 28);
  H5Gclose(group);
  H5Fclose(file);
  // Other sources count nothing: no /source group.
  MemorySource plain(tags, 1000, 0, 200'000'000);
  CHECK(sourceStatistics(plain).entries().empty());
}
