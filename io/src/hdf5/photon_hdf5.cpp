// Photon-HDF5 export and import; the contract is in photon_hdf5.hpp. The export's field names
// and descriptions come from the format's field list (photon-hdf5_specs.json of phconvert, the
// Photon-HDF5 project's reference library, format 0.5), and its choices follow what that
// library's validator, assert_valid_photon_hdf5, checks: TITLE of every node outside /user,
// the mandatory /setup and /identity fields, excitation_cw, measurement_specs with a
// detectors_specs group, every detector in /setup/detectors/id.
#include "tagflow/io/hdf5/photon_hdf5.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "hdf5/handle.hpp"
#include "hdf5/replace_whole.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"

namespace tagflow {

namespace {

using hdf5::check;
using hdf5::Handle;
using hdf5::hdf5Reason;
using hdf5::replaceWhole;

constexpr const char* kFormatVersion = "0.5";
constexpr const char* kFormatUrl = "http://photon-hdf5.org/";
// Photons read per refill on import.
constexpr hsize_t kReadPhotons = 1 << 16;
// The largest chunk of the photon arrays: 512 KiB of timestamps, so that a chunk fits HDF5's
// default 1 MiB chunk cache; deflate's 32 KiB window gains nothing from larger chunks.
constexpr hsize_t kMaxChunk = 1 << 16;
// Photons buffered before a write. An export that ends within the first batch is written as
// fixed-size arrays with chunks of its own size, so a small export holds no empty chunk space.
constexpr std::size_t kWriteBatch = kMaxChunk * 16;
// zlib level 4, measured on 10^6 Poisson tags on 4 channels: 2.97 bytes a tag, within 0.5 % of
// levels 6 and 9, in 60 % of level 6's time and a quarter of level 9's.
constexpr unsigned kDeflateLevel = 4;

// The descriptions of the official fields the export writes, word for word from the field list
// (the validator compares them with each node's TITLE). spectral_ch1 is the list's template
// "Pixel IDs for the {NTH} spectral channel!! (i.e. {DA} in a 2-color smFRET measurement)!!."
// filled in for the first channel, as the reference library does.
struct OfficialField {
  std::string_view path;
  std::string_view description;
};
constexpr OfficialField kOfficialFields[] = {
    {"/",
     "A file format for photon-counting detector based single-molecule spectroscopy "
     "experiments."},
    {"/description", "A user-defined comment describing the data file."},
    {"/acquisition_duration", "Measurement duration in seconds."},
    {"/format_name", "Name of the file format."},
    {"/format_version", "Version for the Photon-HDF5 format."},
    {"/photon_data", "Group containing arrays of photon-data."},
    {"/photon_data/timestamps",
     "Array of photon timestamps. Units specified in timestamps_units (defined in "
     "timestamps_specs/)."},
    {"/photon_data/detectors", "Array of pixel IDs for each timestamp."},
    {"/photon_data/timestamps_specs", "Specifications for timestamps."},
    {"/photon_data/timestamps_specs/timestamps_unit",
     "Value of 1-unit timestamp-increment in seconds."},
    {"/photon_data/measurement_specs",
     "Metadata necessary for interpretation of the particular type of measurement."},
    {"/photon_data/measurement_specs/measurement_type",
     "Name of the measurement the data represents."},
    {"/photon_data/measurement_specs/detectors_specs",
     "Mapping between the pixel IDs and the detection channels."},
    {"/photon_data/measurement_specs/detectors_specs/spectral_ch1",
     "Pixel IDs for the first spectral channel (i.e. donor in a 2-color smFRET measurement)."},
    {"/setup", "Information about the experimental setup."},
    {"/setup/num_pixels", "Total number of detector pixels."},
    {"/setup/num_spots", "Number of excitation (or detection) \"spots\" in the sample."},
    {"/setup/num_spectral_ch", "Number of distinct spectral bands which are acquired."},
    {"/setup/num_polarization_ch", "Number of distinct polarization states which are acquired."},
    {"/setup/num_split_ch",
     "Number of distinct detection channels detecting the same spectral band and polarization. "
     "This value is > 1 when using a non-polarizing beam splitter."},
    {"/setup/modulated_excitation",
     "True (i.e. 1) if there is any form of excitation modulation of excitation wavelength (as "
     "in us-ALEX or PAX) or polarization. This field is also True for pulse-interleaved "
     "excitation (PIE) or ns-ALEX measurements."},
    {"/setup/excitation_alternated",
     "New in version 0.5. Indicates whether each excitation source is alternated (True, or 1) "
     "or not alternated (False, or 0)."},
    {"/setup/lifetime",
     "True (i.e. 1) if the measurement includes a nanotimes array of photon arrival times with "
     "respect to a laser pulse (as in TCSPC measurements)."},
    {"/setup/excitation_cw",
     "For each excitation source, this field indicates whether excitation is continuous wave "
     "(CW), True (i.e. 1), or pulsed, False (i.e. 0)."},
    {"/setup/detectors",
     "Metadata relative to each detector's pixel. Each field is an array with size equal to the "
     "number of the detectors."},
    {"/setup/detectors/id", "Detector IDs as they appear on /photon_data/detectors."},
    {"/identity", "Information about the Photon-HDF5 data file."},
    {"/identity/format_name", "Name of the file format."},
    {"/identity/format_version", "Version for the Photon-HDF5 format."},
    {"/identity/format_url", "Official URL for the Photon-HDF5 format."},
    {"/identity/software", "Name of the software used to create the current Photon-HDF5 file."},
    {"/identity/software_version",
     "Version of the software used to create current the Photon-HDF5 file."},
    {"/identity/creation_time", "Creation time of the current Photon-HDF5 file."},
    {"/identity/filename",
     "Original file name of the current Photon-HDF5 file (i.e. file name at creation time)."},
    {"/identity/filename_full",
     "Original file name (with full path) of the current Photon-HDF5 file (i.e. full file name "
     "at creation time)."},
    {"/provenance", "Information about the original data file."},
    {"/provenance/filename",
     "File name of the original data file before conversion to Photon-HDF5."},
    {"/provenance/filename_full",
     "File name (with full path) of the original data file before conversion to Photon-HDF5."},
    {"/provenance/modification_time", "Time of last modification of the original data file."},
};

std::string_view officialDescription(std::string_view path) {
  for (const OfficialField& field : kOfficialFields) {
    if (field.path == path) return field.description;
  }
  // Only the export's own paths are looked up: a miss is a bug here, not bad input.
  throw std::logic_error("Photon-HDF5: no official description for " + std::string(path));
}

template <typename T>
struct Types;
template <>
struct Types<std::int64_t> {
  static hid_t file() { return H5T_STD_I64LE; }
  static hid_t memory() { return H5T_NATIVE_INT64; }
};
template <>
struct Types<std::uint64_t> {
  static hid_t file() { return H5T_STD_U64LE; }
  static hid_t memory() { return H5T_NATIVE_UINT64; }
};
template <>
struct Types<std::int32_t> {
  static hid_t file() { return H5T_STD_I32LE; }
  static hid_t memory() { return H5T_NATIVE_INT32; }
};
template <>
struct Types<std::uint16_t> {
  static hid_t file() { return H5T_STD_U16LE; }
  static hid_t memory() { return H5T_NATIVE_UINT16; }
};
template <>
struct Types<std::uint8_t> {
  static hid_t file() { return H5T_STD_U8LE; }
  static hid_t memory() { return H5T_NATIVE_UINT8; }
};
template <>
struct Types<double> {
  static hid_t file() { return H5T_IEEE_F64LE; }
  static hid_t memory() { return H5T_NATIVE_DOUBLE; }
};

// ---- Export --------------------------------------------------------------------------------

// Photon-HDF5 strings are fixed-length byte strings (numpy's "S"), padded with NULs.
Handle stringType(std::size_t length) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type, std::max<std::size_t>(length, 1)), "size a string type");
  check(H5Tset_strpad(type, H5T_STR_NULLPAD), "pad a string type");
  return type;
}

std::string padded(std::string_view text) {
  std::string bytes(text);
  if (bytes.empty()) bytes.push_back('\0');  // a string type holds at least one byte
  return bytes;
}

void writeStringAttribute(hid_t object, const char* name, std::string_view text) {
  Handle type = stringType(text.size());
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   std::string("create attribute ") + name);
  check(H5Awrite(attribute, type, padded(text).data()), std::string("write attribute ") + name);
}

// PyTables, which the reference library and many readers use, reads a scalar dataset as a
// Python value (a string as bytes) only with the attributes its own writer adds; without them
// it hands out a 0-d array, on which the validator's measurement_type.read().decode() fails.
void markPythonScalar(hid_t set) {
  writeStringAttribute(set, "CLASS", "ARRAY");
  writeStringAttribute(set, "VERSION", "2.4");
  writeStringAttribute(set, "FLAVOR", "python");
}

// Creates the objects of the file by full path, each with its TITLE: the official description
// for official fields, tagflow's own words under /user.
class Output {
 public:
  explicit Output(hid_t file) : file_(file) {}

  void group(const std::string& path) { group(path, officialDescription(path)); }
  void group(const std::string& path, std::string_view title) {
    Handle group(H5Gcreate2(file_, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                 "create group " + path);
    writeStringAttribute(group, "TITLE", title);
  }

  void text(const std::string& path, std::string_view value) {
    text(path, value, officialDescription(path));
  }
  void text(const std::string& path, std::string_view value, std::string_view title) {
    Handle type = stringType(value.size());
    Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
    Handle set = create(path, type, space, H5P_DEFAULT, title);
    markPythonScalar(set);
    check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded(value).data()),
          "write " + path);
  }

  template <typename T>
  void scalar(const std::string& path, T value) {
    scalar(path, value, officialDescription(path));
  }
  template <typename T>
  void scalar(const std::string& path, T value, std::string_view title) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
    Handle set = create(path, Types<T>::file(), space, H5P_DEFAULT, title);
    markPythonScalar(set);
    check(H5Dwrite(set, Types<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value),
          "write " + path);
  }

  template <typename T>
  void array(const std::string& path, const std::vector<T>& values) {
    array(path, values, officialDescription(path));
  }
  template <typename T>
  void array(const std::string& path, const std::vector<T>& values, std::string_view title) {
    const hsize_t dims[1] = {values.size()};
    Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, "create a dataspace");
    Handle set = create(path, Types<T>::file(), space, H5P_DEFAULT, title);
    if (!values.empty()) {
      check(H5Dwrite(set, Types<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
            "write " + path);
    }
  }

  Handle create(const std::string& path, hid_t type, hid_t space, hid_t properties,
                std::string_view title) {
    Handle set(H5Dcreate2(file_, path.c_str(), type, space, H5P_DEFAULT, properties, H5P_DEFAULT),
               H5Dclose, "create dataset " + path);
    writeStringAttribute(set, "TITLE", title);
    return set;
  }

 private:
  hid_t file_;
};

// One photon array (timestamps or detectors), written in batches. Its layout is chosen at the
// first write: a stream that ended within the first batch gets a fixed-size array in chunks of
// its own length (at most kMaxChunk), a longer one an extendible array in kMaxChunk chunks;
// both shuffled (bytes of equal significance together) and deflated.
template <typename T>
class PhotonArray {
 public:
  PhotonArray(Output& output, std::string path) : output_(output), path_(std::move(path)) {
    values_.reserve(kWriteBatch);
  }

  void push(T value) { values_.push_back(value); }
  std::size_t buffered() const { return values_.size(); }

  void write(bool last) {
    if (!set_.valid()) create(last);
    if (values_.empty()) return;
    const hsize_t start[1] = {size_};
    const hsize_t count[1] = {values_.size()};
    if (growing_) {
      const hsize_t new_size[1] = {size_ + values_.size()};
      check(H5Dset_extent(set_, new_size), "extend " + path_);
    }
    Handle file_space(H5Dget_space(set_), H5Sclose, "get the dataspace of " + path_);
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
          "select in " + path_);
    Handle memory_space(H5Screate_simple(1, count, nullptr), H5Sclose, "create a dataspace");
    check(H5Dwrite(set_, Types<T>::memory(), memory_space, file_space, H5P_DEFAULT, values_.data()),
          "write " + path_);
    size_ += values_.size();
    values_.clear();
  }

 private:
  void create(bool last) {
    growing_ = !last;
    const hsize_t length = values_.size();
    const hsize_t dims[1] = {growing_ ? 0 : length};
    const hsize_t max_dims[1] = {growing_ ? H5S_UNLIMITED : length};
    Handle space(H5Screate_simple(1, dims, max_dims), H5Sclose, "create a dataspace");
    Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
    if (growing_ || length > 0) {  // an empty fixed array stays contiguous: no chunk to size
      const hsize_t chunk[1] = {growing_ ? kMaxChunk : std::min(length, kMaxChunk)};
      check(H5Pset_chunk(properties, 1, chunk), "set the chunk size of " + path_);
      check(H5Pset_shuffle(properties), "set the shuffle filter of " + path_);
      check(H5Pset_deflate(properties, kDeflateLevel), "set the deflate filter of " + path_);
      // Every element is written: no fill values to write first.
      check(H5Pset_fill_time(properties, H5D_FILL_TIME_NEVER), "set the fill time of " + path_);
    }
    set_ = output_.create(path_, Types<T>::file(), space, properties, officialDescription(path_));
  }

  Output& output_;
  std::string path_;
  std::vector<T> values_;
  Handle set_;
  bool growing_ = false;
  hsize_t size_ = 0;
};

// The channels that occur, without a cap. A small direct-mapped cache keeps the set lookup off
// the per-tag path: streams cycle through a few channels.
class ChannelSet {
 public:
  void add(channel_t channel) {
    Slot& slot = cache_[static_cast<std::uint32_t>(channel) % cache_.size()];
    if (slot.used && slot.channel == channel) return;
    seen_.insert(channel);
    slot = Slot{channel, true};
  }
  std::vector<std::int32_t> sorted() const { return {seen_.begin(), seen_.end()}; }

 private:
  struct Slot {
    channel_t channel = 0;
    bool used = false;
  };
  std::array<Slot, 256> cache_{};
  std::set<channel_t> seen_;
};

std::string timeText(std::time_t time, bool utc) {
  std::tm parts{};
  if (utc) {
    gmtime_r(&time, &parts);
  } else {
    localtime_r(&time, &parts);
  }
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts);
  return text;
}

std::uint64_t exportTo(Source& source, const std::string& temporary, const std::string& path,
                       const PhotonHdf5Export& info) {
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  // The object format of HDF5 1.8: groups keep their links in their header instead of a
  // symbol table with its B-tree and heap (about 1 KiB less per group), readable by every
  // HDF5 since 1.8 (2008), so by every Photon-HDF5 reader.
  check(H5Pset_libver_bounds(access, H5F_LIBVER_V18, H5F_LIBVER_V18), "set the file format");
  errno = 0;
  const hid_t created = H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access);
  if (created < 0) {
    throw IoError(
        fmt::format("HDF5: cannot create Photon-HDF5 file '{}' (written as '{}' first): {}", path,
                    temporary, errno != 0 ? std::strerror(errno) : hdf5Reason()));
  }
  Handle file(created, H5Fclose, "create '" + temporary + "'");
  writeStringAttribute(file, "TITLE", officialDescription("/"));
  // The root attributes the reference library writes (its `root_attributes`).
  writeStringAttribute(file, "format_name", "Photon-HDF5");
  writeStringAttribute(file, "format_version", kFormatVersion);
  writeStringAttribute(file, "format_url", kFormatUrl);

  Output out(file);
  out.group("/photon_data");
  PhotonArray<std::int64_t> timestamps(out, "/photon_data/timestamps");
  PhotonArray<std::int32_t> detectors(out, "/photon_data/detectors");

  std::vector<std::int64_t> special_times;
  std::vector<std::int32_t> special_channels;
  std::vector<std::uint8_t> special_types;
  std::vector<std::uint16_t> special_missed;
  std::vector<std::uint64_t> special_positions;
  ChannelSet seen;
  std::uint64_t position = 0;
  bool first = true;
  timestamp_t begin = 0;
  timestamp_t end = 0;
  BlockBuffer block;
  block.storage.reserve(source.maxBlockTags());
  while (source.next(block)) {
    if (first) begin = block.begin_time;
    first = false;
    end = block.end_time;
    for (const Tag& tag : block.tags) {
      if (tag.type == TagType::TimeTag) {
        timestamps.push(tag.time);
        detectors.push(tag.channel);
        seen.add(tag.channel);
      } else {
        special_times.push_back(tag.time);
        special_channels.push_back(tag.channel);
        special_types.push_back(static_cast<std::uint8_t>(tag.type));
        special_missed.push_back(tag.missed_events);
        special_positions.push_back(position);
      }
      ++position;
    }
    if (timestamps.buffered() >= kWriteBatch) {
      timestamps.write(false);
      detectors.write(false);
    }
  }
  timestamps.write(true);
  detectors.write(true);

  out.group("/photon_data/timestamps_specs");
  out.scalar("/photon_data/timestamps_specs/timestamps_unit", 1e-12);
  const std::vector<std::int32_t> ids = seen.sorted();
  // "generic": any measurement; with one spectral, polarization and split channel the spec
  // asks for no detector mapping, but the validator opens detectors_specs whenever there are
  // detectors: every pixel belongs to the one spectral channel.
  out.group("/photon_data/measurement_specs");
  out.text("/photon_data/measurement_specs/measurement_type", "generic");
  out.group("/photon_data/measurement_specs/detectors_specs");
  out.array("/photon_data/measurement_specs/detectors_specs/spectral_ch1", ids);

  out.text("/description", info.description);
  // Also as root fields, as the field list has them (the validator's require_rootformat).
  out.text("/format_name", "Photon-HDF5");
  out.text("/format_version", kFormatVersion);
  out.scalar("/acquisition_duration", static_cast<double>(end - begin) * 1e-12);

  // One spot and band, one excitation source: continuous (a time tagger knows of no laser
  // pulses, and the validator wants repetition rates for pulsed sources), not alternated.
  out.group("/setup");
  out.scalar<std::int64_t>("/setup/num_pixels", static_cast<std::int64_t>(ids.size()));
  for (const char* name : {"num_spots", "num_spectral_ch", "num_polarization_ch", "num_split_ch"}) {
    out.scalar<std::int64_t>(std::string("/setup/") + name, 1);
  }
  out.scalar<std::int64_t>("/setup/modulated_excitation", 0);
  out.scalar<std::int64_t>("/setup/lifetime", 0);
  out.array("/setup/excitation_alternated", std::vector<std::uint8_t>{0});
  out.array("/setup/excitation_cw", std::vector<std::uint8_t>{1});
  out.group("/setup/detectors");
  out.array("/setup/detectors/id", ids);

  out.group("/identity");
  out.text("/identity/format_name", "Photon-HDF5");
  out.text("/identity/format_version", kFormatVersion);
  out.text("/identity/format_url", kFormatUrl);
  out.text("/identity/software", "tagflow");
  out.text("/identity/software_version", tagflowVersion());
  out.text("/identity/creation_time", timeText(std::time(nullptr), true) + " UTC");
  out.text("/identity/filename", std::filesystem::path(path).filename().string());
  out.text("/identity/filename_full", std::filesystem::absolute(path).string());
  if (!info.original_file.empty()) {
    out.group("/provenance");
    out.text("/provenance/filename", std::filesystem::path(info.original_file).filename().string());
    out.text("/provenance/filename_full", std::filesystem::absolute(info.original_file).string());
    struct stat status {};
    if (::stat(info.original_file.c_str(), &status) == 0) {
      out.text("/provenance/modification_time", timeText(status.st_mtime, false));
    }
  }

  out.group("/user", "User-defined fields.");
  out.group("/user/tagflow",
            "What tagflow's stream holds beyond photons, for a lossless import by tagflow.");
  out.scalar<std::int64_t>("/user/tagflow/stream_begin_ps", begin, "Start of the stream, ps.");
  out.scalar<std::int64_t>("/user/tagflow/stream_end_ps", end, "End of the stream, ps.");
  out.text("/user/tagflow/configuration", info.configuration,
           "Configuration of the source the stream came from.");
  out.array("/user/tagflow/special_times", special_times,
            "Times (ps) of the overflow, missed-events and error tags.");
  out.array("/user/tagflow/special_channels", special_channels, "Their channels.");
  out.array("/user/tagflow/special_types", special_types,
            "Their types: 1 error, 2 overflow begin, 3 overflow end, 4 missed events.");
  out.array("/user/tagflow/special_missed_events", special_missed, "Their missed-event counts.");
  out.array("/user/tagflow/special_positions", special_positions,
            "Their indices in the whole stream (photons and these tags).");
  // Flushing writes what HDF5 still buffers: a full disk shows here. (The close alone would
  // not tell: with the datasets still open it only marks the file to close after them.)
  try {
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush '" + temporary + "'");
    file.close("close '" + temporary + "'");
  } catch (const IoError&) {
    throw IoError(
        fmt::format("HDF5: cannot write Photon-HDF5 file '{}' (written as '{}' first): {}", path,
                    temporary, hdf5Reason()));
  }
  return position;
}

// ---- Import --------------------------------------------------------------------------------

bool exists(hid_t parent, const char* path) {
  return H5Lexists(parent, path, H5P_DEFAULT) > 0;
}

hsize_t lengthOf(hid_t set, const std::string& what) {
  Handle space(H5Dget_space(set), H5Sclose, "get the dataspace of " + what);
  if (H5Sget_simple_extent_ndims(space) != 1) {
    throw DataError(what + " is not a one-dimensional array");
  }
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  return dims[0];
}

template <typename T>
std::vector<T> readArray(hid_t file, const char* path) {
  Handle set(H5Dopen2(file, path, H5P_DEFAULT), H5Dclose, std::string("open ") + path);
  std::vector<T> values(lengthOf(set, path));
  if (!values.empty()) {
    check(H5Dread(set, Types<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          std::string("read ") + path);
  }
  return values;
}

// A scalar field, or an array of one element; anything larger would overrun the value.
template <typename T>
T readScalar(hid_t file, const char* path) {
  Handle set(H5Dopen2(file, path, H5P_DEFAULT), H5Dclose, std::string("open ") + path);
  {
    Handle space(H5Dget_space(set), H5Sclose, std::string("get the dataspace of ") + path);
    const hssize_t elements = H5Sget_simple_extent_npoints(space);
    if (elements != 1) {
      throw DataError(fmt::format("{} holds {} values (valid: one, a scalar)", path, elements));
    }
  }
  T value{};
  check(H5Dread(set, Types<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value),
        std::string("read ") + path);
  return value;
}

// HDF5 looks for filter plugins in HDF5_PLUGIN_PATH or, when that is not set, in the folder
// built into the library (Debian's: /usr/lib/<arch>/hdf5/serial/plugins, where its
// hdf5-filter-plugin packages install). Setting the variable hides that folder, so the known
// plugin folders that exist are appended: a user's own plugins still come first.
constexpr const char* kPluginFolders[] = {
    "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins",
    "/usr/lib/aarch64-linux-gnu/hdf5/serial/plugins",
    "/usr/local/hdf5/lib/plugin",  // HDF5's own default
};

std::vector<std::string> pluginFolders() {
  std::vector<std::string> folders;
  unsigned count = 0;
  if (H5PLsize(&count) < 0) return folders;
  for (unsigned i = 0; i < count; ++i) {
    char folder[4096] = "";
    if (H5PLget(i, folder, sizeof folder) > 0) folders.emplace_back(folder);
  }
  return folders;
}

void addPluginFolders() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::vector<std::string> listed = pluginFolders();
    for (const char* folder : kPluginFolders) {
      std::error_code ignored;
      if (!std::filesystem::is_directory(folder, ignored)) continue;
      if (std::find(listed.begin(), listed.end(), folder) != listed.end()) continue;
      H5PLappend(folder);  // a failure only means fewer places to look
    }
  });
}

// Names and Debian packages of the registered filters found in Photon-HDF5 files in the wild
// (HDF Group's list of registered filter ids).
struct KnownFilter {
  H5Z_filter_t id;
  const char* name;
  const char* package;
};
constexpr KnownFilter kKnownFilters[] = {
    {H5Z_FILTER_DEFLATE, "deflate", "libhdf5 built with zlib"},
    {H5Z_FILTER_SZIP, "szip", "libhdf5 built with szip"},
    {307, "bzip2", "hdf5-filter-plugin"},
    {32000, "lzf", "hdf5-plugin-lzf"},
    {32001, "blosc", "hdf5-filter-plugin-blosc-serial"},
    {32004, "lz4", "hdf5-filter-plugin"},
    {32008, "bitshuffle", "hdf5-filter-plugin"},
    {32013, "zfp", "hdf5-filter-plugin-zfp-serial"},
    {32015, "zstd", ""},
    {32026, "blosc2", ""},
};

// Refuses, before anything is read, an array compressed with a filter HDF5 cannot apply here:
// the read would fail later with a message that names neither the filter nor the remedy.
void requireFilters(hid_t set, const std::string& array, const std::string& file_path) {
  Handle properties(H5Dget_create_plist(set), H5Pclose, "get the properties of " + array);
  const int count = H5Pget_nfilters(properties);
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    char stored_name[256] = "";
    const H5Z_filter_t id = H5Pget_filter2(properties, static_cast<unsigned>(i), &flags, &values,
                                           nullptr, sizeof stored_name, stored_name, nullptr);
    if (id < 0)
      throw IoError("HDF5: cannot read the filters of " + array + " in '" + file_path + "'");
    unsigned config = 0;
    if (H5Zfilter_avail(id) > 0 && H5Zget_filter_info(id, &config) >= 0 &&
        (config & H5Z_FILTER_CONFIG_DECODE_ENABLED) != 0) {
      continue;
    }
    std::string name = stored_name;
    std::string package;
    for (const KnownFilter& known : kKnownFilters) {
      if (known.id != id) continue;
      if (name.empty()) name = known.name;
      package = known.package;
    }
    if (name.empty()) name = "unnamed";
    const std::vector<std::string> folders = pluginFolders();
    throw DataError(fmt::format(
        "'{}': {} is compressed with HDF5 filter {} ({}), which is not available: no plugin for "
        "it in {} ({}; HDF5_PLUGIN_PATH names more folders, separated by ':')",
        file_path, array, id, name,
        folders.empty() ? std::string("any plugin folder")
                        : "'" + fmt::format("{}", fmt::join(folders, "', '")) + "'",
        package.empty() ? std::string("install the filter's HDF5 plugin")
                        : "Debian's package: " + package));
  }
}

// A unit in picoseconds. Within 1e-6 ps of a whole number it is that number (files store 4 ps
// as 4.000000000000001e-12 s); otherwise times are computed exactly and rounded, as for PTU.
struct Scale {
  long double exact = 1;
  std::int64_t whole = 1;  // 0 when not whole
};

Scale scaleOf(double unit_s, const char* what, const std::string& file_path) {
  if (!(unit_s > 0) || !std::isfinite(unit_s) || unit_s > 1e3) {
    throw DataError(fmt::format("'{}': {} {} s is invalid (valid: > 0 and <= 1000 s)", file_path,
                                what, unit_s));
  }
  Scale scale;
  scale.exact = static_cast<long double>(unit_s) * 1e12L;
  const long double nearest = std::round(scale.exact);
  scale.whole = std::fabs(scale.exact - nearest) < 1e-6L && nearest >= 1
                    ? static_cast<std::int64_t>(nearest)
                    : 0;
  if (scale.whole != 0) scale.exact = nearest;
  return scale;
}

}  // namespace

std::uint64_t writePhotonHdf5(Source& source, const std::string& path,
                              const PhotonHdf5Export& info) {
  // Errors are reported through exceptions; HDF5's own error printing would only duplicate.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  return replaceWhole(path, "the Photon-HDF5 export", [&](const std::string& temporary) {
    return exportTo(source, temporary, path, info);
  });
}

struct PhotonHdf5Source::File {
  Handle file;
  Handle timestamps;
  Handle detectors;
  Handle nanotimes;
  hsize_t photons = 0;
  hsize_t photon_position = 0;
  // T2: timestamps * unit_ps.
  std::int64_t unit_ps = 1;
  // T3: sync periods and TCSPC bins; tags not yet final (a later photon of an earlier period
  // may come before them), in time order.
  bool t3 = false;
  Scale period;
  Scale bin;
  std::vector<Tag> pending;
  bool any_period = false;
  std::int64_t last_period = 0;
  // Tagflow's own special tags (from /user/tagflow) and their positions in the stream.
  std::vector<Tag> specials;
  std::vector<std::uint64_t> positions;
  std::size_t special_position = 0;
  std::uint64_t emitted = 0;
  bool has_range = false;
  timestamp_t stream_begin = 0;
  timestamp_t stream_end = 0;

  timestamp_t syncTime(std::int64_t period_index) const {
    if (period.whole != 0) return period_index * period.whole;
    return static_cast<timestamp_t>(
        std::llround(static_cast<long double>(period_index) * period.exact));
  }
  timestamp_t photonTime(std::int64_t period_index, std::int64_t nanotime) const {
    if (period.whole != 0 && bin.whole != 0)
      return period_index * period.whole + nanotime * bin.whole;
    return static_cast<timestamp_t>(
        std::llround(static_cast<long double>(period_index) * period.exact +
                     static_cast<long double>(nanotime) * bin.exact));
  }
};

PhotonHdf5Source::PhotonHdf5Source(std::string path, std::size_t block_size)
    : path_(std::move(path)), block_size_(block_size), file_(std::make_unique<File>()) {
  if (block_size_ < 1 || block_size_ > (std::size_t{1} << 26)) {
    throw InvalidArgument("Photon-HDF5 source: block_size " + std::to_string(block_size_) +
                          " is invalid (valid: 1..67108864)");
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  addPluginFolders();
  // Negative: the file could not be read at all (missing, unreadable), an I/O matter.
  const htri_t is_hdf5 = H5Fis_hdf5(path_.c_str());
  if (is_hdf5 < 0) throw IoError("cannot open Photon-HDF5 file '" + path_ + "'");
  if (is_hdf5 == 0) throw DataError("'" + path_ + "' is not an HDF5 file, so not Photon-HDF5");
  File& f = *file_;
  f.file =
      Handle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open '" + path_ + "'");
  if (!exists(f.file, "photon_data") || !exists(f.file, "photon_data/timestamps") ||
      !exists(f.file, "photon_data/timestamps_specs") ||
      !exists(f.file, "photon_data/timestamps_specs/timestamps_unit")) {
    throw DataError("'" + path_ +
                    "' is not a Photon-HDF5 file with one photon_data group "
                    "(photon_data/timestamps and timestamps_specs/timestamps_unit are needed)");
  }
  f.t3 = exists(f.file, "photon_data/nanotimes");
  const double unit = readScalar<double>(f.file, "photon_data/timestamps_specs/timestamps_unit");
  if (f.t3) {
    f.period = scaleOf(unit, "photon_data/timestamps_specs/timestamps_unit", path_);
    if (!exists(f.file, "photon_data/nanotimes_specs") ||
        !exists(f.file, "photon_data/nanotimes_specs/tcspc_unit")) {
      throw DataError("'" + path_ +
                      "': photon_data/nanotimes needs photon_data/nanotimes_specs/tcspc_unit "
                      "(the TCSPC bin in s), which is missing");
    }
    f.bin = scaleOf(readScalar<double>(f.file, "photon_data/nanotimes_specs/tcspc_unit"),
                    "photon_data/nanotimes_specs/tcspc_unit", path_);
  } else {
    const Scale scale = scaleOf(unit, "photon_data/timestamps_specs/timestamps_unit", path_);
    if (scale.whole == 0) {
      // Rounding each photon to a picosecond would change the intervals between photons.
      throw DataError(fmt::format(
          "'{}': photon_data/timestamps_specs/timestamps_unit {} s is not a whole number of "
          "picoseconds (valid without nanotimes: 1e-12 s and its whole multiples)",
          path_, unit));
    }
    f.unit_ps = scale.whole;
  }

  // A chunk cache of 16 MiB keeps a compressed chunk decoded between two reads of it.
  Handle access(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "create dataset access properties");
  check(H5Pset_chunk_cache(access, 521, std::size_t{16} << 20, 0.75), "set a chunk cache");
  const auto open = [&](const char* name) {
    Handle set(H5Dopen2(f.file, name, access), H5Dclose,
               std::string("open ") + name + " in '" + path_ + "'");
    requireFilters(set, name, path_);
    return set;
  };
  f.timestamps = open("photon_data/timestamps");
  f.photons = lengthOf(f.timestamps, "photon_data/timestamps");
  if (exists(f.file, "photon_data/detectors")) {
    f.detectors = open("photon_data/detectors");
    if (lengthOf(f.detectors, "photon_data/detectors") != f.photons) {
      throw DataError("'" + path_ + "': photon_data/detectors and timestamps differ in length");
    }
  }
  if (f.t3) {
    f.nanotimes = open("photon_data/nanotimes");
    if (lengthOf(f.nanotimes, "photon_data/nanotimes") != f.photons) {
      throw DataError("'" + path_ + "': photon_data/nanotimes and timestamps differ in length");
    }
  }
  if (exists(f.file, "user") && exists(f.file, "user/tagflow")) {
    f.has_range = true;
    f.stream_begin = readScalar<std::int64_t>(f.file, "user/tagflow/stream_begin_ps");
    f.stream_end = readScalar<std::int64_t>(f.file, "user/tagflow/stream_end_ps");
    const auto times = readArray<std::int64_t>(f.file, "user/tagflow/special_times");
    const auto channels = readArray<std::int32_t>(f.file, "user/tagflow/special_channels");
    const auto types = readArray<std::uint8_t>(f.file, "user/tagflow/special_types");
    const auto missed = readArray<std::uint16_t>(f.file, "user/tagflow/special_missed_events");
    f.positions = readArray<std::uint64_t>(f.file, "user/tagflow/special_positions");
    if (channels.size() != times.size() || types.size() != times.size() ||
        missed.size() != times.size() || f.positions.size() != times.size()) {
      throw DataError("'" + path_ + "': the user/tagflow/special_* arrays differ in length");
    }
    if (f.t3 && !times.empty()) {
      // Their positions count photons only; the sync tags of a T3 import would shift them.
      throw DataError("'" + path_ +
                      "': user/tagflow special tags in a file with nanotimes (tagflow never "
                      "writes both)");
    }
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (types[i] < 1 || types[i] > kMaxTagType ||
          (i > 0 && f.positions[i] <= f.positions[i - 1]) || f.positions[i] > f.photons + i) {
        throw DataError("'" + path_ + "': special tag " + std::to_string(i) +
                        " has an invalid type or position");
      }
      f.specials.push_back(
          Tag{static_cast<TagType>(types[i]), 0, missed[i], channels[i], times[i]});
    }
  }
  lookahead_.reserve(2 * block_size_ + 2 * kReadPhotons);
}

PhotonHdf5Source::~PhotonHdf5Source() = default;

std::string PhotonHdf5Source::describe() const {
  return "photon-hdf5 path=" + path_ + " photons=" + std::to_string(file_->photons) +
         (file_->t3 ? " nanotimes=yes" : "") + " block_size=" + std::to_string(block_size_);
}

namespace {

// Reads `count` elements from `start` of a one-dimensional array, converted to T.
template <typename T>
void readSlice(hid_t set, hsize_t start, hsize_t count, std::vector<T>& out, const char* array,
               const std::string& file_path) {
  // Here too: the stream is read on a graph thread, and a thread-safe HDF5 keeps the setting
  // per thread (else a damaged chunk prints HDF5's whole error stack).
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  out.resize(count);
  if (count == 0) return;
  Handle file_space(H5Dget_space(set), H5Sclose, "get the dataspace of " + std::string(array));
  const hsize_t first[1] = {start};
  const hsize_t length[1] = {count};
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, first, nullptr, length, nullptr),
        std::string("select in ") + array);
  Handle memory_space(H5Screate_simple(1, length, nullptr), H5Sclose, "create a dataspace");
  if (H5Dread(set, Types<T>::memory(), memory_space, file_space, H5P_DEFAULT, out.data()) < 0) {
    throw IoError(fmt::format("HDF5: cannot read {} of '{}' (elements {} to {}): {}", array,
                              file_path, start, start + count - 1, hdf5Reason()));
  }
}

}  // namespace

bool PhotonHdf5Source::exhausted() const {
  const File& f = *file_;
  return f.photon_position == f.photons && f.special_position == f.specials.size() &&
         f.pending.empty();
}

void PhotonHdf5Source::refill() {
  lookahead_.erase(lookahead_.begin(), lookahead_.begin() + static_cast<std::ptrdiff_t>(position_));
  position_ = 0;
  if (file_->t3) {
    refillT3();
  } else {
    refillT2();
  }
}

void PhotonHdf5Source::refillT2() {
  File& f = *file_;
  const hsize_t take = std::min<hsize_t>(kReadPhotons, f.photons - f.photon_position);
  std::vector<std::int64_t> times;
  std::vector<std::int32_t> channels;
  readSlice(f.timestamps, f.photon_position, take, times, "photon_data/timestamps", path_);
  if (f.detectors.valid()) {
    readSlice(f.detectors, f.photon_position, take, channels, "photon_data/detectors", path_);
  } else {
    channels.assign(take, 0);
  }
  // HDF5 converts a uint64 timestamp of 2^63 or more to INT64_MAX, which the limit itself is
  // with a unit of 1 ps: the limit is refused too (and no time + 1 can overflow).
  const std::int64_t limit = std::numeric_limits<timestamp_t>::max() / f.unit_ps;
  const std::size_t before = lookahead_.size();
  hsize_t photon = 0;
  // Special tags sit at their recorded positions in the merged stream.
  while (photon < take ||
         (f.photon_position + take == f.photons && f.special_position < f.specials.size())) {
    if (f.special_position < f.specials.size() && f.positions[f.special_position] == f.emitted) {
      lookahead_.push_back(f.specials[f.special_position++]);
    } else if (photon < take) {
      if (times[photon] >= limit || times[photon] <= -limit) {
        throw DataError(fmt::format(
            "'{}': timestamp {}{} of photon {} is out of range (valid: |timestamp| < {} with a "
            "unit of {} ps)",
            path_, times[photon],
            times[photon] == std::numeric_limits<std::int64_t>::max() ? " or more" : "",
            f.photon_position + photon, limit, f.unit_ps));
      }
      lookahead_.push_back(makeTimeTag(channels[photon], times[photon] * f.unit_ps));
      ++photon;
    } else {
      throw DataError("'" + path_ + "': special tag " + std::to_string(f.special_position) +
                      " lies beyond the end of the stream");
    }
    ++f.emitted;
  }
  f.photon_position += take;
  for (std::size_t i = before; i < lookahead_.size(); ++i) {
    const std::uint64_t index = f.emitted - (lookahead_.size() - i);
    const timestamp_t previous = i > 0 ? lookahead_[i - 1].time : last_time_;
    if (index > 0 && lookahead_[i].time < previous) {
      throw DataError("'" + path_ + "': tag " + std::to_string(index) + " at " +
                      std::to_string(lookahead_[i].time) +
                      " ps is earlier than the tag before it (timestamps must be sorted)");
    }
  }
  if (!lookahead_.empty()) last_time_ = lookahead_.back().time;
}

void PhotonHdf5Source::refillT3() {
  File& f = *file_;
  const hsize_t take = std::min<hsize_t>(kReadPhotons, f.photons - f.photon_position);
  std::vector<std::int64_t> periods;
  std::vector<std::int32_t> detectors;
  std::vector<std::int64_t> nanotimes;
  readSlice(f.timestamps, f.photon_position, take, periods, "photon_data/timestamps", path_);
  readSlice(f.nanotimes, f.photon_position, take, nanotimes, "photon_data/nanotimes", path_);
  if (f.detectors.valid()) {
    readSlice(f.detectors, f.photon_position, take, detectors, "photon_data/detectors", path_);
  } else {
    detectors.assign(take, 0);
  }
  // Times up to here stay within int64 also with the largest 16-bit nanotime and rounding.
  const long double limit = 9.2e18L;
  const std::size_t old_size = f.pending.size();
  for (hsize_t i = 0; i < take; ++i) {
    const std::uint64_t photon = f.photon_position + i;
    const std::int64_t period = periods[i];
    if (f.any_period && period < f.last_period) {
      throw DataError(fmt::format(
          "'{}': photon {} has timestamp {}, earlier than {} before it (timestamps must be "
          "sorted)",
          path_, photon, period, f.last_period));
    }
    if (period < 0 || nanotimes[i] < 0 || nanotimes[i] > 0xFFFFFFFFLL ||
        static_cast<long double>(period) * f.period.exact +
                static_cast<long double>(nanotimes[i]) * f.bin.exact >
            limit) {
      throw DataError(fmt::format(
          "'{}': photon {} has timestamp {} and nanotime {}, out of range (valid: timestamps "
          ">= 0, nanotimes 0..4294967295, times below 9.2e18 ps)",
          path_, photon, period, nanotimes[i]));
    }
    if (detectors[i] == kPhotonHdf5SyncChannel) {
      throw DataError(fmt::format(
          "'{}': photon {} is on detector {}, which would merge with the sync channel {} of a "
          "T3 import (valid: any other detector id)",
          path_, photon, detectors[i], kPhotonHdf5SyncChannel));
    }
    if (!f.any_period || period != f.last_period) {
      f.pending.push_back(makeTimeTag(kPhotonHdf5SyncChannel, f.syncTime(period)));
      f.any_period = true;
      f.last_period = period;
    }
    f.pending.push_back(makeTimeTag(detectors[i], f.photonTime(period, nanotimes[i])));
  }
  f.photon_position += take;
  // Time order, file order among equal times (sync tags before the photons of their period),
  // as the PTU import does.
  const auto byTime = [](const Tag& a, const Tag& b) { return a.time < b.time; };
  const auto fresh = f.pending.begin() + static_cast<std::ptrdiff_t>(old_size);
  std::stable_sort(fresh, f.pending.end(), byTime);
  std::inplace_merge(f.pending.begin(), fresh, f.pending.end(), byTime);
  // No photon still to be read lies before the sync of the last period read.
  const timestamp_t bound = f.photon_position < f.photons ? f.syncTime(f.last_period)
                                                          : std::numeric_limits<timestamp_t>::max();
  const auto final_end =
      f.photon_position < f.photons
          ? std::lower_bound(f.pending.begin(), f.pending.end(), bound,
                             [](const Tag& tag, timestamp_t time) { return tag.time < time; })
          : f.pending.end();
  lookahead_.insert(lookahead_.end(), f.pending.begin(), final_end);
  f.pending.erase(f.pending.begin(), final_end);
}

bool PhotonHdf5Source::next(BlockBuffer& out) {
  File& f = *file_;
  while (!exhausted() && lookahead_.size() - position_ <= block_size_) refill();
  const std::span<const Tag> rest = std::span<const Tag>(lookahead_).subspan(position_);
  if (rest.empty()) {
    // A stream without tags still spans its recorded time range once.
    if (started_ || !f.has_range || f.stream_end <= f.stream_begin) return false;
    out.storage.clear();
    out.publishStorage();
    out.begin_time = f.stream_begin;
    out.end_time = f.stream_end;
    started_ = true;
    return true;
  }
  if (!started_) {
    next_begin_ = f.has_range ? std::min(f.stream_begin, rest.front().time) : rest.front().time;
    started_ = true;
  }
  const std::size_t count = blockSplitPoint(rest, block_size_);
  out.storage.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(count));
  out.publishStorage();
  out.begin_time = next_begin_;
  const timestamp_t last_end =
      f.has_range ? std::max(f.stream_end, rest[count - 1].time + 1) : rest[count - 1].time + 1;
  out.end_time = count < rest.size() ? rest[count].time : last_end;
  position_ += count;
  next_begin_ = out.end_time;
  return true;
}

}  // namespace tagflow
