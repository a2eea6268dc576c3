// writeResultsHdf5: results read back through the HDF5 C API (datasets, unit attributes,
// parameters and facts as attributes, /profile, /virtual_channels with live changes); a failed
// write leaves no file under the final name and no temporary; checkOutputWritable fails early
// on unwritable paths.
#include <catch2/catch.hpp>

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/reference.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

// Read-side helpers over the HDF5 C API; each closes what it opens.
class H5Object {
 public:
  H5Object(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) { REQUIRE(id_ >= 0); }
  ~H5Object() {
    if (id_ >= 0) close_(id_);
  }
  H5Object(H5Object&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  H5Object(const H5Object&) = delete;
  H5Object& operator=(const H5Object&) = delete;
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

H5Object varString() {
  H5Object type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  return type;
}

std::string stringAttribute(hid_t object, const std::string& name) {
  H5Object attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  H5Object type = varString();
  char* text = nullptr;
  REQUIRE(H5Aread(attribute, type, &text) >= 0);
  std::string value(text);
  H5free_memory(text);
  return value;
}

template <typename T>
std::vector<T> numericAttribute(hid_t object, const std::string& name, hid_t memory_type) {
  H5Object attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  H5Object space(H5Aget_space(attribute), H5Sclose);
  std::vector<T> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  REQUIRE(H5Aread(attribute, memory_type, values.data()) >= 0);
  return values;
}

template <typename T>
std::vector<T> dataset(hid_t group, const std::string& name, hid_t memory_type,
                       std::vector<hsize_t>* shape = nullptr) {
  H5Object data(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Object space(H5Dget_space(data), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  if (shape) *shape = dims;
  std::vector<T> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  REQUIRE(H5Dread(data, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  return values;
}

std::vector<std::string> stringDataset(hid_t group, const std::string& name) {
  H5Object data(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Object space(H5Dget_space(data), H5Sclose);
  H5Object type = varString();
  std::vector<char*> pointers(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  REQUIRE(H5Dread(data, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) >= 0);
  std::vector<std::string> values(pointers.begin(), pointers.end());
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, pointers.data());
  return values;
}

std::string datasetUnit(hid_t group, const std::string& name) {
  H5Object data(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  return stringAttribute(data, "unit");
}

SyntheticConfig smallStream() {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6), SyntheticChannel::clock(2, 5e5)};
  config.duration_ps = 1'000'000'000;
  config.overflows = {{400'000'000, 450'000'000}};
  config.seed = 8;
  return config;
}

ResultSet namedResult(const std::string& name) {
  ResultSet result;
  result.kind = "Fake";
  result.name = name;
  result.add("values", "1", {2}, std::vector<double>{1.0, 2.0}, "two numbers");
  return result;
}

}  // namespace

TEST_CASE("Results written to HDF5 read back with units, parameters and the profile", "[hdf5]") {
  SyntheticSource source(smallStream());
  Counter counter("counter", {1, 2}, 10'000'000, 150);
  Countrate countrate("countrate", {1, 2});
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(counter);
  graph.add(countrate);
  const Profile profile = graph.run();
  TempDir dir;
  const std::string path = dir.file("results.h5");
  writeResultsHdf5(path, {counter.getResults(), countrate.getResults()}, profile,
                   RunInfo{source.describe(), "[source]\nkind = \"synthetic\"\n"});
  CHECK(dir.entries() == std::vector<std::string>{"results.h5"});  // no temporary left

  H5Object file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  CHECK(stringAttribute(file, "format") == "tagflow-results/1");
  CHECK(stringAttribute(file, "producer") == "tagflow");
  CHECK(stringAttribute(file, "source") == source.describe());
  CHECK(stringAttribute(file, "config") == "[source]\nkind = \"synthetic\"\n");
  CHECK(stringAttribute(file, "time_unit") == "ps");
  CHECK(stringAttribute(file, "tagflow_version") == tagflowVersion());
  CHECK(stringAttribute(file, "created").size() == 20);  // 2024-01-02T03:04:05Z

  SECTION("the Counter group") {
    H5Object group(H5Gopen2(file, "counter", H5P_DEFAULT), H5Gclose);
    CHECK(stringAttribute(group, "kind") == "Counter");
    CHECK(numericAttribute<std::int64_t>(group, "binwidth", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{10'000'000});
    CHECK(numericAttribute<std::int64_t>(group, "n_values", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{150});
    CHECK(numericAttribute<std::int64_t>(group, "channels", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{1, 2});
    CHECK(numericAttribute<std::int64_t>(group, "capture_duration_ps", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{1'000'000'000});
    CHECK(numericAttribute<std::int64_t>(group, "bins_completed", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{100});
    CHECK(numericAttribute<std::int64_t>(group, "overflow_count", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{1});
    CHECK(numericAttribute<std::int8_t>(group, "running", H5T_NATIVE_INT8) ==
          std::vector<std::int8_t>{1});

    std::vector<hsize_t> shape;
    CHECK(dataset<std::int64_t>(group, "data", H5T_NATIVE_INT64, &shape) == counter.getData());
    CHECK(shape == std::vector<hsize_t>{2, 150});
    CHECK(datasetUnit(group, "data") == "counts");
    const auto normalized = dataset<double>(group, "data_normalized", H5T_NATIVE_DOUBLE, &shape);
    CHECK(shape == std::vector<hsize_t>{2, 150});
    CHECK(sameBits(normalized, counter.getDataNormalized()));
    CHECK(std::count_if(normalized.begin(), normalized.end(),
                        [](double v) { return std::isnan(v); }) == 2 * (50 + 5));
    CHECK(datasetUnit(group, "data_normalized") == "Hz");
    CHECK(dataset<std::int8_t>(group, "overflow_mask", H5T_NATIVE_INT8) ==
          counter.getOverflowMask());
    CHECK(datasetUnit(group, "overflow_mask") == "1");
    CHECK(dataset<std::uint64_t>(group, "data_total_counts", H5T_NATIVE_UINT64) ==
          counter.getDataTotalCounts());
    CHECK(dataset<std::int64_t>(group, "index", H5T_NATIVE_INT64) == counter.getIndex());
    CHECK(datasetUnit(group, "index") == "ps");
    H5Object data(H5Dopen2(group, "data", H5P_DEFAULT), H5Dclose);
    CHECK_FALSE(stringAttribute(data, "description").empty());
  }
  SECTION("the Countrate group") {
    H5Object group(H5Gopen2(file, "countrate", H5P_DEFAULT), H5Gclose);
    CHECK(stringAttribute(group, "kind") == "Countrate");
    CHECK(sameBits(dataset<double>(group, "data", H5T_NATIVE_DOUBLE), countrate.getData()));
    CHECK(datasetUnit(group, "data") == "Hz");
    CHECK(dataset<std::int64_t>(group, "counts_total", H5T_NATIVE_INT64) ==
          countrate.getCountsTotal());
  }
  SECTION("the profile group") {
    H5Object group(H5Gopen2(file, "profile", H5P_DEFAULT), H5Gclose);
    CHECK(stringDataset(group, "node") ==
          std::vector<std::string>{"source", "counter", "countrate"});
    CHECK(stringDataset(group, "kind") ==
          std::vector<std::string>{"source", "Counter", "Countrate"});
    std::vector<std::uint64_t> tags, blocks;
    for (const auto& node : profile.nodes) {
      tags.push_back(node.tags);
      blocks.push_back(node.blocks);
    }
    CHECK(dataset<std::uint64_t>(group, "tags", H5T_NATIVE_UINT64) == tags);
    CHECK(dataset<std::uint64_t>(group, "blocks", H5T_NATIVE_UINT64) == blocks);
    CHECK(datasetUnit(group, "busy_s") == "s");
    CHECK(dataset<double>(group, "share", H5T_NATIVE_DOUBLE).at(0) == 0.0);
    CHECK(numericAttribute<std::int64_t>(group, "stream_duration_ps", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{1'000'000'000});
    CHECK(numericAttribute<std::int64_t>(group, "tags", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{static_cast<std::int64_t>(profile.tags)});
    CHECK(numericAttribute<std::int64_t>(group, "threads", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{2});
    CHECK(numericAttribute<double>(group, "wall_s", H5T_NATIVE_DOUBLE).at(0) == profile.wall_s);
  }
}

TEST_CASE("Virtual channels and their live changes are written under /virtual_channels",
          "[hdf5][graph]") {
  SyntheticSource source(smallStream());
  DelayedChannel delayed("delayed", 1, 2'000);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(delayed);
  Countrate countrate("countrate", {delayed.getChannel()});
  graph.add(countrate);
  graph.run(100'000'000);
  delayed.setDelay(3'500);
  graph.run(100'000'000);
  const auto changes = delayed.settingChanges();
  REQUIRE(changes.size() == 1);

  TempDir dir;
  const std::string path = dir.file("results.h5");
  const RunInfo info = runInfoOf(source, graph, "the configuration");
  CHECK(info.source == source.describe());
  writeResultsHdf5(path, {countrate.getResults()}, Profile{}, info);

  H5Object file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  CHECK(stringAttribute(file, "config") == "the configuration");
  H5Object group(H5Gopen2(file, "virtual_channels/delayed", H5P_DEFAULT), H5Gclose);
  CHECK(stringAttribute(group, "kind") == "DelayedChannel");
  CHECK(numericAttribute<std::int64_t>(group, "delay", H5T_NATIVE_INT64) ==
        std::vector<std::int64_t>{2'000});
  CHECK(stringAttribute(group, "delay.unit") == "ps");
  CHECK(numericAttribute<std::int64_t>(group, "output_channels", H5T_NATIVE_INT64) ==
        std::vector<std::int64_t>{delayed.getChannel()});
  CHECK(dataset<std::int64_t>(group, "delay_changes", H5T_NATIVE_INT64) ==
        std::vector<std::int64_t>{3'500});
  CHECK(dataset<std::int64_t>(group, "delay_changed_from", H5T_NATIVE_INT64) ==
        std::vector<std::int64_t>{changes[0].from});
  CHECK(datasetUnit(group, "delay_changes") == "ps");
  CHECK(datasetUnit(group, "delay_changed_from") == "ps");

  // A channel's group lies in /virtual_channels: the file's own names are free there.
  RunInfo own_names;
  own_names.virtual_channels = {namedResult("profile")};
  CHECK_NOTHROW(writeResultsHdf5(dir.file("own.h5"), {}, Profile{}, own_names));
  RunInfo badly_named;
  badly_named.virtual_channels = {namedResult("a/b")};
  REQUIRE_THROWS_WITH(writeResultsHdf5(dir.file("bad.h5"), {}, Profile{}, badly_named),
                      Contains("virtual channel name 'a/b' cannot name a group"));
}

TEST_CASE("A failed HDF5 write leaves no file under the final name", "[hdf5]") {
  TempDir dir;
  const Profile profile;
  SECTION("the folder does not exist") {
    const std::string path = dir.file("missing/results.h5");
    REQUIRE_THROWS_AS(writeResultsHdf5(path, {namedResult("a")}, profile, {}), IoError);
    REQUIRE_THROWS_WITH(writeResultsHdf5(path, {namedResult("a")}, profile, {}),
                        Contains("missing/results.h5"));
    CHECK_FALSE(std::filesystem::exists(dir.file("missing")));
    CHECK(dir.entries().empty());
  }
  SECTION("a result cannot be written half-way through") {
    const std::string path = dir.file("results.h5");
    REQUIRE_THROWS_AS(
        writeResultsHdf5(path, {namedResult("good"), namedResult("a/b")}, profile, {}),
        InvalidArgument);
    REQUIRE_THROWS_WITH(writeResultsHdf5(path, {namedResult("profile")}, profile, {}),
                        Contains("'profile'"));
    // HDF5 would take "a" for "a\0b" and "." for the root group; "source" is the file's own.
    for (const std::string& name :
         {std::string("a\0b", 3), std::string("."), std::string(".."), std::string("source"),
          std::string("virtual_channels"), std::string("tab\there"), std::string()}) {
      INFO(name);
      REQUIRE_THROWS_AS(checkResultsName(name), InvalidArgument);
      REQUIRE_THROWS_AS(writeResultsHdf5(path, {namedResult(name)}, profile, {}), InvalidArgument);
    }
    REQUIRE_THROWS_WITH(checkResultsName(std::string("a\0b", 3)),
                        Contains("measurement name 'a\\x00b' cannot name a group"));
    CHECK_NOTHROW(checkResultsName("g2 log (µs)"));
    REQUIRE_THROWS_AS(writeResultsHdf5(path, {namedResult("x"), namedResult("x")}, profile, {}),
                      IoError);
    CHECK(dir.entries().empty());
  }
  SECTION("an earlier good file survives a failed rewrite") {
    const std::string path = dir.file("results.h5");
    writeResultsHdf5(path, {namedResult("first")}, profile, {});
    REQUIRE_THROWS(
        writeResultsHdf5(path, {namedResult("second"), namedResult("a/b")}, profile, {}));
    CHECK(dir.entries() == std::vector<std::string>{"results.h5"});
    H5Object file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    CHECK(H5Lexists(file, "first", H5P_DEFAULT) > 0);
    CHECK(H5Lexists(file, "second", H5P_DEFAULT) == 0);
  }
  SECTION("the final name is a directory") {
    std::filesystem::create_directory(dir.file("taken.h5"));
    REQUIRE_THROWS_AS(writeResultsHdf5(dir.file("taken.h5"), {namedResult("a")}, profile, {}),
                      IoError);
    CHECK(dir.entries() == std::vector<std::string>{"taken.h5"});
    CHECK(std::filesystem::is_directory(dir.file("taken.h5")));
  }
}

TEST_CASE("checkOutputWritable fails early on an unwritable path and leaves nothing", "[hdf5]") {
  TempDir dir;
  CHECK_NOTHROW(checkOutputWritable(dir.file("out.h5")));
  CHECK(dir.entries().empty());
  REQUIRE_THROWS_AS(checkOutputWritable(dir.file("missing/out.h5")), IoError);
  // Something other than a file in the way, or no path at all.
  std::filesystem::create_directory(dir.file("folder.h5"));
  REQUIRE_THROWS_WITH(checkOutputWritable(dir.file("folder.h5")),
                      Contains("folder.h5': it is a folder"));
  REQUIRE_THROWS_AS(checkOutputWritable(dir.file("folder.h5")), IoError);
  REQUIRE_THROWS_WITH(checkOutputWritable("/dev/null"), Contains("it is a character device"));
  REQUIRE_THROWS_AS(checkOutputWritable(""), InvalidArgument);
  std::filesystem::remove(dir.file("folder.h5"));
  REQUIRE_THROWS_WITH(checkOutputWritable(dir.file("missing/out.h5")), Contains("missing/out.h5"));
  dir.writeBytes("plain", "x", 1);
  REQUIRE_THROWS_AS(checkOutputWritable(dir.file("plain/out.h5")), IoError);
  if (::geteuid() != 0) {  // root may write anywhere
    std::filesystem::create_directory(dir.file("readonly"));
    std::filesystem::permissions(dir.file("readonly"), std::filesystem::perms::owner_read |
                                                           std::filesystem::perms::owner_exec);
    REQUIRE_THROWS_AS(checkOutputWritable(dir.file("readonly/out.h5")), IoError);
    std::filesystem::permissions(dir.file("readonly"), std::filesystem::perms::owner_all);
  }
  const auto left = dir.entries();
  CHECK((left == std::vector<std::string>{"plain"} ||
         left == std::vector<std::string>{"plain", "readonly"}));
}
