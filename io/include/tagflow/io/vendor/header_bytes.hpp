// HeaderBytes: reads a vendor file's header front to back, a field at a time, knowing the file
// size and the offset reached, so that a header cut short is reported as a DataError naming
// the file, the byte offset and what was being read there. For the readers of io/vendor/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace tagflow {

class HeaderBytes {
 public:
  // Throws IoError when `path` cannot be opened or is not a regular file.
  explicit HeaderBytes(std::string path);
  ~HeaderBytes();
  HeaderBytes(const HeaderBytes&) = delete;
  HeaderBytes& operator=(const HeaderBytes&) = delete;

  // The next `count` bytes (valid until the next call); DataError when the file ends first.
  std::span<const std::uint8_t> bytes(std::size_t count, const char* what);
  // Little-endian numbers.
  std::int32_t int32(const char* what);
  std::uint32_t uint32(const char* what);
  float float32(const char* what);
  double float64(const char* what);
  // `count` bytes of text up to the first NUL.
  std::string text(std::size_t count, const char* what);
  void skip(std::uint64_t count, const char* what);

  std::uint64_t offset() const { return offset_; }
  std::uint64_t fileSize() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace tagflow
