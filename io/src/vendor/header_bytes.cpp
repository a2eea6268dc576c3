#include "tagflow/io/vendor/header_bytes.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "tagflow/core/error.hpp"

namespace tagflow {

HeaderBytes::HeaderBytes(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    throw IoError(fmt::format("cannot open '{}': {}", path_, std::strerror(errno)));
  }
  struct stat info {};
  if (fstat(fileno(file_), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file_);
    throw IoError(fmt::format("'{}' is not a readable regular file", path_));
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
}

HeaderBytes::~HeaderBytes() {
  if (file_ != nullptr) std::fclose(file_);
}

std::span<const std::uint8_t> HeaderBytes::bytes(std::size_t count, const char* what) {
  if (count > size_ - std::min(offset_, size_)) {
    throw DataError(
        fmt::format("'{}' ends at byte {} inside the header: {} needs {} bytes from byte offset {}",
                    path_, size_, what, count, offset_));
  }
  buffer_.resize(count);
  if (count > 0 && std::fread(buffer_.data(), 1, count, file_) != count) {
    throw IoError(fmt::format("reading '{}' failed at byte offset {}: {}", path_, offset_,
                              std::strerror(errno)));
  }
  offset_ += count;
  return buffer_;
}

std::int32_t HeaderBytes::int32(const char* what) {
  std::int32_t value;
  std::memcpy(&value, bytes(4, what).data(), 4);
  return value;
}

std::uint32_t HeaderBytes::uint32(const char* what) {
  std::uint32_t value;
  std::memcpy(&value, bytes(4, what).data(), 4);
  return value;
}

float HeaderBytes::float32(const char* what) {
  float value;
  std::memcpy(&value, bytes(4, what).data(), 4);
  return value;
}

double HeaderBytes::float64(const char* what) {
  double value;
  std::memcpy(&value, bytes(8, what).data(), 8);
  return value;
}

std::string HeaderBytes::text(std::size_t count, const char* what) {
  const auto raw = bytes(count, what);
  std::string value;
  for (std::uint8_t byte : raw) {
    if (byte == 0) break;
    value += static_cast<char>(byte);
  }
  return value;
}

void HeaderBytes::skip(std::uint64_t count, const char* what) {
  if (count > size_ - std::min(offset_, size_)) {
    throw DataError(
        fmt::format("'{}' ends at byte {} inside the header: {} needs {} bytes from "
                    "byte offset {}",
                    path_, size_, what, count, offset_));
  }
  if (std::fseek(file_, static_cast<long>(offset_ + count), SEEK_SET) != 0) {
    throw IoError(fmt::format("seeking in '{}' failed: {}", path_, std::strerror(errno)));
  }
  offset_ += count;
}

}  // namespace tagflow
