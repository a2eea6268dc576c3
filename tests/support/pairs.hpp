// Brute-force references for the pair histograms (Correlation, HistogramLogBins), written from
// docs/measurements.md with plain sorted double loops over a std::vector<Tag> (no library code),
// plus the stream plumbing their tests share: a cutter that turns a tag vector into scripted
// blocks with empty blocks in the gaps, and one-line graph runs over memory or scripted sources.
//
// Segments: pairs never span an overflow interval or an Error. The references number the
// stretches of the stream between such marks: a new segment begins at every OverflowBegin,
// OverflowEnd and Error tag, and TimeTags between OverflowBegin and OverflowEnd belong to none
// (they are ignored). Two events pair only inside one segment.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "support/drain.hpp"
#include "support/sources.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

namespace tagflow::test {

inline constexpr timestamp_t kEndOfTime = std::numeric_limits<timestamp_t>::max();

struct SegmentedEvent {
  timestamp_t time = 0;
  std::size_t index = 0;    // position in the tag vector: tells two events of one time apart
  std::size_t segment = 0;  // events pair only within one segment
};

// The TimeTags of `channel` with time < capture_end that lie outside overflow intervals, in
// stream order, each with its segment.
inline std::vector<SegmentedEvent> segmentedEvents(const std::vector<Tag>& tags, channel_t channel,
                                                   timestamp_t capture_end = kEndOfTime) {
  std::vector<SegmentedEvent> events;
  std::size_t segment = 0;
  bool in_overflow = false;
  for (std::size_t i = 0; i < tags.size() && tags[i].time < capture_end; ++i) {
    const Tag& tag = tags[i];
    switch (tag.type) {
      case TagType::OverflowBegin:
        in_overflow = true;
        ++segment;
        break;
      case TagType::OverflowEnd:
        in_overflow = false;
        ++segment;
        break;
      case TagType::Error:
        ++segment;
        break;
      case TagType::MissedEvents:
        break;
      case TagType::TimeTag:
        if (!in_overflow && tag.channel == channel) events.push_back({tag.time, i, segment});
        break;
    }
  }
  return events;
}

// Capture time of [begin, end) outside the overflow intervals of the stream.
inline timestamp_t timeOutsideOverflows(const std::vector<Tag>& tags, timestamp_t begin,
                                        timestamp_t end) {
  timestamp_t inside = 0;
  timestamp_t opened = 0;
  bool in_overflow = false;
  for (const Tag& tag : tags) {
    if (tag.type == TagType::OverflowBegin && !in_overflow) {
      in_overflow = true;
      opened = tag.time;
    } else if (tag.type == TagType::OverflowEnd && in_overflow) {
      in_overflow = false;
      inside += std::max<timestamp_t>(0, std::min(tag.time, end) - std::max(opened, begin));
    }
  }
  if (in_overflow) inside += std::max<timestamp_t>(0, end - std::max(opened, begin));
  return end - begin - inside;
}

// ---------------------------------------------------------------------------------------------
// Correlation (docs/measurements.md, Correlation): every pair of an event a on channel_1 and a
// different event b on channel_2 in one segment contributes tau = t_a - t_b; bin i holds tau in
// [lo + i*bw, lo + (i+1)*bw), lo = -floor(n_bins*bw/2).

inline timestamp_t correlationLow(timestamp_t binwidth, std::int64_t n_bins) {
  const timestamp_t window = binwidth * n_bins;
  return -(window / 2);  // window > 0: integer division is the floor
}

struct CorrelationReference {
  timestamp_t binwidth = 0;
  std::vector<std::int64_t> counts;
  std::uint64_t n1 = 0;
  std::uint64_t n2 = 0;
  timestamp_t valid_time = 0;  // capture time outside overflow intervals

  // g2 = T / (binwidth * N1 * N2) * counts.
  std::vector<double> normalized() const {
    std::vector<double> g2(counts.size(), std::numeric_limits<double>::quiet_NaN());
    if (n1 == 0 || n2 == 0 || valid_time <= 0) return g2;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      g2[i] = static_cast<double>(valid_time) /
              (static_cast<double>(binwidth) * static_cast<double>(n1) * static_cast<double>(n2)) *
              static_cast<double>(counts[i]);
    }
    return g2;
  }
};

// channel_2 = CHANNEL_UNUSED or channel_2 == channel_1: auto-correlation (ordered pairs of two
// different events). Captures [capture_begin, capture_end).
inline CorrelationReference correlationReference(const std::vector<Tag>& tags, channel_t channel_1,
                                                 channel_t channel_2, timestamp_t binwidth,
                                                 std::int64_t n_bins, timestamp_t capture_begin,
                                                 timestamp_t capture_end) {
  if (channel_2 == CHANNEL_UNUSED) channel_2 = channel_1;
  const timestamp_t lo = correlationLow(binwidth, n_bins);
  const timestamp_t hi = lo + binwidth * n_bins;
  const auto first = segmentedEvents(tags, channel_1, capture_end);
  const auto second = segmentedEvents(tags, channel_2, capture_end);

  CorrelationReference ref;
  ref.binwidth = binwidth;
  ref.counts.assign(static_cast<std::size_t>(n_bins), 0);
  ref.n1 = first.size();
  ref.n2 = second.size();
  ref.valid_time = timeOutsideOverflows(tags, capture_begin, capture_end);
  // (segment, time) grows along both lists: b's with tau >= hi or an earlier segment are never
  // needed again once a has moved on.
  std::size_t from = 0;
  for (const SegmentedEvent& a : first) {
    while (from < second.size() &&
           (second[from].segment < a.segment || a.time - second[from].time >= hi)) {
      ++from;
    }
    for (std::size_t j = from; j < second.size(); ++j) {
      const SegmentedEvent& b = second[j];
      if (b.segment != a.segment || a.time - b.time < lo) break;
      if (b.index == a.index) continue;  // never a tag with itself
      const timestamp_t tau = a.time - b.time;
      ++ref.counts[static_cast<std::size_t>((tau - lo) / binwidth)];
    }
  }
  return ref;
}

// ---------------------------------------------------------------------------------------------
// HistogramLogBins (docs/measurements.md, HistogramLogBins).

// Edges 10^(exp_start + i*step) s rounded to whole ps, the last exactly 10^exp_stop s;
// duplicates removed.
inline std::vector<std::int64_t> logBinEdges(double exp_start, double exp_stop,
                                             std::int64_t n_bins) {
  const double step = (exp_stop - exp_start) / static_cast<double>(n_bins);
  std::vector<std::int64_t> edges;
  for (std::int64_t i = 0; i <= n_bins; ++i) {
    const double exponent = i == n_bins ? exp_stop : exp_start + static_cast<double>(i) * step;
    const std::int64_t edge = std::llround(std::pow(10.0, exponent + 12));
    if (edges.empty() || edges.back() != edge) edges.push_back(edge);
  }
  return edges;
}

struct LogBinsReference {
  std::vector<std::uint64_t> counts;
  std::uint64_t n_start = 0;
  std::uint64_t n_click = 0;
  timestamp_t accumulation_start = 0;
  timestamp_t accumulation_click = 0;
};

// Walks the tags of [capture_begin, capture_end) in order. The exposure (re)starts at the capture
// start, at every OverflowEnd and at every Error: clicks count from one span (the last edge)
// later, gates go back to their initial state, and events pair only with events after the
// restart. An event is judged with the gate states before it; a start while its gate is closed
// is no start at all. Accumulation times: time after the warm-up, outside overflows, with the
// gate open. Then every counted click pairs with every valid earlier start of its segment.
inline LogBinsReference logBinsReference(const std::vector<Tag>& tags, channel_t click_channel,
                                         channel_t start_channel,
                                         const std::vector<std::int64_t>& edges,
                                         timestamp_t capture_begin, timestamp_t capture_end,
                                         std::optional<ChannelGate> click_gate = std::nullopt,
                                         std::optional<ChannelGate> start_gate = std::nullopt) {
  const timestamp_t span = edges.back();
  LogBinsReference ref;
  ref.counts.assign(edges.size() - 1, 0);

  const auto initial = [](const std::optional<ChannelGate>& gate) {
    return gate ? gate->initially_open : true;
  };
  const auto update = [](const std::optional<ChannelGate>& gate, bool& open, channel_t channel) {
    if (!gate) return;
    if (channel == gate->open_channel) open = true;
    if (channel == gate->close_channel) open = false;
  };
  bool click_open = initial(click_gate);
  bool start_open = initial(start_gate);
  bool in_overflow = false;
  std::size_t segment = 0;
  timestamp_t counting_from = capture_begin + span;
  timestamp_t last = capture_begin;
  const auto accrue = [&](timestamp_t time) {
    const timestamp_t from = std::max(last, counting_from);
    if (!in_overflow && time > from) {
      if (click_open) ref.accumulation_click += time - from;
      if (start_open) ref.accumulation_start += time - from;
    }
    last = std::max(last, time);
  };
  const auto restart = [&](timestamp_t time) {
    ++segment;
    counting_from = time + span;
    click_open = initial(click_gate);
    start_open = initial(start_gate);
  };

  std::vector<SegmentedEvent> starts;
  std::vector<SegmentedEvent> clicks;
  for (std::size_t i = 0; i < tags.size() && tags[i].time < capture_end; ++i) {
    const Tag& tag = tags[i];
    accrue(tag.time);
    switch (tag.type) {
      case TagType::OverflowBegin:
        in_overflow = true;
        ++segment;
        break;
      case TagType::OverflowEnd:
        in_overflow = false;
        restart(tag.time);
        break;
      case TagType::Error:
        restart(tag.time);
        break;
      case TagType::MissedEvents:
        break;
      case TagType::TimeTag:
        if (in_overflow) break;
        if (tag.channel == click_channel && click_open && tag.time >= counting_from) {
          clicks.push_back({tag.time, i, segment});
          ++ref.n_click;
        }
        if (tag.channel == start_channel && start_open) {
          starts.push_back({tag.time, i, segment});
          if (tag.time >= counting_from) ++ref.n_start;
        }
        update(click_gate, click_open, tag.channel);
        update(start_gate, start_open, tag.channel);
        break;
    }
  }
  accrue(capture_end);

  std::size_t from = 0;
  for (const SegmentedEvent& click : clicks) {
    while (from < starts.size() &&
           (starts[from].segment < click.segment || click.time - starts[from].time >= span)) {
      ++from;
    }
    for (std::size_t j = from; j < starts.size(); ++j) {
      const SegmentedEvent& start = starts[j];
      if (start.segment != click.segment || start.time >= click.time) break;
      const timestamp_t tau = click.time - start.time;
      if (tau < edges.front()) continue;
      // The last edge <= tau: tau on an edge goes to the bin on its right.
      const auto bin = std::upper_bound(edges.begin(), edges.end(), tau) - edges.begin() - 1;
      ++ref.counts[static_cast<std::size_t>(bin)];
    }
  }
  return ref;
}

// ---------------------------------------------------------------------------------------------
// Streams and runs.

// Cuts a time-ordered stream into blocks tiling [begin, end). In each gap between two tag
// times (and before the first, after the last) a block boundary falls with probability
// `cut_probability`, at a random time; with probability `empty_probability` one or two more
// boundaries fall into the same gap, giving empty blocks. Tags of one time stay together.
inline std::vector<DrainedBlock> cutIntoBlocks(const std::vector<Tag>& tags, timestamp_t begin,
                                               timestamp_t end, std::uint64_t seed,
                                               double cut_probability, double empty_probability) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<timestamp_t> cuts;
  const auto cutGap = [&](timestamp_t lowest, timestamp_t highest) {  // boundaries in [lo, hi]
    if (lowest > highest || uniform(random) >= cut_probability) return;
    int count = 1;
    if (uniform(random) < empty_probability) count += uniform(random) < 0.5 ? 1 : 2;
    std::uniform_int_distribution<timestamp_t> where(lowest, highest);
    for (int k = 0; k < count; ++k) cuts.push_back(where(random));
  };
  timestamp_t previous = begin;
  for (const Tag& tag : tags) {
    if (tag.time > previous) cutGap(previous + 1, tag.time);
    previous = tag.time;
  }
  cutGap(previous + 1, end - 1);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts.push_back(end);

  std::vector<DrainedBlock> blocks;
  std::size_t next = 0;
  timestamp_t block_begin = begin;
  for (timestamp_t cut : cuts) {
    DrainedBlock block{block_begin, cut, {}};
    while (next < tags.size() && tags[next].time < cut) block.tags.push_back(tags[next++]);
    blocks.push_back(std::move(block));
    block_begin = cut;
  }
  return blocks;
}

inline void runGraph(Source& source, const std::vector<Measurement*>& measurements,
                     timestamp_t duration_ps = -1) {
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  for (Measurement* measurement : measurements) graph.add(*measurement);
  graph.run(duration_ps);
}

// Runs the tags of [begin, end) as a MemorySource with `block_size` tags per block.
inline void runMemory(const std::vector<Tag>& tags, std::size_t block_size, timestamp_t begin,
                      timestamp_t end, const std::vector<Measurement*>& measurements) {
  MemorySource source(std::make_shared<const std::vector<Tag>>(tags), block_size, begin, end);
  runGraph(source, measurements);
}

inline void runScripted(std::vector<DrainedBlock> blocks,
                        const std::vector<Measurement*>& measurements) {
  ScriptedSource source(std::move(blocks));
  runGraph(source, measurements);
}

}  // namespace tagflow::test
