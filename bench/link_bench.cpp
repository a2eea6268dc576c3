#include "link_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "bench_stream.hpp"
#include "json_file.hpp"
#include "tagflow/io/udp/stream_sender.hpp"
#include "tagflow/io/udp/wire.hpp"

namespace tagflow::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// Decodes every datagram of `stream` into `block`, starting over whenever `block_size` tags
// are there, as the UDP source fills one block after another. Returns the tags decoded.
std::uint64_t decodeAll(const EncodedStream& stream, std::vector<Tag>& block,
                        std::size_t block_size, std::uint64_t& checksum) {
  std::uint64_t total = 0;
  std::size_t filled = 0;
  for (std::size_t i = 0; i < stream.datagrams(); ++i) {
    const wire::Decoded decoded = wire::decodeWords(
        stream.header(i), reinterpret_cast<const std::byte*>(stream.words(i).data()),
        block.data() + filled);
    if (decoded.status != wire::Status::Ok) throw std::logic_error("link bench: bad datagram");
    filled += decoded.tags;
    total += decoded.tags;
    if (filled >= block_size) {
      checksum += static_cast<std::uint64_t>(block[filled - 1].time);
      filled = 0;
    }
  }
  return total;
}

// Stands in for the sender's batch: one reused buffer, each datagram stamped and let go.
class ReusedBuffer : public wire::DatagramSink {
 public:
  explicit ReusedBuffer(std::size_t words) : buffer_(wire::kHeaderWords + words) {}
  std::uint32_t* openDatagram() override { return buffer_.data(); }
  void closeDatagram(std::uint32_t* datagram, const wire::Header& facts,
                     std::uint32_t events) override {
    wire::Header header = facts;
    numbering_.stamp(header, events);
    wire::writeHeader(datagram, header);
  }
  std::uint32_t events() const { return numbering_.eventsBefore(); }

 private:
  std::vector<std::uint32_t> buffer_;
  wire::DatagramNumbering numbering_;
};

struct Figures {
  int mtu = 0;
  std::size_t datagrams = 0;
  double bytes_per_tag = 0;
  double decode = 0;  // MTags/s
  double encode = 0;
};

Figures measureMtu(const std::vector<Tag>& tags, int mtu, const LinkBenchOptions& options,
                   std::uint64_t& checksum) {
  Figures figures;
  figures.mtu = mtu;
  const timestamp_t end = tags.back().time + 1;
  std::vector<double> encode_rates, decode_rates;
  const auto stream = std::make_unique<EncodedStream>(tags, 0, end, mtu);
  const std::size_t words = wire::wordsPerDatagram(mtu);
  for (int run = 0; run < options.runs; ++run) {
    ReusedBuffer sink(words);
    wire::Encoder encoder(words);
    const auto began = Clock::now();
    for (std::size_t i = 0; i < tags.size(); i += options.block_size) {
      encoder.encode(
          std::span<const Tag>(tags).subspan(i, std::min(options.block_size, tags.size() - i)),
          sink);
    }
    encoder.flush(sink);
    encode_rates.push_back(static_cast<double>(tags.size()) / secondsSince(began) * 1e-6);
    checksum += sink.events();
  }
  std::vector<Tag> block(options.block_size + wire::kMaxWords);
  decodeAll(*stream, block, options.block_size, checksum);  // touches the block once
  for (int run = 0; run < options.runs; ++run) {
    const auto began = Clock::now();
    const std::uint64_t decoded = decodeAll(*stream, block, options.block_size, checksum);
    decode_rates.push_back(static_cast<double>(decoded) / secondsSince(began) * 1e-6);
    if (decoded != tags.size()) throw std::logic_error("link bench: tags lost in decoding");
  }
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < stream->datagrams(); ++i) {
    bytes += wire::kHeaderBytes + 4 * std::size_t{stream->header(i).word_count};
  }
  figures.datagrams = stream->datagrams();
  figures.bytes_per_tag = static_cast<double>(bytes) / static_cast<double>(tags.size());
  figures.decode = median(decode_rates);
  figures.encode = median(encode_rates);
  return figures;
}

}  // namespace

int runLinkBench(const LinkBenchOptions& options) {
  const auto stream = makeAnnouncedBenchStream(options.tags);
  const double scan = measureBareScan(*stream, options.runs);
  std::uint64_t checksum = 0;
  std::vector<Figures> rows;
  for (int mtu : {9000, 4000, 1500}) rows.push_back(measureMtu(*stream, mtu, options, checksum));

  std::cout << std::fixed << "\n"
            << stream->size() << " tags, medians of " << options.runs
            << " runs, one core; decode: datagrams in memory into a reused block of "
            << options.block_size << " tags (in cache)\n"
            << "plain scan of the 16-byte tags from memory: " << std::setprecision(1) << scan
            << " MTags/s\n\n"
            << std::setw(6) << "MTU" << std::setw(11) << "datagrams" << std::setw(11) << "bytes/tag"
            << std::setw(16) << "decode MTags/s" << std::setw(8) << "ratio" << std::setw(16)
            << "encode MTags/s" << std::setw(8) << "ratio"
            << "\n";
  for (const Figures& f : rows) {
    std::cout << std::setw(6) << f.mtu << std::setw(11) << f.datagrams << std::setw(11)
              << std::setprecision(3) << f.bytes_per_tag << std::setw(16) << std::setprecision(1)
              << f.decode << std::setw(8) << std::setprecision(2) << f.decode / scan
              << std::setw(16) << std::setprecision(1) << f.encode << std::setw(8)
              << std::setprecision(2) << f.encode / scan << "\n";
  }
  if (checksum == 42) std::cout << "";  // keeps the loops observable
  if (!options.json.empty()) {
    nlohmann::json link = nlohmann::json::array();
    for (const Figures& f : rows) {
      link.push_back({{"mtu", f.mtu},
                      {"datagrams", f.datagrams},
                      {"bytes_per_tag", f.bytes_per_tag},
                      {"decode_mtags_per_s", f.decode},
                      {"decode_ratio_to_scan", f.decode / scan},
                      {"encode_mtags_per_s", f.encode},
                      {"encode_ratio_to_scan", f.encode / scan}});
    }
    const nlohmann::json json{{"tags", stream->size()},
                              {"block_size", options.block_size},
                              {"runs", options.runs},
                              {"scan_mtags_per_s", scan},
                              {"link", link}};
    writeJsonFile(options.json, json);
  }
  return 0;
}

}  // namespace tagflow::bench
