#include "file_bench.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <stdexcept>

#include "bench_stream.hpp"
#include "json_file.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/codec.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBlockTags = 16384;
const std::vector<channel_t> kChannels = {1, 2, 3, 4, 5, 6, 7, 8};

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double scanRate(const std::vector<Tag>& tags) {
  const auto start = Clock::now();
  const std::uint64_t sum = plainScan(tags);
  const double seconds = secondsSince(start);
  if (sum == 42) std::cout << "";  // keeps the scan observable
  return tags.size() / seconds * 1e-6;
}

struct PackResult {
  double mtags_per_s = 0;
  double bytes_per_tag = 0;
};

// Packs the stream block by block on this thread, as the recorder's encoder does.
PackResult pack(const std::vector<Tag>& tags, tagfile::Compression compression,
                std::vector<EncodedBlock>* keep = nullptr) {
  BlockPacker packer(compression);
  EncodedBlock block;
  std::uint64_t bytes = 0;
  const auto start = Clock::now();
  timestamp_t begin = tags.front().time;
  for (std::size_t at = 0; at < tags.size();) {
    // Cut where the next tag is later than the block's last, as every source does.
    const std::span<const Tag> rest = std::span<const Tag>(tags).subspan(at);
    const std::span<const Tag> part = rest.first(blockSplitPoint(rest, kBlockTags));
    const timestamp_t end =
        at + part.size() < tags.size() ? tags[at + part.size()].time : part.back().time + 1;
    packer.pack(part, begin, end, block);
    bytes += tagfile::kRecordHeaderSize + block.payload.size();
    if (keep != nullptr) keep->push_back(block);
    begin = end;
    at += part.size();
  }
  const double seconds = secondsSince(start);
  return {tags.size() / seconds * 1e-6, static_cast<double>(bytes) / tags.size()};
}

// Checks and decodes every block on this thread, as the FileReader does.
double unpack(const std::vector<EncodedBlock>& blocks, std::size_t tags) {
  tagfile::TagBlockDecoder decoder;
  std::vector<Tag> out(kBlockTags);
  std::vector<std::uint32_t> specials;
  std::uint64_t check = 0;
  const auto start = Clock::now();
  for (const EncodedBlock& block : blocks) {
    if (tagfile::crc32c(block.payload) != block.header.payload_crc) {
      throw std::runtime_error("checksum mismatch in the decode benchmark");
    }
    if (out.size() < block.header.tag_count) out.resize(block.header.tag_count);
    decoder.decode(block.payload, block.header.tag_count, block.header.begin_time,
                   block.header.end_time, out.data(), specials);
    check += static_cast<std::uint64_t>(out[block.header.tag_count - 1].time);
  }
  const double seconds = secondsSince(start);
  if (check == 42) std::cout << "";
  return tags / seconds * 1e-6;
}

void fsyncFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) throw std::runtime_error("cannot fsync " + path);
  ::close(fd);
}

struct WriteResult {
  double mtags_per_s = 0;
  double mb_per_s = 0;
};

// A FileWriter alone in a graph fed from memory, until the files are on the disk (fsync).
WriteResult recordTo(const std::string& folder,
                     const std::shared_ptr<const std::vector<Tag>>& stream) {
  const std::string path = folder + "/bench.tags";
  MemorySource source(stream, kBlockTags);  // checks the stream: not part of the timing
  const auto start = Clock::now();
  std::uint64_t bytes = 0;
  std::uint32_t parts = 0;
  {
    MeasurementGraph graph(source, GraphOptions{.threads = 2});
    auto& writer = graph.emplace<FileWriter>("writer", path, kChannels, std::uint64_t{1} << 40);
    graph.run();
    writer.close();
    bytes = writer.getTotalSize();
    parts = static_cast<std::uint32_t>(writer.getResults().facts.getInt("parts"));
  }
  for (std::uint32_t part = 0; part < parts; ++part) fsyncFile(TagFileWriter::partPath(path, part));
  const double seconds = secondsSince(start);
  for (std::uint32_t part = 0; part < parts; ++part) {
    std::filesystem::remove(TagFileWriter::partPath(path, part));
  }
  return {stream->size() / seconds * 1e-6, bytes / seconds * 1e-6};
}

// The folder's sequential write rate: 1 MiB writes of `bytes` in all, then fsync (what
// `dd bs=1M conv=fsync` does).
double diskRate(const std::string& folder, std::uint64_t bytes) {
  const std::string path = folder + "/dd.tmp";
  std::vector<char> buffer(1 << 20);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<char>(i * 131 + 7);
  const auto start = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  for (std::uint64_t done = 0; done < bytes; done += buffer.size()) {
    if (::write(fd, buffer.data(), buffer.size()) != static_cast<ssize_t>(buffer.size())) {
      throw std::runtime_error("cannot write " + path);
    }
  }
  if (::fsync(fd) != 0) throw std::runtime_error("cannot fsync " + path);
  ::close(fd);
  const double seconds = secondsSince(start);
  std::filesystem::remove(path);
  return bytes / seconds * 1e-6;
}

std::vector<Tag> generate(std::vector<SyntheticChannel> channels, std::size_t count) {
  SyntheticConfig config;
  config.channels = std::move(channels);
  config.block_size = 1 << 16;
  SyntheticSource source(config);
  std::vector<Tag> tags;
  BlockBuffer block;
  while (tags.size() < count && source.next(block)) {
    tags.insert(tags.end(), block.tags.begin(), block.tags.end());
  }
  tags.resize(std::min(tags.size(), count));
  return tags;
}

}  // namespace

int runFileBench(const FileBenchOptions& options) {
  const auto stream = makeAnnouncedBenchStream(options.tags);

  std::vector<double> scans, decodes;
  std::vector<std::vector<double>> pack_rates(3);
  std::vector<double> pack_bytes(3);
  const tagfile::Compression methods[3] = {tagfile::Compression::None, tagfile::Compression::Lz4,
                                           tagfile::Compression::Zstd};
  for (int run = 0; run < options.runs; ++run) {
    scans.push_back(scanRate(*stream));
    for (int m = 0; m < 3; ++m) {
      const PackResult result = pack(*stream, methods[m]);
      pack_rates[m].push_back(result.mtags_per_s);
      pack_bytes[m] = result.bytes_per_tag;
    }
  }
  std::vector<EncodedBlock> blocks;
  pack(*stream, tagfile::Compression::None, &blocks);
  for (int run = 0; run < options.runs; ++run) decodes.push_back(unpack(blocks, stream->size()));
  blocks.clear();
  const double scan = median(scans);

  char pattern[] = "/tagflow-bench-XXXXXX";
  std::string disk = options.disk_folder + pattern;
  if (mkdtemp(disk.data()) == nullptr)
    throw std::runtime_error("cannot create a folder in " + options.disk_folder);
  std::string shm = std::string("/dev/shm") + pattern;
  if (mkdtemp(shm.data()) == nullptr)
    throw std::runtime_error("cannot create a folder in /dev/shm");
  std::vector<double> shm_rates, shm_mb, disk_rates, disk_mb, dd_rates;
  const auto recorded_bytes = static_cast<std::uint64_t>(pack_bytes[0] * stream->size());
  for (int run = 0; run < options.runs; ++run) {
    const WriteResult to_shm = recordTo(shm, stream);
    shm_rates.push_back(to_shm.mtags_per_s);
    shm_mb.push_back(to_shm.mb_per_s);
    const WriteResult to_disk = recordTo(disk, stream);
    disk_rates.push_back(to_disk.mtags_per_s);
    disk_mb.push_back(to_disk.mb_per_s);
    dd_rates.push_back(diskRate(disk, std::max<std::uint64_t>(recorded_bytes, 256u << 20)));
  }
  std::filesystem::remove_all(disk);
  std::filesystem::remove_all(shm);

  const std::size_t sample = std::min<std::size_t>(options.tags, 10'000'000);
  const PackResult clock =
      pack(generate({SyntheticChannel::clock(1, 10e6)}, sample), tagfile::Compression::None);
  const PackResult poisson =
      pack(generate({SyntheticChannel::poisson(1, 20e6), SyntheticChannel::poisson(2, 10e6),
                     SyntheticChannel::poisson(3, 5e6), SyntheticChannel::poisson(4, 1e6)},
                    sample),
           tagfile::Compression::None);
  const PackResult pairs = pack(
      generate({SyntheticChannel::poisson(1, 20e6), SyntheticChannel::partner(2, 1, 1000, 50, 1.0)},
               sample),
      tagfile::Compression::None);

  std::cout << std::fixed << std::setprecision(1) << "\n"
            << stream->size() << " tags, blocks of " << kBlockTags << " tags, medians of "
            << options.runs << " runs; ratio = rate / plain scan in the same run\n\n"
            << "plain scan                  " << std::setw(8) << scan << " MTags/s\n";
  const char* names[3] = {"none", "lz4 ", "zstd"};
  for (int m = 0; m < 3; ++m) {
    std::cout << "pack, compression " << names[m] << "     " << std::setw(8)
              << median(pack_rates[m]) << " MTags/s  x" << std::setprecision(2)
              << median(pack_rates[m]) / scan << std::setprecision(3) << "  " << pack_bytes[m]
              << " bytes/tag\n"
              << std::setprecision(1);
  }
  std::cout << "check + decode              " << std::setw(8) << median(decodes) << " MTags/s  x"
            << std::setprecision(2) << median(decodes) / scan << std::setprecision(1) << "\n"
            << "FileWriter to /dev/shm      " << std::setw(8) << median(shm_rates) << " MTags/s  "
            << median(shm_mb) << " MB/s\n"
            << "FileWriter to " << options.disk_folder << " (fsync) " << std::setw(8)
            << median(disk_rates) << " MTags/s  " << median(disk_mb)
            << " MB/s = " << std::setprecision(2) << median(disk_mb) / median(dd_rates)
            << std::setprecision(1) << " of the disk's " << median(dd_rates)
            << " MB/s (write + fsync)\n"
            << std::setprecision(3) << "bytes/tag: 10 MHz clock " << clock.bytes_per_tag
            << ", Poisson (4 channels) " << poisson.bytes_per_tag << ", correlated pairs "
            << pairs.bytes_per_tag << "\n";
  if (!options.json.empty()) {
    const nlohmann::json json{{"tags", stream->size()},
                              {"runs", options.runs},
                              {"scan_mtags_per_s", scan},
                              {"pack_none_mtags_per_s", median(pack_rates[0])},
                              {"pack_lz4_mtags_per_s", median(pack_rates[1])},
                              {"pack_zstd_mtags_per_s", median(pack_rates[2])},
                              {"bytes_per_tag_none", pack_bytes[0]},
                              {"bytes_per_tag_lz4", pack_bytes[1]},
                              {"bytes_per_tag_zstd", pack_bytes[2]},
                              {"decode_mtags_per_s", median(decodes)},
                              {"shm_mtags_per_s", median(shm_rates)},
                              {"disk_mtags_per_s", median(disk_rates)},
                              {"disk_mb_per_s", median(disk_mb)},
                              {"dd_mb_per_s", median(dd_rates)},
                              {"clock_bytes_per_tag", clock.bytes_per_tag},
                              {"poisson_bytes_per_tag", poisson.bytes_per_tag},
                              {"pairs_bytes_per_tag", pairs.bytes_per_tag}};
    writeJsonFile(options.json, json);
  }
  return 0;
}

}  // namespace tagflow::bench
