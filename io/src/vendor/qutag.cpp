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

class QutagDecoder final : public RecordDecoder {
 public:
  QutagDecoder(VendorChannelMap channels, timestamp_t window)
      : channels_(channels), window_(window) {}

  std::size_t recordBytes() const override { return kRecordBytes; }
  timestamp_t futureBound() const override { return bound_; }

  void decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
              timestamp_t floor, std::vector<Tag>& out) override {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint8_t* record = records + i * kRecordBytes;
      const std::uint64_t index = first_index + i;
      std::uint64_t stamp;
      std::uint16_t raw_channel;
      std::memcpy(&stamp, record, 8);  // little-endian files on a little-endian host
      std::memcpy(&raw_channel, record + 8, 2);
      if (stamp > static_cast<std::uint64_t>(std::numeric_limits<timestamp_t>::max())) {
        throw DataError(
            fmt::format("record {}: timestamp {} ps is invalid (valid: below 2^63)", index, stamp));
      }
      const auto time = static_cast<timestamp_t>(stamp);
      // The bound promised that no later record is earlier; what was handed out is below it.
      const timestamp_t earliest = std::max(floor, bound_);
      if (time < earliest) throwDisorder(index, time, earliest);
      out.push_back(makeTimeTag(channelOf(raw_channel, index), time));
      if (time > latest_) {
        latest_ = time;
        bound_ = latest_ - window_;  // stamps are >= 0: no underflow
      }
    }
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
  timestamp_t latest_ = std::numeric_limits<timestamp_t>::min();
  timestamp_t bound_ = std::numeric_limits<timestamp_t>::min();
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
