// The record layout and channel numbers follow qutools' tdcbase.h (TDC_writeTimestamps); the
// header's signature is the one ETA (timetag/ETA) recognises quTAG binary files by.
#include "tagflow/io/vendor/qutag.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/header_bytes.hpp"

namespace tagflow {

namespace {

constexpr std::size_t kHeaderBytes = 40;
constexpr std::size_t kRecordBytes = 10;
constexpr std::uint8_t kSignature[4] = {0x87, 0xB3, 0x91, 0xFA};
constexpr std::uint16_t kLastInput = 31;
constexpr std::uint16_t kFirstRising = 100;
constexpr std::uint16_t kTick = 104;
constexpr std::uint16_t kFirstFalling = 105;
constexpr std::uint16_t kLastFalling = 108;
constexpr std::uint64_t kStampLimit = std::numeric_limits<std::int64_t>::max();
constexpr timestamp_t kNoBound = std::numeric_limits<timestamp_t>::min();  // before any stamp

class QutagDecoder final : public RecordDecoder {
 public:
  QutagDecoder(VendorChannelMap channels, timestamp_t window)
      : channels_(channels), window_(window) {}

  std::size_t recordBytes() const override { return kRecordBytes; }
  timestamp_t futureBound() const override { return bound_; }

  // Each stamp is compared with the one before, which starts at what the earlier records
  // allow: one comparison in order, the exact checks and the sort at the end only for the
  // stamps out of order.
  Tag* decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
              timestamp_t floor, Tag* out) override {
    // Over locals: a tag stored through `out` could alias a member, which the compiler would
    // then load again after every store.
    timestamp_t latest = latest_;
    timestamp_t last = std::max(floor, bound_);
    bool unordered = false;
    const channel_t first_input = channels_.first_input;
    Tag* const begin = out;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint8_t* record = records + i * kRecordBytes;
      std::uint64_t stamp;
      std::uint16_t raw_channel;
      std::memcpy(&stamp, record, 8);  // little-endian files on a little-endian host
      std::memcpy(&raw_channel, record + 8, 2);
      // A block ends one past its last tag: 2^63 - 1 ps itself is out of reach.
      if (stamp >= kStampLimit) [[unlikely]] {
        throw DataError(fmt::format("record {}: timestamp {} ps is invalid (valid: below 2^63 - 1)",
                                    first_index + i, stamp));
      }
      const auto time = static_cast<timestamp_t>(stamp);
      if (time < last) [[unlikely]] {
        // The bound promised that no later record is earlier; what was handed out is below it.
        const timestamp_t bound = i > 0 || bound_ != kNoBound ? latest - window_ : kNoBound;
        const timestamp_t earliest = std::max(floor, bound);
        if (time < earliest) throwDisorder(first_index + i, time, earliest);
        unordered = true;
      }
      storeTimeTag(out++,
                   timeTagHead(raw_channel <= kLastInput ? first_input + raw_channel
                                                         : channelOf(raw_channel, first_index + i)),
                   time);
      last = time;
      latest = std::max(latest, time);  // stamps are >= 0 and latest_ starts at 0
    }
    if (count > 0) {
      latest_ = latest;
      bound_ = latest - window_;
    }
    if (unordered) sortRun(begin, out);
    return out;
  }

 private:
  // Marker inputs 0..3 rise at 100..103 and fall at 105..108; the millisecond tick (104) is
  // marker 4.
  channel_t channelOf(std::uint16_t raw, std::uint64_t index) const {
    if (raw <= kLastInput) return channels_.first_input + raw;
    if (raw >= kFirstRising && raw <= kTick) return channels_.first_marker + (raw - kFirstRising);
    if (raw >= kFirstFalling && raw <= kLastFalling) {
      return -(channels_.first_marker + (raw - kFirstFalling));
    }
    throw DataError(fmt::format(
        "record {}: channel {} is not a quTAG channel (valid: 0..{} inputs, {}..{} markers, "
        "{} the millisecond tick)",
        index, raw, kLastInput, kFirstRising, kLastFalling, kTick));
  }

  VendorChannelMap channels_;
  timestamp_t window_;
  timestamp_t latest_ = 0;  // the latest stamp so far; 0, which none is below, before the first
  timestamp_t bound_ = kNoBound;
};

}  // namespace

VendorFile openQutagFile(const std::string& path, VendorChannelMap channels,
                         timestamp_t reorder_window_ps) {
  if (reorder_window_ps < 0) {
    throw InvalidArgument(
        fmt::format("quTAG reorder_window_ps {} is invalid (valid: >= 0)", reorder_window_ps));
  }
  HeaderBytes in(path);
  const auto header = in.bytes(kHeaderBytes, "the 40-byte quTAG header");
  if (std::memcmp(header.data(), kSignature, sizeof kSignature) != 0) {
    throw DataError(fmt::format(
        "'{}' is not a quTAG binary file: it begins with {:02X} {:02X} {:02X} {:02X} at byte "
        "offset 0 (valid: 87 B3 91 FA)",
        path, header[0], header[1], header[2], header[3]));
  }
  VendorFile file;
  file.path = path;
  file.format = "quTAG binary";
  file.file_size = in.fileSize();
  file.data_offset = kHeaderBytes;
  file.records = (file.file_size - kHeaderBytes) / kRecordBytes;
  std::string rest;
  for (std::size_t i = sizeof kSignature; i < kHeaderBytes; ++i) {
    rest += fmt::format("{:02X}", header[i]);
  }
  file.header.add("signature", "hex", "87B391FA");
  file.header.add("header bytes 4-39", "hex (undocumented)", rest);
  file.header.add("time unit", "text", "1 ps");
  file.header.add("reorder window", "int (ps)", std::to_string(reorder_window_ps));
  file.decoder = std::make_unique<QutagDecoder>(channels, reorder_window_ps);
  return file;
}

}  // namespace tagflow
