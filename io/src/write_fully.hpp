// writeFully: writes every byte of `pieces` to the descriptor, in as few calls as the system
// allows, going on after short writes and interruptions. Returns 0, or the errno that stopped
// it (ENOSPC for a write that made no progress); `pieces` is consumed as it goes.
#pragma once

#include <sys/uio.h>

#include <span>

namespace tagflow {

int writeFully(int fd, std::span<iovec> pieces);

}  // namespace tagflow
