#include "tagflow/io/hdf5/results_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hdf5/handle.hpp"
#include "hdf5/replace_whole.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/version.hpp"
#include "write_fully.hpp"

namespace tagflow {

std::string tagflowVersion() {
  return kVersion;
}

namespace {

using hdf5::check;
using hdf5::createGroup;
using hdf5::fileType;
using hdf5::Handle;
using hdf5::nativeType;
using hdf5::replaceWhole;

Handle stringType() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type, H5T_VARIABLE), "size a string type");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "set a string type's character set");
  return type;
}

void writeStringAttribute(hid_t object, const std::string& name, const std::string& value) {
  Handle type = stringType();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle attribute(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose, "create attribute '" + name + "'");
  const char* text = value.c_str();
  check(H5Awrite(attribute, type, &text), "write attribute '" + name + "'");
}

template <typename T>
void writeArrayAttribute(hid_t object, const std::string& name, const T* values, std::size_t count,
                         bool scalar) {
  const hsize_t dims[1] = {count};
  Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr), H5Sclose,
               "create a dataspace for attribute '" + name + "'");
  Handle attribute(H5Acreate2(object, name.c_str(), fileType<T>(), space, H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose, "create attribute '" + name + "'");
  if (count > 0)
    check(H5Awrite(attribute, nativeType<T>(), values), "write attribute '" + name + "'");
}

void writeParameterAttribute(hid_t object, const std::string& name, const ParameterValue& value) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          writeStringAttribute(object, name, v);
        } else if constexpr (std::is_same_v<V, bool>) {
          const std::int8_t flag = v ? 1 : 0;
          writeArrayAttribute(object, name, &flag, 1, true);
        } else if constexpr (std::is_same_v<V, std::int64_t> || std::is_same_v<V, double>) {
          writeArrayAttribute(object, name, &v, 1, true);
        } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          writeStringAttribute(object, name, formatParameter(value));
        } else {
          writeArrayAttribute(object, name, v.data(), v.size(), false);
        }
      },
      value);
}

template <typename T>
void writeDataset(hid_t group, const std::string& name, const std::vector<std::size_t>& shape,
                  const std::vector<T>& data, const std::string& unit,
                  const std::string& description) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  std::size_t elements = 1;
  for (auto d : shape) elements *= d;
  if (elements != data.size()) {
    throw std::logic_error("dataset '" + name + "': shape holds " + std::to_string(elements) +
                           " values, data " + std::to_string(data.size()));
  }
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               "create a dataspace for '" + name + "'");
  Handle dataset(
      H5Dcreate2(group, name.c_str(), fileType<T>(), space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "create dataset '" + name + "'");
  if (!data.empty()) {
    check(H5Dwrite(dataset, nativeType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
          "write dataset '" + name + "'");
  }
  writeStringAttribute(dataset, "unit", unit);
  if (!description.empty()) writeStringAttribute(dataset, "description", description);
}

void writeStringDataset(hid_t group, const std::string& name,
                        const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const auto& value : values) pointers.push_back(value.c_str());
  const hsize_t dims[1] = {values.size()};
  Handle type = stringType();
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose,
               "create a dataspace for '" + name + "'");
  Handle dataset(
      H5Dcreate2(group, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
      "create dataset '" + name + "'");
  if (!values.empty()) {
    check(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
          "write dataset '" + name + "'");
  }
}

void writeResultSet(hid_t parent, const ResultSet& result) {
  Handle group = createGroup(parent, result.name);
  writeStringAttribute(group, "kind", result.kind);
  for (const auto& [key, value] : result.parameters.entries())
    writeParameterAttribute(group, key, value);
  for (const auto& [key, unit] : result.parameter_units) {
    if (result.parameters.contains(key)) writeStringAttribute(group, key + ".unit", unit);
  }
  for (const auto& [key, value] : result.facts.entries())
    writeParameterAttribute(group, key, value);
  for (const auto& array : result.arrays) {
    std::visit(
        [&](const auto& data) {
          writeDataset(group, array.name, array.shape, data, array.unit, array.description);
        },
        array.data);
  }
}

void writeProfile(hid_t file, const Profile& profile) {
  Handle group = createGroup(file, "profile");
  const std::size_t n = profile.nodes.size();
  std::vector<std::string> names, kinds;
  std::vector<std::uint64_t> tags, blocks;
  std::vector<double> busy, wait, latency, capacity, share;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& node = profile.nodes[i];
    names.push_back(node.name);
    kinds.push_back(node.kind);
    tags.push_back(node.tags);
    blocks.push_back(node.blocks);
    busy.push_back(node.busy_s);
    wait.push_back(node.wait_s);
    latency.push_back(node.max_latency_s);
    capacity.push_back(node.capacityMTagsPerSecond());
    share.push_back(i == 0 ? 0.0 : profile.share(node));
  }
  writeStringDataset(group, "node", names);
  writeStringDataset(group, "kind", kinds);
  writeDataset(group, "tags", {n}, tags, "tags", "tags processed by the node");
  writeDataset(group, "blocks", {n}, blocks, "blocks", "blocks processed by the node");
  writeDataset(group, "busy_s", {n}, busy, "s", "time spent inside the node's work");
  writeDataset(group, "wait_s", {n}, wait, "s", "time spent waiting for input");
  writeDataset(group, "max_latency_s", {n}, latency, "s",
               "largest time from a block's publication to the node finishing it");
  writeDataset(group, "capacity_mtags_per_s", {n}, capacity, "MTags/s",
               "tags / busy time: the node's standalone rate");
  writeDataset(group, "share", {n}, share, "1",
               "busy time over all measurement busy time (0 for the source)");
  const std::int64_t total_tags = static_cast<std::int64_t>(profile.tags);
  writeParameterAttribute(group, "tags", total_tags);
  writeParameterAttribute(group, "blocks", static_cast<std::int64_t>(profile.blocks));
  writeParameterAttribute(group, "wall_s", profile.wall_s);
  writeParameterAttribute(group, "wall_mtags_per_s", profile.wallMTagsPerSecond());
  writeParameterAttribute(group, "threads", static_cast<std::int64_t>(profile.threads));
  writeParameterAttribute(group, "stream_duration_ps", profile.stream_duration_ps);
  writeParameterAttribute(group, "max_blocks_in_flight",
                          static_cast<std::int64_t>(profile.max_blocks_in_flight));
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// Creates `temporary` with `bytes`, durable before it replaces the results file `path`.
void writeFileWhole(const std::string& temporary, const std::string& path,
                    const std::vector<std::uint8_t>& bytes) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot create '" + temporary + "': " + std::strerror(errno));
  iovec piece{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  int error_number = writeFully(fd, {&piece, 1});
  if (error_number == 0 && ::fdatasync(fd) != 0) error_number = errno;
  if (::close(fd) != 0 && error_number == 0) error_number = errno;
  if (error_number != 0) {
    throw IoError("cannot write results file '" + path + "' (" + std::to_string(bytes.size()) +
                  " bytes): " + std::strerror(error_number));
  }
}

}  // namespace

std::string resultsTemporaryPath(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

namespace {

// `reserved`: the file's own groups beside the group's, which it cannot take.
void checkGroupName(const std::string& name, std::string_view what,
                    std::span<const std::string_view> reserved) {
  const bool control = std::any_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
  });
  if (!name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
      !control && std::ranges::find(reserved, name) == reserved.end()) {
    return;
  }
  std::string shown;
  for (const char c : name) {
    shown += static_cast<unsigned char>(c) < 0x20 || c == 0x7F
                 ? fmt::format("\\x{:02x}", static_cast<unsigned char>(c))
                 : std::string(1, c);
  }
  std::string not_these;
  for (const std::string_view taken : reserved) not_these += fmt::format("'{}', ", taken);
  throw InvalidArgument(fmt::format(
      "{} name '{}' cannot name a group of the results file (valid: not empty, not {}'.' or "
      "'..', no '/' or control characters)",
      what, shown, not_these));
}

}  // namespace

void checkResultsName(const std::string& name) {
  static constexpr std::string_view kFileGroups[] = {"profile", "source", "virtual_channels"};
  checkGroupName(name, "measurement", kFileGroups);
}

void checkVirtualChannelName(const std::string& name) {
  checkGroupName(name, "virtual channel", {});
}

void checkOutputWritable(const std::string& path, const std::string& content) {
  hdf5::requireFilePlace(path, content);
  const std::string probe = resultsTemporaryPath(path);
  std::FILE* file = std::fopen(probe.c_str(), "wb");
  if (file == nullptr) {
    throw IoError("cannot write output file '" + path + "': " + std::strerror(errno));
  }
  std::fclose(file);
  std::remove(probe.c_str());
}

void skipHdf5CleanupAtExit() {
  H5dont_atexit();
}

RunInfo runInfoOf(const Source& source, const MeasurementGraph& graph, std::string config) {
  RunInfo info{source.describe(), std::move(config), sourceStatistics(source)};
  for (const VirtualChannel* channel : graph.virtualChannels()) {
    info.virtual_channels.push_back(channel->getResults());
  }
  return info;
}

void writeResultsHdf5(const std::string& path, const std::vector<ResultSet>& results,
                      const Profile& profile, const RunInfo& info) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions with our messages
  checkOutputWritable(path);  // names `path` and the system's reason, not the temporary's
  replaceWhole(path, "results", [&](const std::string& temporary) {
    // The file is built in memory and written by us: HDF5 never meets a failing write (a full
    // disk), after which its file stayed half-closed and crashed the process when the library
    // cleaned up at exit.
    Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create a file access list");
    check(H5Pset_fapl_core(access, std::size_t{1} << 20, false), "build the file in memory");
    Handle file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access), H5Fclose,
                "create '" + temporary + "' in memory");
    writeStringAttribute(file, "format", "tagflow-results/1");
    writeStringAttribute(file, "producer", "tagflow");
    writeStringAttribute(file, "tagflow_version", tagflowVersion());
    writeStringAttribute(file, "created", utcNow());
    writeStringAttribute(file, "source", info.source);
    writeStringAttribute(file, "config", info.config);
    writeStringAttribute(file, "time_unit", "ps");
    writeParameterAttribute(file, "interrupted", info.interrupted);
    writeParameterAttribute(file, "checkpoint", info.checkpoint);
    writeStringAttribute(file, "damaged_tail", info.damaged_tail);
    for (const auto& result : results) {
      checkResultsName(result.name);
      writeResultSet(file, result);
    }
    if (!info.virtual_channels.empty()) {
      Handle group = createGroup(file, "virtual_channels");
      for (const auto& channel : info.virtual_channels) {
        checkVirtualChannelName(channel.name);
        writeResultSet(group, channel);
      }
    }
    writeProfile(file, profile);
    if (!info.source_statistics.entries().empty()) {
      Handle group = createGroup(file, "source");
      for (const auto& [key, value] : info.source_statistics.entries())
        writeParameterAttribute(group, key, value);
    }
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush '" + temporary + "'");
    const ssize_t size = H5Fget_file_image(file, nullptr, 0);
    check(size < 0 ? -1 : 0, "size the image of '" + temporary + "'");
    std::vector<std::uint8_t> image(static_cast<std::size_t>(size));
    check(H5Fget_file_image(file, image.data(), image.size()) == size ? 0 : -1,
          "copy the image of '" + temporary + "'");
    file.close("close '" + temporary + "'");
    writeFileWhole(temporary, path, image);
  });
}

}  // namespace tagflow
