// MergedSource: several streams as one, such as the recordings of several time taggers on one
// time base. Input k's tags are shifted by its time offset, and its channels by its channel
// offset (rising edge c becomes c + offset, falling edge -c becomes -(c + offset), so edges
// stay paired). The merged stream holds every shifted tag in time order (at equal times in
// the canonical order, then by input) and spans the union of the shifted inputs' spans; with
// overlap_only, their common span, the tags outside it left out. An input's channels are
// silent outside its own span. Overflow intervals are the union of the inputs' (overlapping
// ones become one interval); an input that ends inside one closes it at its end, an overlap
// that begins inside one begins with an OverflowBegin, and a merged stream that ends inside
// one ends open, as a recording that ends inside one does. Missed-event counts pass with
// their channel shifted. Blocks hold at most block_size tags and never split tags of one time
// (a longer run of equal times stays whole). An input that holds no stream adds nothing; with
// overlap_only the merged stream is then empty.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

struct MergedInput {
  std::unique_ptr<Source> source;
  channel_t channel_offset = 0;
  timestamp_t time_offset = 0;
};

inline constexpr std::size_t kDefaultMergedBlockSize = 32768;

class MergedSource : public Source {
 public:
  // Throws InvalidArgument for no inputs, a null source, a block size outside 1..2^20, an
  // offset outside +-2^62 ps or one that moves a known channel out of 1..2^27-1 (or across
  // zero). next() throws DataError naming the input, the tag and the offset when a shifted
  // time or channel leaves those ranges, and passes on its inputs' errors.
  MergedSource(std::vector<MergedInput> inputs, bool overlap_only = false,
               std::size_t block_size = kDefaultMergedBlockSize);

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return block_size_; }
  // The shifted channels of all inputs when every input knows its own; empty otherwise.
  std::vector<channel_t> channels() const override;
  std::string describe() const override;
  void requestStop() override;

 private:
  struct Lane {
    MergedInput input;
    BlockBuffer buffer;
    std::vector<Tag> pending;  // shifted tags read and not yet merged, from `head` on
    std::size_t head = 0;
    timestamp_t begin = 0;    // the shifted stream's begin, once its first block is read
    timestamp_t covered = 0;  // the shifted end of the blocks read so far
    bool started = false;
    bool ended = false;
    bool read_in_overflow = false;    // after the tags read so far
    bool merged_in_overflow = false;  // after the tags merged so far
  };

  void start();
  // Reads the lane's next block into `pending`; false once its stream has ended.
  bool readLane(std::size_t index);
  Tag shifted(const Lane& lane, std::size_t index, const Tag& tag) const;
  // The time before which every input has delivered its tags; reads the inputs that lag
  // behind `position_` until it is later, or the stream's end is known.
  timestamp_t completeUntil();
  // Merges the lanes' tags before `until` into `staged_`, following the overflow intervals.
  void mergeUntil(timestamp_t until);
  // Stages the OverflowBegin of an overflow the merged stream begins inside, once.
  void announceBegin();

  std::vector<Lane> lanes_;
  bool overlap_only_;
  std::size_t block_size_;
  bool started_ = false;
  bool empty_ = false;        // no input holds a stream (or, with overlap_only, one does not)
  timestamp_t begin_ = 0;     // the merged stream's begin
  timestamp_t position_ = 0;  // where the next block begins
  std::vector<Tag> staged_;   // merged tags before `staged_until_`, from `staged_head_` on
  std::size_t staged_head_ = 0;
  timestamp_t staged_until_ = 0;
  bool at_end_ = false;           // staged_until_ is the stream's end
  int overflow_depth_ = 0;        // inputs inside an overflow interval
  bool begin_announced_ = false;  // the state at begin_ has been staged
};

}  // namespace tagflow
