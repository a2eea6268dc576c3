#include "write_fully.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace tagflow {

int writeFully(int fd, std::span<iovec> pieces) {
  std::size_t first = 0;
  for (;;) {
    while (first < pieces.size() && pieces[first].iov_len == 0) ++first;
    if (first == pieces.size()) return 0;
    const ssize_t wrote =
        ::writev(fd, pieces.data() + first, static_cast<int>(pieces.size() - first));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return wrote == 0 ? ENOSPC : errno;
    auto done = static_cast<std::size_t>(wrote);
    for (; first < pieces.size() && done >= pieces[first].iov_len; ++first) {
      done -= pieces[first].iov_len;
    }
    if (first < pieces.size()) {
      pieces[first].iov_base = static_cast<std::uint8_t*>(pieces[first].iov_base) + done;
      pieces[first].iov_len -= done;
    }
  }
}

}  // namespace tagflow
