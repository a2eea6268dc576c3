#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/photon_hdf5.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::cli {

namespace {

constexpr std::size_t kBlockTags = 16384;

// "raw", "tags" or "h5" from a --from/--to value, or else from the file's extension.
std::string formatOf(const std::string& given, const std::string& path) {
  const std::string format =
      given.empty() ? std::filesystem::path(path).extension().string() : given;
  if (format == "raw" || format == ".raw" || format == ".bin") return "raw";
  if (format == "tags" || format == ".tags") return "tags";
  if (format == "h5" || format == ".h5" || format == ".hdf5") return "h5";
  throw InvalidArgument("cannot tell the format of '" + path + "' from '" + format +
                        "' (valid: raw (.raw, .bin), tags (.tags), h5 (.h5, .hdf5); or "
                        "--from/--to raw|tags|h5)");
}

std::unique_ptr<Source> openInput(const std::string& format, const std::string& path) {
  if (format == "raw") return std::make_unique<RawFileSource>(path, kBlockTags);
  if (format == "tags") return std::make_unique<FileReader>(path, kBlockTags);
  return std::make_unique<PhotonHdf5Source>(path, kBlockTags);
}

}  // namespace

int convertCommand(const ConvertOptions& options) {
  const std::string from = formatOf(options.from, options.input);
  const std::string to = formatOf(options.to, options.output);
  std::unique_ptr<Source> source = openInput(from, options.input);
  std::string configuration = "converted from " + options.input + " (" + source->describe() + ")";
  std::vector<channel_t> channels;
  if (const auto* reader = dynamic_cast<const FileReader*>(source.get())) {
    configuration = reader->getConfiguration();
    channels = reader->getChannelList();
  }

  std::uint64_t tags = 0;
  std::uint64_t bytes = 0;
  if (to == "h5") {
    tags = writePhotonHdf5(*source, options.output,
                           PhotonHdf5Export{options.description, options.input, configuration});
    bytes = std::filesystem::file_size(options.output);
  } else if (to == "raw") {
    RawFileWriter writer(options.output);
    BlockBuffer block;
    while (source->next(block)) {
      writer.write(block.tags);
      tags += block.tags.size();
    }
    writer.close();
    bytes = writer.bytesWritten();
  } else {
    TagFileOptions file_options;
    file_options.path = options.output;
    file_options.max_file_size = options.max_file_size;
    file_options.compression = tagfile::compressionFromName(options.compression);
    file_options.configuration = configuration;
    file_options.channels = channels;
    TagFileWriter writer(file_options);
    BlockPacker packer(file_options.compression);
    EncodedBlock encoded;
    BlockBuffer block;
    while (source->next(block)) {
      packer.pack(block.tags, block.begin_time, block.end_time, encoded);
      writer.write(encoded);
    }
    writer.close();
    tags = writer.tagsWritten();
    bytes = writer.bytesWritten();
  }
  if (!options.quiet) {
    std::cout << "converted " << tags << " tags from " << options.input << " (" << from << ") to "
              << options.output << " (" << to << "), " << bytes << " bytes\n";
  }
  return 0;
}

}  // namespace tagflow::cli
