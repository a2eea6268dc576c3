// The page's files: a request path is mapped into the web folder and nowhere else. A path with
// "..", a backslash, a NUL or bad %-escapes is refused before it touches the file system; the
// resolved file must still lie inside the folder once links are followed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tagflow::serve_detail {

struct StaticFile {
  std::string body;
  std::string content_type;
};

// `target` is the request path without its query ("/", "/app.js"). nullopt when the path is
// refused or names no regular file inside `root`.
std::optional<StaticFile> readStaticFile(const std::string& root, std::string_view target);

// %XX-decodes a URL component; nullopt for a malformed escape or an encoded NUL.
std::optional<std::string> percentDecode(std::string_view text);

}  // namespace tagflow::serve_detail
