// Source: produces the stream, one block at a time, in time order. `next` fills the buffer
// with the tags of [begin_time, end_time) and returns false once the stream has ended (the
// buffer is then untouched). The first block's begin_time is the stream's start; every
// further block must begin where the previous one ended. A source is used by one thread
// (requestStop() excepted).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tagflow/core/tag_block.hpp"

namespace tagflow {

// The stream time a source covers: [begin, end).
struct StreamSpan {
  timestamp_t begin = 0;
  timestamp_t end = 0;
};

class Source {
 public:
  virtual ~Source() = default;

  virtual bool next(BlockBuffer& out) = 0;

  // Largest number of tags `next` puts into `storage`; the pool reserves this much.
  virtual std::size_t maxBlockTags() const = 0;

  // The physical channels the stream can hold, if the source knows them; empty when it does
  // not (the graph then accepts any channel below the virtual range).
  virtual std::vector<channel_t> channels() const { return {}; }

  // A short human-readable description of what the source produces and how it is configured.
  virtual std::string describe() const = 0;

  // Asks a source that waits (for datagrams, for a pace) to stop waiting and end its stream
  // soon; safe from any thread. MeasurementGraph::requestStop() calls it, so that a run whose
  // source has nothing to hand out still ends. Sources that never wait ignore it.
  virtual void requestStop() {}

  // Seekable sources (a recording with a time index, memory) know the stream time they cover
  // without reading the stream, and can start it at the block that holds `time` (before the
  // first next(); a time before the stream starts it at its beginning). The others return
  // nullopt and false; a range run then reads them from the start.
  virtual std::optional<StreamSpan> timeSpan() { return std::nullopt; }
  virtual bool seekTo(timestamp_t /*time*/) { return false; }
  // After seekTo(): the stream begins inside an overflow interval that began before it, so the
  // measurements start in that state.
  virtual bool startsInOverflow() const { return false; }
};

}  // namespace tagflow
