#include "static_files.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace tagflow::serve_detail {

namespace {

constexpr std::uintmax_t kMaxFileBytes = 32u << 20;

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string contentType(const std::filesystem::path& path) {
  static const std::map<std::string, std::string> types = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".png", "image/png"},
      {".svg", "image/svg+xml"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"}};
  const auto it = types.find(path.extension().string());
  return it == types.end() ? "application/octet-stream" : it->second;
}

bool isInside(const std::filesystem::path& file, const std::filesystem::path& folder) {
  auto f = file.begin();
  for (auto d = folder.begin(); d != folder.end(); ++d, ++f) {
    if (f == file.end() || *f != *d) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> percentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hexValue(text[i + 1]);
    const int low = hexValue(text[i + 2]);
    if (high < 0 || low < 0 || (high == 0 && low == 0)) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

std::optional<StaticFile> readStaticFile(const std::string& root, std::string_view target) {
  const std::optional<std::string> decoded = percentDecode(target);
  if (!decoded || decoded->empty() || decoded->front() != '/') return std::nullopt;
  if (decoded->find("..") != std::string::npos || decoded->find('\\') != std::string::npos ||
      decoded->find('\0') != std::string::npos) {
    return std::nullopt;
  }
  const std::string relative = *decoded == "/" ? "index.html" : decoded->substr(1);
  std::error_code error;
  const std::filesystem::path folder = std::filesystem::canonical(root, error);
  if (error) return std::nullopt;
  const std::filesystem::path file = std::filesystem::canonical(folder / relative, error);
  if (error || !isInside(file, folder) || !std::filesystem::is_regular_file(file, error) ||
      std::filesystem::file_size(file, error) > kMaxFileBytes || error) {
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  StaticFile out;
  out.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  out.content_type = contentType(file);
  return out;
}

}  // namespace tagflow::serve_detail
