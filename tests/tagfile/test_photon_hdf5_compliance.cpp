// Photon-HDF5 export and import against the format's rules. An export carries exactly the
// official fields of the spec's field list that it writes (photon-hdf5_specs.json of the
// reference library, phconvert, format 0.5), each with the official description as its TITLE
// attribute, nothing unofficial outside /user, and what the reference validator
// (phconvert.hdf5.assert_valid_photon_hdf5) requires besides: the mandatory /setup and
// /identity fields, root attributes, /setup/excitation_cw, and measurement_specs with its
// detectors_specs group. Detector ids are listed however many there are. Import: T3 files
// (nanotimes) come in like T3 PTU files (sync tags on channel 100, times rounded to the nearest
// ps), compressed files read through HDF5's filters and plugins, a missing filter is named and
// leaves no output, and a failed export leaves no file. Files are built with the HDF5 C API.
#include <hdf5.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/photon_hdf5.hpp"
#include "tagflow/io/sources/memory_source.hpp"

using namespace tagflow;

namespace {

// ---- The spec ------------------------------------------------------------------------------

// The official fields an export writes, with their kind and description exactly as the
// Photon-HDF5 0.5 field list gives them (phconvert/specs/photon-hdf5_specs.json). The
// "spectral_ch!M" description is the template "Pixel IDs for the {NTH} spectral channel!! (i.e.
// {DA} in a 2-color smFRET measurement)!!." filled in for M = 1 as phconvert does. The
// validator compares every node's TITLE with this text and refuses any other node outside
// /user.
struct SpecField {
  const char* path;
  const char* kind;  // group, scalar, array, string (scalar byte string)
  const char* description;
};

const std::vector<SpecField> kWrittenFields = {
    {"/", "group",
     "A file format for photon-counting detector based single-molecule spectroscopy "
     "experiments."},
    {"/description", "string", "A user-defined comment describing the data file."},
    {"/acquisition_duration", "scalar", "Measurement duration in seconds."},
    {"/format_name", "string", "Name of the file format."},
    {"/format_version", "string", "Version for the Photon-HDF5 format."},
    {"/photon_data", "group", "Group containing arrays of photon-data."},
    {"/photon_data/timestamps", "array",
     "Array of photon timestamps. Units specified in timestamps_units (defined in "
     "timestamps_specs/)."},
    {"/photon_data/detectors", "array", "Array of pixel IDs for each timestamp."},
    {"/photon_data/timestamps_specs", "group", "Specifications for timestamps."},
    {"/photon_data/timestamps_specs/timestamps_unit", "scalar",
     "Value of 1-unit timestamp-increment in seconds."},
    {"/photon_data/measurement_specs", "group",
     "Metadata necessary for interpretation of the particular type of measurement."},
    {"/photon_data/measurement_specs/measurement_type", "string",
     "Name of the measurement the data represents."},
    {"/photon_data/measurement_specs/detectors_specs", "group",
     "Mapping between the pixel IDs and the detection channels."},
    {"/photon_data/measurement_specs/detectors_specs/spectral_ch1", "array",
     "Pixel IDs for the first spectral channel (i.e. donor in a 2-color smFRET measurement)."},
    {"/setup", "group", "Information about the experimental setup."},
    {"/setup/num_pixels", "scalar", "Total number of detector pixels."},
    {"/setup/num_spots", "scalar", "Number of excitation (or detection) \"spots\" in the sample."},
    {"/setup/num_spectral_ch", "scalar", "Number of distinct spectral bands which are acquired."},
    {"/setup/num_polarization_ch", "scalar",
     "Number of distinct polarization states which are acquired."},
    {"/setup/num_split_ch", "scalar",
     "Number of distinct detection channels detecting the same spectral band and polarization. "
     "This value is > 1 when using a non-polarizing beam splitter."},
    {"/setup/modulated_excitation", "scalar",
     "True (i.e. 1) if there is any form of excitation modulation of excitation wavelength (as "
     "in us-ALEX or PAX) or polarization. This field is also True for pulse-interleaved "
     "excitation (PIE) or ns-ALEX measurements."},
    {"/setup/excitation_alternated", "array",
     "New in version 0.5. Indicates whether each excitation source is alternated (True, or 1) "
     "or not alternated (False, or 0)."},
    {"/setup/lifetime", "scalar",
     "True (i.e. 1) if the measurement includes a nanotimes array of photon arrival times with "
     "respect to a laser pulse (as in TCSPC measurements)."},
    {"/setup/excitation_cw", "array",
     "For each excitation source, this field indicates whether excitation is continuous wave "
     "(CW), True (i.e. 1), or pulsed, False (i.e. 0)."},
    {"/setup/detectors", "group",
     "Metadata relative to each detector's pixel. Each field is an array with size equal to the "
     "number of the detectors."},
    {"/setup/detectors/id", "array", "Detector IDs as they appear on /photon_data/detectors."},
    {"/identity", "group", "Information about the Photon-HDF5 data file."},
    {"/identity/format_name", "string", "Name of the file format."},
    {"/identity/format_version", "string", "Version for the Photon-HDF5 format."},
    {"/identity/format_url", "string", "Official URL for the Photon-HDF5 format."},
    {"/identity/software", "string",
     "Name of the software used to create the current Photon-HDF5 file."},
    {"/identity/software_version", "string",
     "Version of the software used to create current the Photon-HDF5 file."},
    {"/identity/creation_time", "string", "Creation time of the current Photon-HDF5 file."},
    {"/identity/filename", "string",
     "Original file name of the current Photon-HDF5 file (i.e. file name at creation time)."},
    {"/identity/filename_full", "string",
     "Original file name (with full path) of the current Photon-HDF5 file (i.e. full file name "
     "at creation time)."},
    {"/provenance", "group", "Information about the original data file."},
    {"/provenance/filename", "string",
     "File name of the original data file before conversion to Photon-HDF5."},
    {"/provenance/filename_full", "string",
     "File name (with full path) of the original data file before conversion to Photon-HDF5."},
    {"/provenance/modification_time", "string",
     "Time of last modification of the original data file."},
};

// What the validator demands by name (phconvert/hdf5.py: _setup_mantatory_fields,
// _identity_mantatory_fields, the root fields (format_name and format_version with
// require_rootformat), and _check_photon_data_tables: excitation_cw,
// measurement_specs/measurement_type, detectors_specs when there are detectors).
const std::vector<std::string> kMandatory = {
    "/description",
    "/acquisition_duration",
    "/format_name",
    "/format_version",
    "/setup/num_pixels",
    "/setup/num_spots",
    "/setup/num_spectral_ch",
    "/setup/num_polarization_ch",
    "/setup/num_split_ch",
    "/setup/modulated_excitation",
    "/setup/lifetime",
    "/setup/excitation_alternated",
    "/setup/excitation_cw",
    "/identity/format_name",
    "/identity/format_version",
    "/identity/format_url",
    "/identity/software",
    "/identity/software_version",
    "/identity/creation_time",
    "/photon_data/timestamps",
    "/photon_data/timestamps_specs/timestamps_unit",
    "/photon_data/measurement_specs/measurement_type",
    "/photon_data/measurement_specs/detectors_specs",
};

// ---- HDF5 helpers --------------------------------------------------------------------------

class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void quietHdf5() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

bool hasObject(hid_t file, const std::string& path) {
  if (path == "/") return true;
  // Every link on the way must exist (H5Lexists refuses a path through a missing group).
  std::size_t at = 1;
  while (true) {
    const std::size_t slash = path.find('/', at);
    const std::string prefix = path.substr(0, slash);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) return true;
    at = slash + 1;
  }
}

std::string readTypedString(hid_t object, hid_t type, bool attribute) {
  if (H5Tis_variable_str(type) > 0) {
    Id memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory, H5T_VARIABLE);
    char* text = nullptr;
    const herr_t status = attribute ? H5Aread(object, memory, &text)
                                    : H5Dread(object, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text);
    REQUIRE(status >= 0);
    std::string value = text == nullptr ? "" : text;
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type), '\0');
  const herr_t status = attribute
                            ? H5Aread(object, type, value.data())
                            : H5Dread(object, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data());
  REQUIRE(status >= 0);
  value.resize(std::strlen(value.c_str()));  // fixed-length strings are padded with NULs
  return value;
}

std::string attributeText(hid_t file, const std::string& path, const char* name) {
  Id object(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
  REQUIRE(object >= 0);
  if (H5Aexists(object, name) <= 0) return "<no attribute " + std::string(name) + ">";
  Id attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  Id type(H5Aget_type(attribute), H5Tclose);
  REQUIRE(H5Tget_class(type) == H5T_STRING);
  return readTypedString(attribute, type, true);
}

std::string stringDataset(hid_t file, const std::string& path) {
  Id set(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  REQUIRE(set >= 0);
  Id type(H5Dget_type(set), H5Tclose);
  REQUIRE(H5Tget_class(type) == H5T_STRING);
  return readTypedString(set, type, false);
}

template <typename T>
std::vector<T> arrayDataset(hid_t file, const std::string& path, hid_t memory_type) {
  Id set(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  REQUIRE(set >= 0);
  Id space(H5Dget_space(set), H5Sclose);
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  std::vector<T> values(static_cast<std::size_t>(count));
  if (count > 0)
    REQUIRE(H5Dread(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  return values;
}

double doubleScalar(hid_t file, const std::string& path) {
  const auto values = arrayDataset<double>(file, path, H5T_NATIVE_DOUBLE);
  REQUIRE(values.size() == 1);
  return values[0];
}

std::int64_t intScalar(hid_t file, const std::string& path) {
  const auto values = arrayDataset<std::int64_t>(file, path, H5T_NATIVE_INT64);
  REQUIRE(values.size() == 1);
  return values[0];
}

// "group", "scalar", "array" or "string" (a scalar string dataset).
std::string kindOf(hid_t file, const std::string& path) {
  Id object(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
  REQUIRE(object >= 0);
  if (H5Iget_type(object) == H5I_GROUP) return "group";
  REQUIRE(H5Iget_type(object) == H5I_DATASET);
  Id space(H5Dget_space(object), H5Sclose);
  Id type(H5Dget_type(object), H5Tclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank == 0) return H5Tget_class(type) == H5T_STRING ? "string" : "scalar";
  return "array";
}

herr_t collectLink(hid_t, const char* name, const H5L_info_t*, void* data) {
  std::string path = "/";  // (`"/" + std::string(name)` trips GCC 12's -Wrestrict)
  path += name;
  static_cast<std::vector<std::string>*>(data)->push_back(path);
  return 0;
}

// Every object path in the file, "/" included.
std::vector<std::string> allPaths(hid_t file) {
  std::vector<std::string> paths{"/"};
  REQUIRE(H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collectLink, &paths) >= 0);
  return paths;
}

// ---- Writing test files --------------------------------------------------------------------

// How a test file's arrays are compressed: not at all, shuffle + deflate (built into HDF5), or
// one plugin filter with its parameters.
struct Filter {
  H5Z_filter_t id = -1;  // -1: none; H5Z_FILTER_DEFLATE: shuffle + deflate
  std::vector<unsigned> parameters;
};
const Filter kNoFilter{};
const Filter kGzip{H5Z_FILTER_DEFLATE, {6}};

// The plugins of Debian's hdf5-filter-plugin (lz4, bzip2) and hdf5-filter-plugin-blosc-serial,
// with their registered ids. Blosc's parameters: 4 slots its filter fills in, level 5, byte
// shuffle, blosclz; lz4: default block size; bzip2: block size 9.
struct PluginFilter {
  const char* name;
  const char* package;
  Filter filter;
};
const std::vector<PluginFilter> kPluginFilters = {
    {"blosc", "hdf5-filter-plugin-blosc-serial", {32001, {0, 0, 0, 0, 5, 1, 0}}},
    {"lz4", "hdf5-filter-plugin", {32004, {0}}},
    {"bzip2", "hdf5-filter-plugin", {307, {9}}},
};

// From the range HDF5 reserves for testing (256-511): no plugin provides it.
constexpr H5Z_filter_t kTestFilter = 300;
constexpr const char* kTestFilterName = "tagflow-test-filter";
const Filter kUnavailable{kTestFilter, {}};

size_t identityFilter(unsigned, size_t, const unsigned[], size_t nbytes, size_t*, void**) {
  return nbytes;
}

class Writer {
 public:
  explicit Writer(const std::string& path)
      : file_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose) {
    REQUIRE(file_ >= 0);
  }
  hid_t file() const { return file_; }

  void group(const std::string& path) {
    Id group(H5Gcreate2(file_, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    REQUIRE(group >= 0);
  }
  void scalar(const std::string& path, double value) {
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id set(H5Dcreate2(file_, path.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                      H5P_DEFAULT),
           H5Dclose);
    REQUIRE(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0);
  }
  void integer(const std::string& path, std::int64_t value) {
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id set(H5Dcreate2(file_, path.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                      H5P_DEFAULT),
           H5Dclose);
    REQUIRE(H5Dwrite(set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0);
  }
  void text(const std::string& path, const std::string& value) {
    Id type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, std::max<std::size_t>(value.size(), 1));
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id set(H5Dcreate2(file_, path.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose);
    std::string padded = value;
    padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
    REQUIRE(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()) >= 0);
  }
  template <typename T>
  void array(const std::string& path, hid_t file_type, hid_t memory_type,
             const std::vector<T>& values, const Filter& filter = kNoFilter) {
    const hsize_t dims[1] = {values.size()};
    Id space(H5Screate_simple(1, dims, nullptr), H5Sclose);
    Id properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (filter.id >= 0 && !values.empty()) {
      const hsize_t chunk[1] = {std::min<hsize_t>(values.size(), 1000)};
      REQUIRE(H5Pset_chunk(properties, 1, chunk) >= 0);
      if (filter.id == H5Z_FILTER_DEFLATE) {
        REQUIRE(H5Pset_shuffle(properties) >= 0);
        REQUIRE(H5Pset_deflate(properties, filter.parameters.at(0)) >= 0);
      } else {
        REQUIRE(H5Pset_filter(properties, filter.id, H5Z_FLAG_MANDATORY, filter.parameters.size(),
                              filter.parameters.data()) >= 0);
      }
    }
    Id set(H5Dcreate2(file_, path.c_str(), file_type, space, H5P_DEFAULT, properties, H5P_DEFAULT),
           H5Dclose);
    REQUIRE(set >= 0);
    if (!values.empty()) {
      REQUIRE(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
    }
  }

 private:
  Id file_;
};

// A Photon-HDF5 file of another program: timestamps (int64), detectors (uint8), optionally
// nanotimes (uint16) with their TCSPC unit, the arrays compressed with `filter`.
struct ForeignFile {
  std::vector<std::int64_t> timestamps;
  std::vector<std::uint64_t> unsigned_timestamps;  // written as uint64 instead when not empty
  std::vector<std::uint8_t> detectors;
  std::vector<std::uint16_t> nanotimes;  // empty: a T2 file
  double timestamps_unit = 1e-12;
  double tcspc_unit = 0;
  Filter filter = kNoFilter;
};

void writeForeign(const std::string& path, const ForeignFile& content) {
  Writer w(path);
  w.text("/description", "written by the tagflow tests");
  w.group("/photon_data");
  if (content.unsigned_timestamps.empty()) {
    w.array("/photon_data/timestamps", H5T_STD_I64LE, H5T_NATIVE_INT64, content.timestamps,
            content.filter);
  } else {
    w.array("/photon_data/timestamps", H5T_STD_U64LE, H5T_NATIVE_UINT64,
            content.unsigned_timestamps, content.filter);
  }
  if (!content.detectors.empty()) {
    w.array("/photon_data/detectors", H5T_STD_U8LE, H5T_NATIVE_UINT8, content.detectors,
            content.filter);
  }
  w.group("/photon_data/timestamps_specs");
  w.scalar("/photon_data/timestamps_specs/timestamps_unit", content.timestamps_unit);
  const bool t3 = !content.nanotimes.empty();
  if (t3) {
    w.array("/photon_data/nanotimes", H5T_STD_U16LE, H5T_NATIVE_UINT16, content.nanotimes,
            content.filter);
    w.group("/photon_data/nanotimes_specs");
    w.scalar("/photon_data/nanotimes_specs/tcspc_unit", content.tcspc_unit);
    w.integer("/photon_data/nanotimes_specs/tcspc_num_bins", 4096);
  }
  w.group("/setup");
  w.integer("/setup/num_pixels", 2);
  w.integer("/setup/lifetime", t3 ? 1 : 0);
  w.array("/setup/excitation_cw", H5T_STD_U8LE, H5T_NATIVE_UINT8,
          std::vector<std::uint8_t>{static_cast<std::uint8_t>(t3 ? 0 : 1)});
}

std::vector<Tag> importAll(const std::string& path, std::size_t block_size = 16384) {
  PhotonHdf5Source source(path, block_size);
  const test::DrainedStream stream = test::drain(source);
  test::requireWellFormed(stream);
  return stream.tags;
}

std::vector<Tag> withoutReserved(std::vector<Tag> tags) {
  for (Tag& tag : tags) tag.reserved = 0;
  return tags;
}

// A stream of `count` time tags: Poisson arrivals at about 10 MHz on `channels`.
std::vector<Tag> poissonTags(std::uint64_t seed, std::size_t count,
                             const std::vector<channel_t>& channels) {
  std::mt19937_64 random(seed);
  std::exponential_distribution<double> gap(1.0 / 100'000.0);
  std::uniform_int_distribution<std::size_t> pick(0, channels.size() - 1);
  std::vector<Tag> tags;
  timestamp_t time = 1'000'000;
  for (std::size_t i = 0; i < count; ++i) {
    time += static_cast<timestamp_t>(gap(random));
    tags.push_back(makeTimeTag(channels[pick(random)], time));
  }
  return tags;
}

std::uint64_t exportTags(const std::vector<Tag>& tags, const std::string& path,
                         const PhotonHdf5Export& info = {}) {
  MemorySource source(std::make_shared<const std::vector<Tag>>(tags), 4096);
  return writePhotonHdf5(source, path, info);
}

// Serves one block, then fails like a source whose file went bad halfway.
class FailingSource : public Source {
 public:
  bool next(BlockBuffer& out) override {
    if (served_) throw DataError("the input broke halfway");
    served_ = true;
    out.storage = {makeTimeTag(1, 10), makeTimeTag(2, 20)};
    out.publishStorage();
    out.begin_time = 0;
    out.end_time = 100;
    return true;
  }
  std::size_t maxBlockTags() const override { return 2; }
  std::string describe() const override { return "failing"; }

 private:
  bool served_ = false;
};

}  // namespace

TEST_CASE("Photon-HDF5 export: the spec's fields with their official descriptions, nothing else",
          "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  const auto tags = test::featureStream(11, 20000, {1, 2, 3, -2});
  const std::string original = dir.file("run.tags");
  { std::ofstream(original) << "stands for the recording"; }
  const std::string path = dir.file("export.h5");
  REQUIRE(exportTags(tags, path, PhotonHdf5Export{"a test export", original, "configuration"}) ==
          tags.size());
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  REQUIRE(file >= 0);

  SECTION("every official field written has its kind and its description word for word") {
    for (const SpecField& field : kWrittenFields) {
      INFO(field.path);
      REQUIRE(hasObject(file, field.path));
      CHECK(kindOf(file, field.path) == field.kind);
      CHECK(attributeText(file, field.path, "TITLE") == field.description);
      // PyTables (the validator's reader) reads a scalar as a Python value, a string as bytes
      // that the validator decodes, only with the attributes its own writer adds.
      const std::string kind = field.kind;
      if (kind == "string" || kind == "scalar") {
        CHECK(attributeText(file, field.path, "CLASS") == "ARRAY");
        CHECK(attributeText(file, field.path, "FLAVOR") == "python");
      }
    }
  }
  SECTION("nothing outside /user that the field list does not name") {
    std::set<std::string> official;
    for (const SpecField& field : kWrittenFields) official.insert(field.path);
    for (const std::string& path : allPaths(file)) {
      if (path == "/user" || path.rfind("/user/", 0) == 0) continue;
      INFO(path);
      CHECK(official.count(path) == 1);
    }
    CHECK(hasObject(file, "/user/tagflow/special_times"));
  }
  SECTION("the fields the validator demands are there") {
    for (const std::string& path : kMandatory) {
      INFO(path);
      CHECK(hasObject(file, path));
    }
    CHECK(attributeText(file, "/", "format_name") == "Photon-HDF5");
    CHECK(attributeText(file, "/", "format_version") == "0.5");
    CHECK(attributeText(file, "/", "format_url") == "http://photon-hdf5.org/");
  }
  SECTION("the values: a generic CW measurement without lifetime, one spot and band") {
    CHECK(stringDataset(file, "/photon_data/measurement_specs/measurement_type") == "generic");
    CHECK(arrayDataset<std::int64_t>(file, "/setup/excitation_cw", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{1});
    CHECK(arrayDataset<std::int64_t>(file, "/setup/excitation_alternated", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{0});
    CHECK(intScalar(file, "/setup/lifetime") == 0);
    CHECK(intScalar(file, "/setup/modulated_excitation") == 0);
    for (const char* name :
         {"num_spots", "num_spectral_ch", "num_polarization_ch", "num_split_ch"}) {
      CHECK(intScalar(file, std::string("/setup/") + name) == 1);
    }
    // All lasers CW and none alternated: the validator then forbids the pulsed and ALEX fields.
    for (const char* path :
         {"/setup/laser_repetition_rates", "/photon_data/measurement_specs/laser_repetition_rate",
          "/photon_data/measurement_specs/alex_period", "/photon_data/nanotimes"}) {
      CHECK_FALSE(hasObject(file, path));
    }
    CHECK(doubleScalar(file, "/photon_data/timestamps_specs/timestamps_unit") == 1e-12);
    CHECK(stringDataset(file, "/description") == "a test export");
    CHECK(stringDataset(file, "/format_name") == "Photon-HDF5");
    CHECK(stringDataset(file, "/format_version") == "0.5");
    CHECK(stringDataset(file, "/identity/format_name") == "Photon-HDF5");
    CHECK(stringDataset(file, "/identity/format_version") == "0.5");
    CHECK(stringDataset(file, "/identity/software") == "tagflow");
    CHECK(stringDataset(file, "/identity/filename") == "export.h5");
    CHECK(stringDataset(file, "/provenance/filename") == "run.tags");

    std::vector<std::int64_t> times;
    std::vector<std::int32_t> channels;
    for (const Tag& tag : tags) {
      if (tag.type != TagType::TimeTag) continue;
      times.push_back(tag.time);
      channels.push_back(tag.channel);
    }
    CHECK(arrayDataset<std::int64_t>(file, "/photon_data/timestamps", H5T_NATIVE_INT64) == times);
    CHECK(arrayDataset<std::int32_t>(file, "/photon_data/detectors", H5T_NATIVE_INT32) == channels);
    const std::vector<std::int32_t> ids{-2, 1, 2, 3};
    CHECK(arrayDataset<std::int32_t>(file, "/setup/detectors/id", H5T_NATIVE_INT32) == ids);
    CHECK(arrayDataset<std::int32_t>(file,
                                     "/photon_data/measurement_specs/detectors_specs/spectral_ch1",
                                     H5T_NATIVE_INT32) == ids);
    CHECK(intScalar(file, "/setup/num_pixels") == 4);
    const double duration = static_cast<double>(tags.back().time + 1 - tags.front().time) * 1e-12;
    CHECK(doubleScalar(file, "/acquisition_duration") == Approx(duration).epsilon(1e-12));
  }
}

TEST_CASE("Photon-HDF5 export imports back as the same stream", "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  const auto tags = test::featureStream(5, 30000, {1, 2, 3, -4});
  const std::string path = dir.file("round.h5");
  exportTags(tags, path);
  PhotonHdf5Source source(path, 1000);
  const test::DrainedStream stream = test::drain(source);
  test::requireWellFormed(stream);
  CHECK(stream.tags == withoutReserved(tags));
  CHECK(stream.begin() == tags.front().time);
  CHECK(stream.end() == tags.back().time + 1);
}

TEST_CASE("Photon-HDF5 export lists every detector id, also beyond 4096", "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  std::vector<Tag> tags;
  std::vector<std::int32_t> expected;
  for (channel_t channel = -500; channel < 4700; ++channel) expected.push_back(channel);
  for (std::size_t i = 0; i < 3 * expected.size(); ++i) {
    // Each id three times, in an order that is not sorted by channel.
    const channel_t channel = expected[(i * 7919) % expected.size()];
    tags.push_back(makeTimeTag(channel, static_cast<timestamp_t>(i) * 1000));
  }
  const std::string path = dir.file("many.h5");
  exportTags(tags, path);
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  CHECK(arrayDataset<std::int32_t>(file, "/setup/detectors/id", H5T_NATIVE_INT32) == expected);
  CHECK(intScalar(file, "/setup/num_pixels") == static_cast<std::int64_t>(expected.size()));
  CHECK(arrayDataset<std::int32_t>(file,
                                   "/photon_data/measurement_specs/detectors_specs/spectral_ch1",
                                   H5T_NATIVE_INT32) == expected);
  // Every detector in photon_data is in detectors/id: the validator's check.
  const auto detectors =
      arrayDataset<std::int32_t>(file, "/photon_data/detectors", H5T_NATIVE_INT32);
  const std::set<std::int32_t> listed(expected.begin(), expected.end());
  for (const std::int32_t detector : detectors) REQUIRE(listed.count(detector) == 1);
}

TEST_CASE("Photon-HDF5 T3 files import like T3 PTU files", "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  const std::string path = dir.file("t3.h5");

  SECTION("sync tags and nanotimes, computed by hand") {
    // Sync period 12501.6 ps, TCSPC bin 4.1 ps: neither is whole, so every time is rounded.
    ForeignFile content;
    content.timestamps = {3, 3, 10, 11, 12, 1'000'000};
    content.detectors = {1, 2, 1, 2, 1, 2};
    content.nanotimes = {6, 1, 0, 4000, 0, 4000};
    content.timestamps_unit = 12.5016e-9;
    content.tcspc_unit = 4.1e-12;
    writeForeign(path, content);
    const std::vector<Tag> expected = {
        makeTimeTag(100, 37505),           // sync of period 3: 37504.8
        makeTimeTag(2, 37509),             // 37504.8 + 1 * 4.1 = 37508.9
        makeTimeTag(1, 37529),             // 37504.8 + 6 * 4.1 = 37529.4
        makeTimeTag(100, 125016),          // period 10: 125016.0
        makeTimeTag(1, 125016),            // nanotime 0
        makeTimeTag(100, 137518),          // period 11: 137517.6
        makeTimeTag(100, 150019),          // period 12: 150019.2
        makeTimeTag(1, 150019),            // nanotime 0 of period 12
        makeTimeTag(2, 153918),            // period 11 + 4000 * 4.1 = 153917.6, after period 12
        makeTimeTag(100, 12'501'600'000),  // period 1e6
        makeTimeTag(2, 12'501'616'400),    // + 16400
    };
    PhotonHdf5Source source(path, 3);
    const test::DrainedStream stream = test::drain(source);
    test::requireWellFormed(stream);
    CHECK(stream.tags == expected);
    CHECK(stream.begin() == 37505);
    CHECK(stream.end() == 12'501'616'401);
  }

  SECTION("a long file read in many pieces equals the sorted brute-force stream") {
    // Whole units (12500 ps period, 16 ps bins) and nanotimes reaching two periods ahead.
    ForeignFile content;
    std::mt19937_64 random(3);
    std::uniform_int_distribution<int> step(0, 2);
    std::uniform_int_distribution<int> bin(0, 1600);
    std::int64_t macro = 0;
    for (int i = 0; i < 200'000; ++i) {
      macro += step(random);
      content.timestamps.push_back(macro);
      content.detectors.push_back(static_cast<std::uint8_t>(1 + i % 3));
      content.nanotimes.push_back(static_cast<std::uint16_t>(bin(random)));
    }
    content.timestamps_unit = 12.5e-9;
    content.tcspc_unit = 16e-12;
    content.filter = kGzip;
    writeForeign(path, content);
    std::vector<Tag> expected;
    std::int64_t last = -1;
    for (std::size_t i = 0; i < content.timestamps.size(); ++i) {
      const std::int64_t sync = content.timestamps[i] * 12500;
      if (content.timestamps[i] != last) expected.push_back(makeTimeTag(100, sync));
      last = content.timestamps[i];
      expected.push_back(makeTimeTag(content.detectors[i], sync + content.nanotimes[i] * 16));
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [](const Tag& a, const Tag& b) { return a.time < b.time; });
    CHECK(importAll(path, 777) == expected);
  }

  SECTION("a detector numbered like the sync channel is refused") {
    ForeignFile content;
    content.timestamps = {1, 2};
    content.detectors = {1, 100};
    content.nanotimes = {1, 1};
    content.timestamps_unit = 12.5e-9;
    content.tcspc_unit = 16e-12;
    writeForeign(path, content);
    CHECK_THROWS_WITH(importAll(path),
                      Catch::Contains("detector 100") && Catch::Contains("sync channel 100"));
  }
}

TEST_CASE("Photon-HDF5 import: compressed files read through HDF5's filters", "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  ForeignFile content;
  for (int i = 0; i < 5000; ++i) {
    content.timestamps.push_back(1000 + 37 * i + (i * i) % 11);
    content.detectors.push_back(static_cast<std::uint8_t>(i % 2));
  }
  content.timestamps_unit = 5e-12;  // a whole number of picoseconds: times * 5
  std::vector<Tag> expected;
  for (std::size_t i = 0; i < content.timestamps.size(); ++i) {
    expected.push_back(makeTimeTag(content.detectors[i], content.timestamps[i] * 5));
  }

  SECTION("gzip (deflate) with shuffle") {
    content.filter = kGzip;
    writeForeign(dir.file("gzip.h5"), content);
    CHECK(importAll(dir.file("gzip.h5"), 1000) == expected);
  }
  SECTION("blosc, lz4 and bzip2, when their plugins are installed") {
    for (const PluginFilter& plugin : kPluginFilters) {
      if (H5Zfilter_avail(plugin.filter.id) <= 0) {
        WARN("the " << plugin.name << " HDF5 plugin is not installed (Debian: " << plugin.package
                    << "): " << plugin.name << " import not tested");
        continue;
      }
      INFO(plugin.name);
      content.filter = plugin.filter;
      const std::string path = dir.file(std::string(plugin.name) + ".h5");
      writeForeign(path, content);
      CHECK(importAll(path, 1000) == expected);
    }
  }
  SECTION("a filter that is not available is named, and no output is left") {
    const H5Z_class2_t test_filter = {H5Z_CLASS_T_VERS, kTestFilter, 1,       1,
                                      kTestFilterName,  nullptr,     nullptr, identityFilter};
    REQUIRE(H5Zregister(&test_filter) >= 0);
    content.filter = kUnavailable;
    writeForeign(dir.file("unavailable.h5"), content);
    REQUIRE(H5Zunregister(kTestFilter) >= 0);
    const std::string output = dir.file("out.h5");
    const auto convert = [&] {
      PhotonHdf5Source source(dir.file("unavailable.h5"), 1000);
      writePhotonHdf5(source, output, {});
    };
    CHECK_THROWS_WITH(convert(), Catch::Contains("filter 300") &&
                                     Catch::Contains(kTestFilterName) &&
                                     Catch::Contains("photon_data/timestamps"));
    CHECK(dir.entries() == std::vector<std::string>{"unavailable.h5"});
  }
}

TEST_CASE("Photon-HDF5 export: a failed export leaves no file", "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  FailingSource source;
  CHECK_THROWS_WITH(writePhotonHdf5(source, dir.file("out.h5"), {}),
                    Catch::Contains("broke halfway"));
  CHECK(dir.entries().empty());
  // An existing file of that name stays as it was.
  { std::ofstream(dir.file("out.h5")) << "before"; }
  FailingSource again;
  CHECK_THROWS(writePhotonHdf5(again, dir.file("out.h5"), {}));
  CHECK(dir.entries() == std::vector<std::string>{"out.h5"});
  CHECK(std::filesystem::file_size(dir.file("out.h5")) == 6);
}

TEST_CASE("Photon-HDF5 import: a timestamps unit that is no whole picosecond is named",
          "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  ForeignFile content;
  content.timestamps = {1, 2, 3};
  content.detectors = {0, 1, 0};
  content.timestamps_unit = 1.5e-12;
  writeForeign(dir.file("odd.h5"), content);
  CHECK_THROWS_WITH(PhotonHdf5Source(dir.file("odd.h5"), 100),
                    Catch::Contains("timestamps_unit 1.5e-12 s") &&
                        Catch::Contains("whole number of picoseconds"));
}

TEST_CASE("Photon-HDF5 import: uint64 timestamps beyond int64 are refused, not clipped",
          "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  // HDF5 converts 2^63 and more to INT64_MAX, one past the last time a stream can end after.
  for (const std::uint64_t big : {std::uint64_t{1} << 63, ~std::uint64_t{0},
                                  std::uint64_t{std::numeric_limits<std::int64_t>::max()}}) {
    INFO("timestamp " << big);
    ForeignFile content;
    content.unsigned_timestamps = {1, 2, big};
    content.detectors = {0, 1, 0};
    writeForeign(dir.file("big.h5"), content);
    PhotonHdf5Source source(dir.file("big.h5"), 100);
    BlockBuffer block;
    CHECK_THROWS_WITH(
        [&] {
          while (source.next(block)) {
          }
        }(),
        Catch::Contains("timestamp 9223372036854775807 or more of photon 2 is out of range") &&
            Catch::Contains("valid: |timestamp| < 9223372036854775807 with a unit of 1 ps"));
  }
  // uint64 timestamps within range read.
  ForeignFile content;
  content.unsigned_timestamps = {1, 2, std::uint64_t{1} << 40};
  content.detectors = {0, 1, 0};
  writeForeign(dir.file("fits.h5"), content);
  CHECK(importAll(dir.file("fits.h5")).back().time == timestamp_t{1} << 40);
}

TEST_CASE("Photon-HDF5 export is compact: a small export takes a few bytes a tag",
          "[photon-hdf5]") {
  quietHdf5();
  test::TempDir dir;
  const auto tags = poissonTags(9, 10233, {1, 2, 3, 4});
  const std::string path = dir.file("small.h5");
  exportTags(tags, path);
  const double bytes_per_tag =
      static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(tags.size());
  CHECK(importAll(path) == tags);
  // Measured: 54474 bytes, 5.3 bytes a tag (the format before: 810200 bytes, 79 a tag).
  CAPTURE(std::filesystem::file_size(path), bytes_per_tag);
  CHECK(bytes_per_tag < 8);
}
