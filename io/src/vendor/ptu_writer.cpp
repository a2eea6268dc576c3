#include "tagflow/io/vendor/ptu_writer.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "tagflow/core/error.hpp"
#include "tagflow/version.hpp"

namespace tagflow {

namespace {

constexpr std::uint32_t kGenericT2 = 0x00010207;
constexpr std::uint64_t kWrap = std::uint64_t{1} << 25;  // ps of the 25-bit time field
constexpr std::uint32_t kSpecial = 1u << 31;
constexpr std::uint32_t kOverflowChannel = 0x3F;
constexpr std::uint64_t kMostOverflowsPerRecord = (std::uint64_t{1} << 25) - 1;
constexpr channel_t kInputs = 64;
constexpr channel_t kMarkerBits = 4;
constexpr std::size_t kBufferRecords = 1 << 16;

// One header entry: a 32-byte name, an index, a type and an 8-byte value.
struct Entry {
  std::uint8_t bytes[48] = {};
  Entry(const std::string& name, std::uint32_t type, std::uint64_t value, std::int32_t index = -1) {
    std::memcpy(bytes, name.data(), std::min<std::size_t>(name.size(), 31));
    std::memcpy(bytes + 32, &index, 4);
    std::memcpy(bytes + 36, &type, 4);
    std::memcpy(bytes + 40, &value, 8);
  }
};

std::uint64_t bitsOf(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, 8);
  return bits;
}

std::string randomGuid() {
  std::random_device device;
  std::uniform_int_distribution<int> hex(0, 15);
  std::string guid = "{";
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) guid += '-';
    guid += "0123456789ABCDEF"[hex(device)];
  }
  return guid + "}";
}

}  // namespace

PtuWriter::PtuWriter(std::string path, std::string comment, VendorChannelMap channels)
    : path_(std::move(path)), channels_(channels) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw IoError(fmt::format("cannot create '{}': {}", path_, std::strerror(errno)));
  }
  std::vector<std::uint8_t> header{'P', 'Q', 'T', 'T', 'T', 'R', 0, 0,
                                   '1', '.', '0', '.', '0', '0', 0, 0};
  const auto add = [&](const Entry& entry) {
    header.insert(header.end(), entry.bytes, entry.bytes + 48);
  };
  const auto addText = [&](const std::string& name, const std::string& text) {
    std::vector<std::uint8_t> payload(text.begin(), text.end());
    payload.resize((payload.size() / 8 + 1) * 8, 0);  // NUL-terminated, 8-byte aligned
    add(Entry(name, 0x4001FFFF, payload.size()));
    header.insert(header.end(), payload.begin(), payload.end());
  };
  const auto addInt = [&](const std::string& name, std::int64_t value) {
    add(Entry(name, 0x10000008, static_cast<std::uint64_t>(value)));
  };
  const auto addFloat = [&](const std::string& name, double value) {
    add(Entry(name, 0x20000008, bitsOf(value)));
  };
  const double days_since_1899 =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() /
          86400.0 +
      25569.0;
  addText("File_GUID", randomGuid());
  add(Entry("File_CreatingTime", 0x21000008, bitsOf(days_since_1899)));
  addText("File_Comment", comment);
  addText("CreatorSW_Name", "tagflow");
  addText("CreatorSW_Version", kVersion);
  addInt("Measurement_Mode", 2);
  addInt("Measurement_SubMode", 0);
  addText("HW_Type", "MultiHarp");
  addInt("HW_InpChannels", kInputs);
  addFloat("HW_BaseResolution", 1e-12);
  addInt("TTResultFormat_TTTRRecType", kGenericT2);
  addInt("TTResultFormat_BitsPerRecord", 32);
  addInt("MeasDesc_BinningFactor", 1);
  addInt("MeasDesc_Offset", 0);
  addFloat("MeasDesc_GlobalResolution", 1e-12);
  addFloat("MeasDesc_Resolution", 1e-12);
  acquisition_offset_ = header.size() + 40;
  addInt("MeasDesc_AcquisitionTime", 0);
  addInt("TTResult_SyncRate", 0);
  record_count_offset_ = header.size() + 40;
  addInt("TTResult_NumberOfRecords", 0);
  add(Entry("Header_End", 0xFFFF0008, 0));
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    const std::string reason = std::strerror(errno);
    std::fclose(file_);
    file_ = nullptr;
    throw IoError(fmt::format("writing the header of '{}' failed: {}", path_, reason));
  }
  buffer_.reserve(kBufferRecords);
}

PtuWriter::~PtuWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void PtuWriter::put(std::uint32_t word) {
  buffer_.push_back(word);
  if (buffer_.size() == kBufferRecords) flush();
}

void PtuWriter::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 4, buffer_.size(), file_) != buffer_.size()) {
    throw IoError(fmt::format("writing '{}' failed after {} records: {}", path_, records_,
                              std::strerror(errno)));
  }
  records_ += buffer_.size();
  buffer_.clear();
}

void PtuWriter::write(std::span<const Tag> tags) {
  if (file_ == nullptr) throw IoError(fmt::format("'{}' is already closed", path_));
  for (const Tag& tag : tags) {
    if (tag.type != TagType::TimeTag) {
      ++left_out_;
      continue;
    }
    if (tag.time < last_time_ || tag.time < 0) {
      throw InvalidArgument(fmt::format(
          "PTU export: a tag at {} ps after one at {} ps (valid: time-ordered tags at >= 0 ps)",
          tag.time, last_time_));
    }
    std::uint32_t head;
    const channel_t input = tag.channel - channels_.first_input;
    const channel_t bit = tag.channel - channels_.first_marker;
    if (tag.channel == channels_.sync) {
      head = kSpecial;
    } else if (input >= 0 && input < kInputs) {
      head = static_cast<std::uint32_t>(input) << 25;
    } else if (bit >= 0 && bit < kMarkerBits) {
      head = kSpecial | (std::uint32_t{1} << bit) << 25;
    } else {
      throw InvalidArgument(fmt::format(
          "PTU export: channel {} has no PTU record (valid: inputs {}..{}, the sync {}, markers "
          "{}..{})",
          tag.channel, channels_.first_input, channels_.first_input + kInputs - 1, channels_.sync,
          channels_.first_marker, channels_.first_marker + kMarkerBits - 1));
    }
    const auto time = static_cast<std::uint64_t>(tag.time);
    std::uint64_t owed = time / kWrap - overflows_;
    while (owed > 0) {
      const std::uint64_t now = std::min(owed, kMostOverflowsPerRecord);
      put(kSpecial | (kOverflowChannel << 25) | static_cast<std::uint32_t>(now));
      overflows_ += now;
      owed -= now;
    }
    put(head | static_cast<std::uint32_t>(time % kWrap));
    last_time_ = tag.time;
  }
}

void PtuWriter::close(timestamp_t end_time) {
  if (file_ == nullptr) return;
  flush();
  const std::int64_t acquisition_ms =
      (std::max<timestamp_t>(end_time, 0) + 999'999'999) / 1'000'000'000;
  const auto patch = [&](std::uint64_t offset, std::int64_t value) {
    return std::fseek(file_, static_cast<long>(offset), SEEK_SET) == 0 &&
           std::fwrite(&value, 8, 1, file_) == 1;
  };
  const bool patched = patch(record_count_offset_, static_cast<std::int64_t>(records_)) &&
                       patch(acquisition_offset_, acquisition_ms);
  const bool flushed = std::fflush(file_) == 0;
  const int saved = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!patched || !flushed || !closed) {
    throw IoError(fmt::format("writing '{}' failed: {}", path_, std::strerror(saved)));
  }
}

}  // namespace tagflow
