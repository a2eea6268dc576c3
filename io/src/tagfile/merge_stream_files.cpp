#include "tagflow/io/tagfile/merge_stream_files.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/merged_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow {

namespace {

// What writing the set at `output` would overwrite of what `input` is read from, said as the
// rest of "the output 'OUTPUT' ...": the output itself, or a later part it replaces as it
// goes on (an input given as part 1 of the output's own set), against the input and the parts
// it is read on into. Nothing when they are apart.
std::optional<std::string> overwrittenInput(const std::string& output, const std::string& input) {
  std::vector<std::string> read{input};
  for (std::string& part : partsReadAfter(input)) read.push_back(std::move(part));
  const auto readAs = [&](const std::string& path) {
    return path == input ? fmt::format("the input '{}'", input)
                         : fmt::format("'{}', a later part of the input '{}'", path, input);
  };
  std::vector<std::string> written{output};
  for (std::string& part : TagFileWriter::laterParts(output)) written.push_back(std::move(part));
  for (const std::string& target : written) {
    std::error_code error;
    const auto canonical_target = std::filesystem::weakly_canonical(target, error);
    if (error) continue;
    for (const std::string& path : read) {
      const auto canonical = std::filesystem::weakly_canonical(path, error);
      if (error || canonical != canonical_target) continue;
      return target == output
                 ? fmt::format("is {}", readAs(path))
                 : fmt::format("goes on into its part '{}', which is {}", target, readAs(path));
    }
  }
  return std::nullopt;
}

}  // namespace

MergedFilesSummary mergeStreamFiles(const std::string& output,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<channel_t>& channel_offsets,
                                    const std::vector<timestamp_t>& time_offsets, bool overlap_only,
                                    std::uint64_t max_file_size, tagfile::Compression compression) {
  const auto checkLength = [&](std::size_t size, const char* what) {
    if (size != 0 && size != inputs.size()) {
      throw InvalidArgument(fmt::format(
          "mergeStreamFiles: {} {} for {} inputs (valid: one per input, or none for all zero)",
          size, what, inputs.size()));
    }
  };
  checkLength(channel_offsets.size(), "channel offsets");
  checkLength(time_offsets.size(), "time offsets");
  if (inputs.empty()) throw InvalidArgument("mergeStreamFiles: no inputs (valid: one or more)");
  for (const std::string& input : inputs) {
    if (const auto overwritten = overwrittenInput(output, input)) {
      throw InvalidArgument(fmt::format(
          "mergeStreamFiles: the output '{}' {}, which the merge reads (valid: another path)",
          output, *overwritten));
    }
  }

  TagFileOptions options;
  options.path = output;
  options.max_file_size = max_file_size;
  options.compression = compression;
  options.validate();

  std::vector<MergedInput> sources;
  std::string configuration = fmt::format("merged by mergeStreamFiles ({}) from:",
                                          overlap_only ? "common span only" : "union of spans");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    auto reader = std::make_unique<FileReader>(inputs[k]);
    const channel_t channel_offset = channel_offsets.empty() ? 0 : channel_offsets[k];
    const timestamp_t time_offset = time_offsets.empty() ? 0 : time_offsets[k];
    configuration += fmt::format(
        "\ninput {}: {} (channel offset {}, time offset {} ps); its "
        "configuration: {}",
        k, inputs[k], channel_offset, time_offset, reader->getConfiguration());
    sources.push_back(MergedInput{std::move(reader), channel_offset, time_offset});
  }
  MergedSource merged(std::move(sources), overlap_only);

  options.configuration = std::move(configuration);
  options.channels = merged.channels();
  options.partial_output_kept = false;  // a failed merge removes its output
  auto writer = std::make_unique<TagFileWriter>(options);
  MergedFilesSummary summary;
  try {
    BlockPacker packer(compression);
    EncodedBlock encoded;
    BlockBuffer block;
    bool first = true;
    while (merged.next(block)) {
      if (first) summary.begin = block.begin_time;
      first = false;
      summary.end = block.end_time;
      packer.pack(block.tags, block.begin_time, block.end_time, encoded);
      writer->write(encoded);
    }
    writer->close();
  } catch (...) {
    const std::uint32_t parts = writer->partCount();
    writer.reset();
    std::error_code ignored;
    for (std::uint32_t part = 0; part < parts; ++part) {
      std::filesystem::remove(TagFileWriter::partPath(output, part), ignored);
    }
    throw;
  }
  summary.tags = writer->tagsWritten();
  summary.bytes = writer->bytesWritten();
  return summary;
}

}  // namespace tagflow
