#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "damaged_tail.hpp"
#include "output_guard.hpp"
#include "path_plan.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/photon_hdf5.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"
#include "tagflow/io/vendor/ptu_writer.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace tagflow::cli {

namespace {

constexpr std::size_t kBlockTags = 16384;

// "raw", "tags" or "h5" from a --from/--to value, or else from the file's extension; for an
// input also a vendor format (vendorFormats()), named or recognised from the file's content.
std::string formatOf(const std::string& given, const std::string& path, bool input) {
  if (std::filesystem::is_directory(path)) {
    throw IoError(fmt::format("'{}' is a folder, not a file", path));
  }
  const std::string format =
      given.empty() ? std::filesystem::path(path).extension().string() : given;
  if (format == "raw" || format == ".raw" || format == ".bin") return "raw";
  if (format == "tags" || format == ".tags") return "tags";
  if (format == "h5" || format == ".h5" || format == ".hdf5") return "h5";
  if (!input && (format == "ptu" || format == ".ptu")) return "ptu";
  if (input) {
    const auto& vendor = vendorFormats();
    if (std::find(vendor.begin(), vendor.end(), given) != vendor.end()) return given;
    if (given.empty()) {
      if (std::string detected = detectVendorFormat(path); !detected.empty()) return detected;
      // Named as a vendor's file but not one inside: say so rather than list that format.
      const std::string named = format.empty() ? "" : format.substr(1);
      if (std::find(vendor.begin(), vendor.end(), named) != vendor.end()) {
        throw DataError(fmt::format(
            "'{}' is named as a {} file, but its content is not one (no {} signature at byte 0)",
            path, named, named));
      }
    }
  }
  throw InvalidArgument(fmt::format(
      "cannot tell the format of '{}' from '{}' (valid: raw (.raw, .bin), tags (.tags), h5 (.h5, "
      ".hdf5){}; or --from/--to)",
      path, format,
      input ? fmt::format(", and to read: {}", fmt::join(vendorFormats(), ", ")) : ""));
}

std::unique_ptr<Source> openInput(const std::string& format, const std::string& path) {
  if (format == "raw") return std::make_unique<RawFileSource>(path, kBlockTags);
  if (format == "tags") return std::make_unique<FileReader>(path, kBlockTags);
  if (format == "h5") return std::make_unique<PhotonHdf5Source>(path, kBlockTags);
  VendorFile file = openVendorFile(path, format);
  for (const std::string& warning : file.warnings) std::cerr << "warning: " << warning << "\n";
  return std::make_unique<VendorFileSource>(std::move(file), kBlockTags);
}

// The header values a vendor file's tags depend on, as text for the output's provenance.
std::string vendorProvenance(const Source& source) {
  const auto* vendor = dynamic_cast<const VendorFileSource*>(&source);
  if (vendor == nullptr) return "";
  std::string text;
  for (const auto& [key, value] : vendor->file().provenance.entries()) {
    text += fmt::format("; {} = {}", key, formatParameter(value));
  }
  return text;
}

// Writes the stream as a PTU file.
std::uint64_t writePtu(Source& source, const std::string& path, const std::string& comment) {
  PtuWriter writer(path, comment);
  BlockBuffer block;
  std::uint64_t tags = 0;
  timestamp_t end = 0;
  while (source.next(block)) {
    writer.write(block.tags);
    tags += block.tags.size();
    end = block.end_time;
  }
  writer.close(end);
  if (writer.leftOut() > 0) {
    std::cerr << "warning: " << writer.leftOut()
              << " overflow, missed-events or error tags have no PTU record and were left out\n";
  }
  return tags - writer.leftOut();
}

}  // namespace

int convertCommand(const ConvertOptions& options) {
  const std::string from = formatOf(options.from, options.input, true);
  const std::string to = formatOf(options.to, options.output, false);
  const auto refuseUnless = [&](bool given, const char* option, const char* format) {
    if (given && to != format) {
      throw InvalidArgument(fmt::format("{} applies to {} outputs only; '{}' is written as {}",
                                        option, format, options.output, to));
    }
  };
  refuseUnless(options.compression.has_value(), "--compression", "tags");
  refuseUnless(options.max_file_size.has_value(), "--max-file-size", "tags");
  refuseUnless(options.description.has_value(), "--description", "h5");
  PathPlan paths;
  if (from == "tags") {
    paths.readsTagFileSet(options.input, "the input");
  } else {
    paths.reads(options.input, "the input");
  }
  if (to == "tags") {
    paths.writesTagFileSet(options.output, "the output");
  } else {
    paths.writes(options.output, "the output");
  }
  paths.check();
  const std::unique_ptr<Source> input = openInput(from, options.input);
  std::string configuration =
      "converted from " + options.input + " (" + input->describe() + vendorProvenance(*input) + ")";
  std::vector<channel_t> channels;
  if (const auto* reader = dynamic_cast<const FileReader*>(input.get())) {
    configuration = reader->getConfiguration();
    channels = reader->getChannelList();
  }
  // A damaged tail ends the input: the output is finished with everything before it.
  DamagedTailGuard source(*input);

  std::uint64_t tags = 0;
  std::uint64_t bytes = 0;
  if (to == "h5") {
    tags = writePhotonHdf5(
        source, options.output,
        PhotonHdf5Export{options.description.value_or(""), options.input, configuration});
    bytes = std::filesystem::file_size(options.output);
  } else if (to == "ptu") {
    const OutputGuard guard(options.output, false);
    tags = writePtu(source, options.output, configuration);
    bytes = std::filesystem::file_size(options.output);
  } else if (to == "raw") {
    const OutputGuard guard(options.output, false);
    RawFileWriter writer(options.output);
    BlockBuffer block;
    while (source.next(block)) {
      writer.write(block.tags);
      tags += block.tags.size();
    }
    writer.close();
    bytes = writer.bytesWritten();
  } else {
    TagFileOptions file_options;
    file_options.path = options.output;
    file_options.max_file_size = options.max_file_size.value_or(std::uint64_t{1} << 30);
    file_options.compression = tagfile::compressionFromName(options.compression.value_or("none"));
    file_options.configuration = configuration;
    file_options.channels = channels;
    file_options.partial_output_kept = false;  // the guard removes a failed output
    const OutputGuard guard(options.output, true);
    TagFileWriter writer(file_options);
    BlockPacker packer(file_options.compression);
    EncodedBlock encoded;
    BlockBuffer block;
    while (source.next(block)) {
      packer.pack(block.tags, block.begin_time, block.end_time, encoded);
      writer.write(encoded);
    }
    writer.close();
    tags = writer.tagsWritten();
    bytes = writer.bytesWritten();
  }
  if (!options.quiet) {
    std::cout << "converted " << tags << " tags from " << options.input << " (" << from << ") to "
              << options.output << " (" << to << "), " << bytes << " bytes"
              << (source.damage().empty() ? "" : " (up to the input's damaged tail)") << "\n";
  }
  return source.report(options.output);
}

}  // namespace tagflow::cli
