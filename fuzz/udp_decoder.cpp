// libFuzzer target: any bytes as one received datagram, through the header check and the
// decoder, as the UDP source reads them. Beyond not crashing (ASan, UBSan), what the decoder
// accepts must be well formed: no more records than words, times never going back and never
// before the base time, the special index listing exactly the non-TimeTag records, the event
// count matching the records; and it must survive being encoded and decoded again unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "tagflow/io/udp/wire.hpp"

using namespace tagflow;

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

class Collect : public wire::DatagramSink {
 public:
  std::uint32_t* openDatagram() override { return buffer_.data(); }
  void closeDatagram(std::uint32_t* datagram, const wire::Header& facts,
                     std::uint32_t /*events*/) override {
    wire::Header header = facts;
    const auto* bytes = reinterpret_cast<const std::byte*>(datagram + wire::kHeaderWords);
    std::vector<Tag> out(facts.word_count);
    const wire::Decoded decoded = wire::decodeWords(header, bytes, out.data());
    require(decoded.status == wire::Status::Ok);
    tags.insert(tags.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(decoded.tags));
  }
  std::vector<Tag> tags;

 private:
  std::vector<std::uint32_t> buffer_ =
      std::vector<std::uint32_t>(wire::kHeaderWords + wire::kMaxWords);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy sized exactly: reading one byte past the datagram is then a reported error.
  const std::vector<std::byte> datagram(reinterpret_cast<const std::byte*>(data),
                                        reinterpret_cast<const std::byte*>(data) + size);
  wire::Header header;
  if (wire::parseHeader(datagram, header) != wire::Status::Ok) return 0;
  require(datagram.size() == wire::kHeaderBytes + 4 * std::size_t{header.word_count});
  std::vector<Tag> out(header.word_count);
  std::vector<std::uint32_t> special;
  const wire::Decoded decoded =
      wire::decodeWords(header, datagram.data() + wire::kHeaderBytes, out.data(), &special, 0);
  if (decoded.status != wire::Status::Ok) return 0;

  require(decoded.tags <= header.word_count);
  std::uint64_t events = 0;
  std::vector<std::uint32_t> expected_special;
  for (std::size_t i = 0; i < decoded.tags; ++i) {
    const Tag& tag = out[i];
    require(tag.time >= header.base_time);
    if (i > 0) require(tag.time >= out[i - 1].time);
    require(static_cast<std::uint8_t>(tag.type) <= kMaxTagType);
    if (tag.type != TagType::TimeTag) expected_special.push_back(static_cast<std::uint32_t>(i));
    if (tag.type == TagType::TimeTag) ++events;
    if (tag.type == TagType::MissedEvents) events += tag.missed_events;
  }
  require(special == expected_special);
  require(events == decoded.events);
  if (decoded.tags > 0) require(decoded.last_time == out[decoded.tags - 1].time);

  // The encoder starts outside an overflow; a datagram that starts inside one is not a
  // stream on its own.
  if ((header.flags & wire::kFlagInOverflow) != 0 || decoded.tags == 0) return 0;
  const std::span<const Tag> records(out.data(), decoded.tags);
  Collect collect;
  wire::Encoder encoder(wire::kMaxWords);
  encoder.encode(records, collect);
  encoder.flush(collect);
  require(collect.tags.size() == records.size());
  for (std::size_t i = 0; i < records.size(); ++i) require(collect.tags[i] == records[i]);
  return 0;
}
