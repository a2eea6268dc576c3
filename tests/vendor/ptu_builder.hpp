// Writes small PTU files for tests: a tagged header of chosen entries (any type, including
// ones tagflow does not know), then raw 32-bit records, so that every record type, overflow
// and marker can be checked against tags worked out by hand.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace tagflow::test {

class PtuBuilder {
 public:
  PtuBuilder() {
    bytes_.assign({'P', 'Q', 'T', 'T', 'T', 'R', 0, 0, '1', '.', '0', '.', '0', '0', 0, 0});
  }

  PtuBuilder& integer(const std::string& name, std::int64_t value, std::int32_t index = -1) {
    return entry(name, index, 0x10000008, bitsOf(value));
  }
  PtuBuilder& real(const std::string& name, double value) {
    return entry(name, -1, 0x20000008, bitsOf(value));
  }
  PtuBuilder& text(const std::string& name, const std::string& value) {
    std::vector<std::uint8_t> payload(value.begin(), value.end());
    payload.resize((payload.size() / 8 + 1) * 8, 0);
    entry(name, -1, 0x4001FFFF, payload.size());
    bytes_.insert(bytes_.end(), payload.begin(), payload.end());
    return *this;
  }
  PtuBuilder& raw(const std::string& name, std::uint32_t type, std::uint64_t value) {
    return entry(name, -1, type, value);
  }
  // The usual entries of a file of `record_type` and its resolutions, then Header_End.
  PtuBuilder& standard(std::uint32_t record_type, double global_resolution, double resolution,
                       std::int64_t records, std::int64_t acquisition_ms = 1) {
    integer("TTResultFormat_TTTRRecType", record_type);
    integer("TTResult_NumberOfRecords", records);
    real("MeasDesc_GlobalResolution", global_resolution);
    real("MeasDesc_Resolution", resolution);
    integer("MeasDesc_AcquisitionTime", acquisition_ms);
    return end();
  }
  PtuBuilder& end() { return entry("Header_End", -1, 0xFFFF0008, 0); }
  PtuBuilder& records(const std::vector<std::uint32_t>& words) {
    for (std::uint32_t word : words) {
      for (int b = 0; b < 4; ++b) bytes_.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
    }
    return *this;
  }
  PtuBuilder& bytes(std::size_t count) {
    bytes_.resize(bytes_.size() + count, 0xAB);
    return *this;
  }
  void write(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes_.data()),
              static_cast<std::streamsize>(bytes_.size()));
  }
  std::size_t size() const { return bytes_.size(); }

 private:
  template <class T>
  static std::uint64_t bitsOf(T value) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof value);
    return bits;
  }
  PtuBuilder& entry(const std::string& name, std::int32_t index, std::uint32_t type,
                    std::uint64_t value) {
    std::uint8_t record[48] = {};
    std::memcpy(record, name.data(), std::min<std::size_t>(name.size(), 31));
    std::memcpy(record + 32, &index, 4);
    std::memcpy(record + 36, &type, 4);
    std::memcpy(record + 40, &value, 8);
    bytes_.insert(bytes_.end(), record, record + 48);
    return *this;
  }

  std::vector<std::uint8_t> bytes_;
};

}  // namespace tagflow::test
