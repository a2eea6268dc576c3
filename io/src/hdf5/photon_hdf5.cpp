#include "tagflow/io/hdf5/photon_hdf5.hpp"

#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <set>
#include <utility>

#include "hdf5/handle.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"

namespace tagflow {

namespace {

constexpr hsize_t kChunk = 1 << 16;
constexpr const char* kFormatVersion = "0.5";

using hdf5::check;
using hdf5::Handle;

Handle group(hid_t parent, const char* name) {
  return Handle(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                std::string("create group ") + name);
}

// Photon-HDF5 strings are fixed-length byte strings.
Handle stringType(const std::string& text) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type, std::max<std::size_t>(text.size(), 1)), "size a string type");
  return type;
}

void writeString(hid_t parent, const char* name, const std::string& text) {
  Handle type = stringType(text);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle set(H5Dcreate2(parent, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
             std::string("create dataset ") + name);
  const std::string padded = text.empty() ? std::string(1, '\0') : text;
  check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()),
        std::string("write dataset ") + name);
}

void writeStringAttribute(hid_t object, const char* name, const std::string& text) {
  Handle type = stringType(text);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   std::string("create attribute ") + name);
  check(H5Awrite(attribute, type, text.data()), std::string("write attribute ") + name);
}

template <typename T>
void writeScalar(hid_t parent, const char* name, hid_t file_type, hid_t memory_type, T value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle set(H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose, std::string("create dataset ") + name);
  check(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value),
        std::string("write dataset ") + name);
}

template <typename T>
void writeArray(hid_t parent, const char* name, hid_t file_type, hid_t memory_type,
                const std::vector<T>& values) {
  const hsize_t dims[1] = {values.size()};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, "create a dataspace");
  Handle set(H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose, std::string("create dataset ") + name);
  if (!values.empty()) {
    check(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          std::string("write dataset ") + name);
  }
}

// A one-dimensional dataset that grows by appending, chunked and unlimited.
class GrowingArray {
 public:
  GrowingArray(hid_t parent, const char* name, hid_t file_type, hid_t memory_type)
      : name_(name), memory_type_(memory_type) {
    const hsize_t dims[1] = {0};
    const hsize_t max_dims[1] = {H5S_UNLIMITED};
    Handle space(H5Screate_simple(1, dims, max_dims), H5Sclose, "create a dataspace");
    Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
    const hsize_t chunk[1] = {kChunk};
    check(H5Pset_chunk(properties, 1, chunk), "set a chunk size");
    set_ = Handle(H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, properties, H5P_DEFAULT),
                  H5Dclose, "create dataset " + name_);
  }

  template <typename T>
  void append(const std::vector<T>& values) {
    if (values.empty()) return;
    const hsize_t new_size[1] = {size_ + values.size()};
    check(H5Dset_extent(set_, new_size), "extend dataset " + name_);
    Handle file_space(H5Dget_space(set_), H5Sclose, "get the dataspace of " + name_);
    const hsize_t start[1] = {size_};
    const hsize_t count[1] = {values.size()};
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
          "select in " + name_);
    Handle memory_space(H5Screate_simple(1, count, nullptr), H5Sclose, "create a dataspace");
    check(H5Dwrite(set_, memory_type_, memory_space, file_space, H5P_DEFAULT, values.data()),
          "write dataset " + name_);
    size_ += values.size();
  }

 private:
  std::string name_;
  hid_t memory_type_;
  Handle set_;
  hsize_t size_ = 0;
};

std::string nowText() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &utc);
  return text;
}

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
std::vector<T> readArray(hid_t file, const char* path, hid_t memory_type) {
  Handle set(H5Dopen2(file, path, H5P_DEFAULT), H5Dclose, std::string("open ") + path);
  std::vector<T> values(lengthOf(set, path));
  if (!values.empty()) {
    check(H5Dread(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          std::string("read ") + path);
  }
  return values;
}

template <typename T>
T readScalar(hid_t file, const char* path, hid_t memory_type) {
  Handle set(H5Dopen2(file, path, H5P_DEFAULT), H5Dclose, std::string("open ") + path);
  T value{};
  check(H5Dread(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value),
        std::string("read ") + path);
  return value;
}

}  // namespace

std::uint64_t writePhotonHdf5(Source& source, const std::string& path,
                              const PhotonHdf5Export& info) {
  // Errors are reported through exceptions; HDF5's own error printing would only duplicate.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
              "create Photon-HDF5 file '" + path + "'");
  writeStringAttribute(file, "format_name", "Photon-HDF5");
  writeStringAttribute(file, "format_version", kFormatVersion);

  Handle photon_data = group(file, "photon_data");
  GrowingArray timestamps(photon_data, "timestamps", H5T_STD_I64LE, H5T_NATIVE_INT64);
  GrowingArray detectors(photon_data, "detectors", H5T_STD_I32LE, H5T_NATIVE_INT32);
  {
    Handle specs = group(photon_data, "timestamps_specs");
    writeScalar(specs, "timestamps_unit", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1e-12);
  }

  std::vector<std::int64_t> times;
  std::vector<std::int32_t> channels;
  std::vector<std::int64_t> special_times;
  std::vector<std::int32_t> special_channels;
  std::vector<std::uint8_t> special_types;
  std::vector<std::uint16_t> special_missed;
  std::vector<std::uint64_t> special_positions;
  std::set<channel_t> seen;
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
        times.push_back(tag.time);
        channels.push_back(tag.channel);
        if (seen.size() < 4096) seen.insert(tag.channel);
      } else {
        special_times.push_back(tag.time);
        special_channels.push_back(tag.channel);
        special_types.push_back(static_cast<std::uint8_t>(tag.type));
        special_missed.push_back(tag.missed_events);
        special_positions.push_back(position);
      }
      ++position;
    }
    if (times.size() >= kChunk * 16) {
      timestamps.append(times);
      detectors.append(channels);
      times.clear();
      channels.clear();
    }
  }
  timestamps.append(times);
  detectors.append(channels);

  writeString(file, "description", info.description);
  writeScalar(file, "acquisition_duration", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
              static_cast<double>(end - begin) * 1e-12);
  {
    Handle setup = group(file, "setup");
    writeScalar<std::int64_t>(setup, "num_pixels", H5T_STD_I64LE, H5T_NATIVE_INT64,
                              static_cast<std::int64_t>(seen.size()));
    for (const char* name :
         {"num_spots", "num_spectral_ch", "num_polarization_ch", "num_split_ch"}) {
      writeScalar<std::int64_t>(setup, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1);
    }
    writeScalar<std::int64_t>(setup, "modulated_excitation", H5T_STD_I64LE, H5T_NATIVE_INT64, 0);
    writeScalar<std::int64_t>(setup, "lifetime", H5T_STD_I64LE, H5T_NATIVE_INT64, 0);
    writeArray(setup, "excitation_alternated", H5T_STD_I64LE, H5T_NATIVE_INT64,
               std::vector<std::int64_t>{0});
    Handle detector_group = group(setup, "detectors");
    writeArray(detector_group, "id", H5T_STD_I32LE, H5T_NATIVE_INT32,
               std::vector<std::int32_t>(seen.begin(), seen.end()));
  }
  {
    Handle identity = group(file, "identity");
    writeString(identity, "format_name", "Photon-HDF5");
    writeString(identity, "format_version", kFormatVersion);
    writeString(identity, "format_url", "http://photon-hdf5.readthedocs.org/");
    writeString(identity, "software", "tagflow");
    writeString(identity, "software_version", tagflowVersion());
    writeString(identity, "creation_time", nowText());
    writeString(identity, "filename", std::filesystem::path(path).filename().string());
    writeString(identity, "filename_full", std::filesystem::absolute(path).string());
  }
  if (!info.original_file.empty()) {
    Handle provenance = group(file, "provenance");
    writeString(provenance, "filename",
                std::filesystem::path(info.original_file).filename().string());
    writeString(provenance, "filename_full",
                std::filesystem::absolute(info.original_file).string());
    writeString(provenance, "software", "tagflow");
  }
  {
    Handle user = group(file, "user");
    Handle own = group(user, "tagflow");
    writeScalar<std::int64_t>(own, "stream_begin_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, begin);
    writeScalar<std::int64_t>(own, "stream_end_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, end);
    writeString(own, "configuration", info.configuration);
    writeArray(own, "special_times", H5T_STD_I64LE, H5T_NATIVE_INT64, special_times);
    writeArray(own, "special_channels", H5T_STD_I32LE, H5T_NATIVE_INT32, special_channels);
    writeArray(own, "special_types", H5T_STD_U8LE, H5T_NATIVE_UINT8, special_types);
    writeArray(own, "special_missed_events", H5T_STD_U16LE, H5T_NATIVE_UINT16, special_missed);
    writeArray(own, "special_positions", H5T_STD_U64LE, H5T_NATIVE_UINT64, special_positions);
  }
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) throw IoError("HDF5: cannot write '" + path + "'");
  return position;
}

struct PhotonHdf5Source::File {
  Handle file;
  Handle timestamps;
  Handle detectors;
  hsize_t photons = 0;
  hsize_t photon_position = 0;
  std::int64_t unit_ps = 1;
  std::vector<Tag> specials;
  std::vector<std::uint64_t> positions;
  std::size_t special_position = 0;
  std::uint64_t emitted = 0;
  bool has_range = false;
  timestamp_t stream_begin = 0;
  timestamp_t stream_end = 0;
};

PhotonHdf5Source::PhotonHdf5Source(std::string path, std::size_t block_size)
    : path_(std::move(path)), block_size_(block_size), file_(std::make_unique<File>()) {
  if (block_size_ < 1 || block_size_ > (std::size_t{1} << 26)) {
    throw InvalidArgument("Photon-HDF5 source: block_size " + std::to_string(block_size_) +
                          " is invalid (valid: 1..67108864)");
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (H5Fis_hdf5(path_.c_str()) <= 0) {
    throw DataError("'" + path_ + "' is not an HDF5 file, so not Photon-HDF5");
  }
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
  const double unit =
      readScalar<double>(f.file, "photon_data/timestamps_specs/timestamps_unit", H5T_NATIVE_DOUBLE);
  f.unit_ps = std::llround(unit * 1e12);
  if (f.unit_ps < 1 || std::abs(static_cast<double>(f.unit_ps) * 1e-12 - unit) > 1e-6 * unit) {
    throw DataError("'" + path_ + "': timestamps_unit " + std::to_string(unit) +
                    " s is not a whole number of picoseconds (valid: 1e-12 s and its multiples)");
  }
  f.timestamps = Handle(H5Dopen2(f.file, "photon_data/timestamps", H5P_DEFAULT), H5Dclose,
                        "open photon_data/timestamps in '" + path_ + "'");
  f.photons = lengthOf(f.timestamps, "photon_data/timestamps");
  if (exists(f.file, "photon_data/detectors")) {
    f.detectors = Handle(H5Dopen2(f.file, "photon_data/detectors", H5P_DEFAULT), H5Dclose,
                         "open photon_data/detectors in '" + path_ + "'");
    if (lengthOf(f.detectors, "photon_data/detectors") != f.photons) {
      throw DataError("'" + path_ + "': photon_data/detectors and timestamps differ in length");
    }
  }
  if (exists(f.file, "user") && exists(f.file, "user/tagflow")) {
    f.has_range = true;
    f.stream_begin =
        readScalar<std::int64_t>(f.file, "user/tagflow/stream_begin_ps", H5T_NATIVE_INT64);
    f.stream_end = readScalar<std::int64_t>(f.file, "user/tagflow/stream_end_ps", H5T_NATIVE_INT64);
    const auto times =
        readArray<std::int64_t>(f.file, "user/tagflow/special_times", H5T_NATIVE_INT64);
    const auto channels =
        readArray<std::int32_t>(f.file, "user/tagflow/special_channels", H5T_NATIVE_INT32);
    const auto types =
        readArray<std::uint8_t>(f.file, "user/tagflow/special_types", H5T_NATIVE_UINT8);
    const auto missed =
        readArray<std::uint16_t>(f.file, "user/tagflow/special_missed_events", H5T_NATIVE_UINT16);
    f.positions =
        readArray<std::uint64_t>(f.file, "user/tagflow/special_positions", H5T_NATIVE_UINT64);
    if (channels.size() != times.size() || types.size() != times.size() ||
        missed.size() != times.size() || f.positions.size() != times.size()) {
      throw DataError("'" + path_ + "': the user/tagflow/special_* arrays differ in length");
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
  lookahead_.reserve(2 * block_size_ + kChunk);
}

PhotonHdf5Source::~PhotonHdf5Source() = default;

std::string PhotonHdf5Source::describe() const {
  return "photon-hdf5 path=" + path_ + " photons=" + std::to_string(file_->photons) +
         " block_size=" + std::to_string(block_size_);
}

bool PhotonHdf5Source::refill() {
  File& f = *file_;
  lookahead_.erase(lookahead_.begin(), lookahead_.begin() + static_cast<std::ptrdiff_t>(position_));
  position_ = 0;
  const hsize_t take = std::min<hsize_t>(kChunk, f.photons - f.photon_position);
  std::vector<std::int64_t> times(take);
  std::vector<std::int32_t> channels(take, 0);
  if (take > 0) {
    Handle file_space(H5Dget_space(f.timestamps), H5Sclose, "get a dataspace");
    const hsize_t start[1] = {f.photon_position};
    const hsize_t count[1] = {take};
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
          "select timestamps");
    Handle memory_space(H5Screate_simple(1, count, nullptr), H5Sclose, "create a dataspace");
    check(H5Dread(f.timestamps, H5T_NATIVE_INT64, memory_space, file_space, H5P_DEFAULT,
                  times.data()),
          "read timestamps of '" + path_ + "'");
    if (f.detectors.valid()) {
      Handle detector_space(H5Dget_space(f.detectors), H5Sclose, "get a dataspace");
      check(H5Sselect_hyperslab(detector_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
            "select detectors");
      check(H5Dread(f.detectors, H5T_NATIVE_INT32, memory_space, detector_space, H5P_DEFAULT,
                    channels.data()),
            "read detectors of '" + path_ + "'");
    }
  }
  const std::size_t before = lookahead_.size();
  hsize_t photon = 0;
  // Special tags sit at their recorded positions in the merged stream.
  while (photon < take ||
         (f.photon_position + take == f.photons && f.special_position < f.specials.size())) {
    if (f.special_position < f.specials.size() && f.positions[f.special_position] == f.emitted) {
      lookahead_.push_back(f.specials[f.special_position++]);
    } else if (photon < take) {
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
  return lookahead_.size() > before;
}

bool PhotonHdf5Source::next(BlockBuffer& out) {
  File& f = *file_;
  while ((f.photon_position < f.photons || f.special_position < f.specials.size()) &&
         lookahead_.size() - position_ <= block_size_) {
    refill();
  }
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
