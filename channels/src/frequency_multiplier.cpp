#include "tagflow/channels/frequency_multiplier.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <string>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

namespace {

// Most tags the general path may add to one block (256 MiB): every input adds `multiplier`,
// so a dense block times a large multiplier is refused instead of exhausting memory.
constexpr std::size_t kMaxAddedPerBlock = std::size_t{1} << 24;

}  // namespace

const ParameterSchema& FrequencyMultiplier::schema() {
  static const ParameterSchema schema(
      "FrequencyMultiplier",
      "a periodic channel at multiplier times its rate (undoes an event divider)",
      {ParameterSpec::channel("input_channel").help("periodic channel"),
       ParameterSpec::integer("multiplier").atLeast(1).atMost(1'000'000).help("factor")});
  return schema;
}

FrequencyMultiplier::FrequencyMultiplier(std::string name, channel_t input, std::int64_t multiplier)
    : VirtualChannel(
          schema(), std::move(name),
          Parameters{{"input_channel", std::int64_t{input}}, {"multiplier", multiplier}}),
      input_(input),
      multiplier_(multiplier) {
  if (input == CHANNEL_UNUSED) {
    throw InvalidArgument("FrequencyMultiplier '" + this->name() + "': input_channel is unused");
  }
}

void FrequencyMultiplier::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  // The input's times first, branch-free; the loop below then only sees input tags.
  if (inputs_.size() < time_tags.size()) inputs_.resize(time_tags.size());
  std::size_t count = 0;
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    inputs_[count] = tag.time;
    count += tag.channel == input_ ? 1 : 0;
  }
  const std::size_t added = emitted.size() + count * static_cast<std::size_t>(multiplier_);
  if (added > kMaxAddedPerBlock) {
    throw DataError("FrequencyMultiplier '" + name() + "': " + std::to_string(count) +
                    " inputs in one block times multiplier " + std::to_string(multiplier_) +
                    " add " + std::to_string(added) + " tags (valid: at most " +
                    std::to_string(kMaxAddedPerBlock) +
                    " per block; give the source a smaller block_size)");
  }
  for (std::size_t i = 0; i < count; ++i) {
    emitOwed(inputs_[i], emitted);
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, inputs_[i]});
    predictAfter(inputs_[i]);
  }
}

void FrequencyMultiplier::predictAfter(timestamp_t time) {
  // Predictions at or after this input are superseded (overwritten, not cleared and refilled:
  // the vector keeps its size from one period to the next).
  if (!last_input_ || multiplier_ == 1) {
    owed_.clear();
  } else {
    // time + floor(k * period / m), k = 1 .. m - 1, without overflowing k * period and with
    // one division: the fractional parts (rest / m each step) add up in `carried`.
    const timestamp_t period = time - *last_input_;
    const timestamp_t whole = period / multiplier_;
    const timestamp_t rest = period % multiplier_;
    owed_.resize(static_cast<std::size_t>(multiplier_ - 1));
    timestamp_t prediction = time;
    timestamp_t carried = 0;
    for (timestamp_t& owed : owed_) {
      prediction += whole;
      carried += rest;
      if (carried >= multiplier_) {
        carried -= multiplier_;
        ++prediction;
      }
      owed = prediction;
    }
  }
  last_input_ = time;
}

std::size_t FrequencyMultiplier::transcribeRoom(const TagBlock& block) const {
  return multiplier_ <= kLargestFastMultiplier ? kMaxTranscribeRoom * block.tags.size() : 0;
}

Tag* FrequencyMultiplier::transcribe(const TagBlock& block, Tag* out) {
  switch (multiplier_) {
    case 1:
      return transcribeWith<1>(block, out);
    case 2:
      return transcribeWith<2>(block, out);
    case 3:
      return transcribeWith<3>(block, out);
    case 4:
      return transcribeWith<4>(block, out);
    case 5:
      return transcribeWith<5>(block, out);
    case 6:
      return transcribeWith<6>(block, out);
    case 7:
      return transcribeWith<7>(block, out);
    default:
      return transcribeWith<8>(block, out);
  }
}

namespace {

constexpr timestamp_t kNever = std::numeric_limits<timestamp_t>::max();

// Which of the `Lanes` `times` are before `time`: bit j for times[j].
template <std::size_t Lanes>
unsigned earlierLanes(const timestamp_t* times, timestamp_t time) {
  unsigned earlier = 0;
#if defined(__AVX2__)
  const __m256i now = _mm256_set1_epi64x(time);
  for (std::size_t lane = 0; lane < Lanes; lane += 4) {
    const __m256i later =
        _mm256_cmpgt_epi64(now, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(times + lane)));
    earlier |= static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(later))) << lane;
  }
#else
  for (std::size_t lane = 0; lane < Lanes; ++lane) {
    earlier |= (times[lane] < time ? 1u : 0u) << lane;
  }
#endif
  return earlier;
}

// sizeof(Tag) times the number of bits set in each mask of `Lanes` bits: the bytes of output
// that the lanes found earlier take up.
template <std::size_t Lanes>
constexpr auto kMaskBytes = [] {
  std::array<std::uint8_t, std::size_t{1} << Lanes> bytes{};
  for (std::size_t mask = 0; mask < bytes.size(); ++mask) {
    bytes[mask] = static_cast<std::uint8_t>(std::popcount(mask) * sizeof(Tag));
  }
  return bytes;
}();

// The bytes of output that the `times` before `time` take up, looked up in `mask_bytes`
// (kMaskBytes<Lanes>): a load, where a count would take a population count and a shift, both on
// the arithmetic ports that bound the loop.
template <std::size_t Lanes>
std::uint64_t bytesBefore(const timestamp_t* times, timestamp_t time,
                          const std::uint8_t* mask_bytes) {
  return mask_bytes[earlierLanes<Lanes>(times, time)];
}

template <class Row>
void setRowTime(Row& row, std::size_t index, timestamp_t time) {
  row.times[index] = time;
  row.tags[index].time = time;
}

}  // namespace

template <std::size_t Lanes>
std::vector<FrequencyMultiplier::PredictionRow<Lanes>>& FrequencyMultiplier::preparedRows(
    PredictionRows<Lanes>& rows) const {
  const std::uint64_t header = timeTagHeader(outputChannel());
  if (rows.rows.size() == kChunk + 1 && rows.header == header) return rows.rows;
  rows.rows.resize(kChunk + 1);
  rows.header = header;
  for (PredictionRow<Lanes>& row : rows.rows) {
    for (Tag& tag : row.tags) storeTimeTag(&tag, header, kNever);
  }
  return rows.rows;
}

// In chunks that stay in the first-level cache, three passes without a data-dependent branch:
// the chunk's inputs are gathered; each input's output (its repeat and the predictions of its
// period) is written into a row of its own, row 0 holding what is still owed; then one pass
// copies the input tags and, before each, those of the current row's tags that are due (earlier
// than it, so the generated tags stay behind the input tags of their time), and moves to the
// next row at each input of the multiplied channel, which drops the predictions of the row not
// yet due. A compile-time multiplier turns the divisions into multiplications. Gives up, with
// the state as it was, when the output could outgrow the room or two inputs share a time (the
// earlier one's repeat would be dropped).
template <std::int64_t M>
Tag* FrequencyMultiplier::transcribeWith(const TagBlock& block, Tag* out) {
  const Tag* const end = block.tags.data() + block.tags.size();
  Tag* const room_end = out + transcribeRoom(block);
  // The last input in locals until the block is done: a store of the optional's flag (a byte)
  // could alias anything, and the compiler would reload the rows after each one. Giving up
  // leaves last_input_ as it was.
  bool seen_input = last_input_.has_value();
  timestamp_t last_input = last_input_.value_or(0);
  const channel_t input_channel = input_;
  constexpr std::size_t kLanes = M <= 4 ? 4 : 8;
  PredictionRow<kLanes>* const rows = [this] {
    if constexpr (kLanes == 4) {
      return preparedRows(rows4_).data();
    } else {
      return preparedRows(rows8_).data();
    }
  }();
  std::size_t row_size = owed_.size();  // of the current row
  for (std::size_t j = 0; j < kLanes; ++j) {
    setRowTime(rows[0], j, j < row_size ? owed_[j] : kNever);
  }
  // Of the current row, counted in bytes of output, not tags: nothing is scaled in the loop.
  std::uint64_t emitted_bytes = 0;
  // Opaque, so that the table's address stays in a register instead of being made again in
  // every iteration.
  const std::uint8_t* mask_bytes = kMaskBytes<kLanes>.data();
  asm("" : "+r"(mask_bytes));
  InlineWriter writer(out, outputChannel());
  for (const Tag* chunk = block.tags.data(); chunk != end;) {
    const Tag* const chunk_end = chunk + std::min<std::ptrdiff_t>(kChunk, end - chunk);
    std::size_t count = 0;
#pragma GCC unroll 4
    for (const Tag* tag = chunk; tag != chunk_end; ++tag) {
      ticks_[count] = tag->time;
      count = countIfEqual(count, static_cast<std::uint32_t>(tag->channel),
                           static_cast<std::uint32_t>(input_channel));
    }
    // This chunk's tags, the rows it reaches, the rest of the current row and the candidates.
    if (writer.end() + (chunk_end - chunk) + M * count + kLanes + 2 > room_end) [[unlikely]] {
      return nullptr;
    }
    for (std::size_t k = 0; k < count; ++k) {
      const timestamp_t time = ticks_[k];
      PredictionRow<kLanes>& row = rows[k + 1];
      setRowTime(row, 0, time);
      if (!seen_input) [[unlikely]] {
        for (std::size_t j = 1; j < kLanes; ++j) setRowTime(row, j, kNever);
        row_size = 1;
      } else {
        // time + floor(j * period / M) = time + j * whole + floor(j * rest / M): no overflow.
        // Unsigned, as the period is positive: the division needs no sign correction.
        const auto period = static_cast<std::uint64_t>(time - last_input);
        if (period == 0) [[unlikely]] {
          return nullptr;
        }
        const auto whole = static_cast<timestamp_t>(period / M);
        const auto rest = static_cast<timestamp_t>(period % M);
        for (std::size_t j = 1; j < kLanes; ++j) {
          const auto step = static_cast<timestamp_t>(j);
          setRowTime(row, j, j < M ? time + step * whole + step * rest / M : kNever);
        }
        row_size = M;
      }
      last_input = time;
      seen_input = true;
    }
    const PredictionRow<kLanes>* row = rows;
    for (const Tag* tag = chunk; tag != chunk_end; ++tag) {
      // Two chunks ahead: the gather pass reads a chunk first, and one chunk ahead left the
      // prefetches for the end of the next chunk still in flight when it got there.
      __builtin_prefetch(tag + 2 * kChunk);
      // Read before anything is stored (see InlineWriter).
      const TagRegister copied = TagRegister::load(tag);
      const channel_t channel = tag->channel;
      std::uint64_t due_bytes = bytesBefore<kLanes>(row->times, tag->time, mask_bytes);
      writer.emitFirstBytes(reinterpret_cast<const char*>(row->tags) + emitted_bytes,
                            due_bytes - emitted_bytes);
      writer.copyAfterOwed(copied);
      // An input of the multiplied channel moves to the next row, nothing of it emitted yet.
      moveBothIfEqual(channel, input_channel, due_bytes, std::uint64_t{0}, row, row + 1);
      emitted_bytes = due_bytes;
    }
    if (row != rows) rows[0] = *row;
    chunk = chunk_end;
  }
  const std::uint64_t due_bytes = bytesBefore<kLanes>(rows[0].times, block.end_time, mask_bytes);
  writer.emitFirstBytes(reinterpret_cast<const char*>(rows[0].tags) + emitted_bytes,
                        due_bytes - emitted_bytes);
  owed_.clear();
  for (std::size_t j = due_bytes / sizeof(Tag); j < row_size; ++j) {
    owed_.push_back(rows[0].times[j]);
  }
  if (seen_input) last_input_ = last_input;
  return writer.finish();
}

void FrequencyMultiplier::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  const auto due = std::lower_bound(owed_.begin(), owed_.end(), until);
  for (auto it = owed_.begin(); it != due; ++it) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, *it});
  }
  owed_.erase(owed_.begin(), due);
}

}  // namespace tagflow
