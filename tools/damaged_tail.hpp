// DamagedTailGuard: a source's stream up to a damaged tail. A file cut inside a record (a
// recording killed while it wrote, a full disk, a copy that stopped) makes its source throw
// TruncatedData after every complete record; read through the guard, the stream ends there
// instead and the message, which names the file and the byte offset, is kept. `tagflow
// convert`, `run` and `record` so finish their output with everything before the tail, print
// the message and exit with kDamagedTailExit. Every other error passes through unchanged.
#pragma once

#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow::cli {

// The exit status of a command whose input ended in a damaged tail: its output is complete
// and holds everything before the tail.
inline constexpr int kDamagedTailExit = 3;

class DamagedTailGuard : public Source {
 public:
  explicit DamagedTailGuard(Source& source) : source_(source) {}

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return source_.maxBlockTags(); }
  std::vector<channel_t> channels() const override { return source_.channels(); }
  std::string describe() const override { return source_.describe(); }
  void requestStop() override { source_.requestStop(); }
  std::optional<StreamSpan> timeSpan() override { return source_.timeSpan(); }
  bool seekTo(timestamp_t time) override { return source_.seekTo(time); }
  bool startsInOverflow() const override { return source_.startsInOverflow(); }

  // The source's message about its damaged tail, or "" when it ended cleanly (so far).
  const std::string& damage() const { return damage_; }
  // Prints the damage to stderr, saying what holds everything before it; returns
  // kDamagedTailExit, or 0 when there was none.
  int report(const std::string& kept_in) const;

 private:
  Source& source_;
  std::string damage_;
};

}  // namespace tagflow::cli
