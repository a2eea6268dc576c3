// The UDP stream wire format (version 1; bit by bit in docs/formats.md). A datagram is a
// 24-byte header (magic, version, flags, word count, sequence number, running event count,
// base time) followed by 32-bit little-endian words. A word's top 6 bits are its code:
// codes 0..35 are time tags of channels 1..18 and -1..-18 with a 26-bit time delta in ps;
// codes 56..63 are control words (missed events, error, overflow begin/end, time extension).
// Every datagram decodes on its own: its times count from its base time. A datagram never
// splits items of one time from the next datagram's, so a receiver can close a block after
// any datagram. `decodeWords` checks everything and writes nothing it has not checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::wire {

inline constexpr std::uint32_t kMagic = 0x574C4654;  // the bytes "TFLW"
inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 24;
inline constexpr std::size_t kHeaderWords = kHeaderBytes / 4;

inline constexpr int kMinMtu = 576;
inline constexpr int kMaxMtu = 9500;
inline constexpr int kIpUdpHeaderBytes = 28;  // IPv4 20 + UDP 8
inline constexpr std::size_t kMaxDatagramBytes = kMaxMtu - kIpUdpHeaderBytes;
inline constexpr std::size_t kMaxWords = (kMaxDatagramBytes - kHeaderBytes) / 4;

inline constexpr int kCodeBits = 6;
inline constexpr int kDeltaBits = 32 - kCodeBits;
inline constexpr std::uint32_t kDeltaMask = (std::uint32_t{1} << kDeltaBits) - 1;
inline constexpr timestamp_t kMaxDelta = kDeltaMask;  // 67'108'863 ps
inline constexpr channel_t kMaxInput = 18;
inline constexpr std::uint32_t kChannelCodes = 2 * kMaxInput;
// The channel code of missed events on channel 0: events whose channel is not known, such as
// those a receiver reports for a lost datagram, so that a stream received with losses can be
// sent on again.
inline constexpr std::uint32_t kMissedUnknownChannel = 63;

enum ControlCode : std::uint32_t {
  kCodeMissedEvents = 56,  // delta; the next word holds the channel code and the count
  kCodeError = 57,
  kCodeOverflowBegin = 58,
  kCodeOverflowEnd = 59,
  kCodeTimeExtend = 63,  // advances time by payload * 2^26 ps
};

enum Flags : std::uint8_t {
  kFlagEndOfStream = 1,  // the sender's last datagram; its base time is the stream end
  kFlagInOverflow = 2,   // the stream is inside an overflow interval at the datagram start
  kKnownFlags = kFlagEndOfStream | kFlagInOverflow,
};

struct Header {
  std::uint8_t flags = 0;
  std::uint16_t word_count = 0;
  std::uint32_t sequence = 0;       // datagram number from 0, wrapping
  std::uint32_t events_before = 0;  // events of all earlier datagrams, modulo 2^32
  timestamp_t base_time = 0;        // the first word's delta counts from here
};

// Why a datagram was refused. Ok is 0; the order is the order of the checks.
enum class Status : std::uint8_t {
  Ok,
  TooShort,
  BadMagic,
  BadVersion,
  BadFlags,
  BadLength,
  BadWord,        // a reserved code, reserved bits set, a truncated missed-events pair
  TimeOverflow,   // a time beyond the int64 range
  OverflowOrder,  // overflow begin inside an open interval or end outside one
};
inline constexpr std::size_t kStatusCount = 9;

std::string_view statusName(Status status);

// Words that fit into one datagram of a link with this MTU. Throws InvalidArgument naming the
// MTU and the valid range (kMinMtu..kMaxMtu).
std::size_t wordsPerDatagram(int mtu);

// The code of a time-tag channel, or -1 when the format cannot carry it.
int channelCode(channel_t channel);
channel_t codeChannel(std::uint32_t code);

void writeHeader(std::uint32_t* datagram, const Header& header);
Status parseHeader(std::span<const std::byte> datagram, Header& header);

struct Decoded {
  Status status = Status::Ok;
  std::size_t tags = 0;       // records written to `out`
  std::uint32_t events = 0;   // time tags plus missed-event counts, what events_before counts
  bool in_overflow = false;   // at the datagram's end
  timestamp_t last_time = 0;  // of the last record; base_time when there is none
};

// Expands the words that follow a parsed header into at most header.word_count records at
// `out`. `special`, if given, receives out-relative indices of the non-TimeTag records
// (offset by `special_base`). On a status other than Ok the output is garbage to discard.
Decoded decodeWords(const Header& header, const std::byte* words, Tag* out,
                    std::vector<std::uint32_t>* special = nullptr, std::uint32_t special_base = 0);

// A sender's numbering of its datagrams: each gets the next sequence number and the count of
// events in all datagrams before it (modulo 2^32), the two facts a receiver finds losses by.
class DatagramNumbering {
 public:
  // Sets `header`'s sequence and events_before for a datagram that adds `events`.
  void stamp(Header& header, std::uint32_t events) {
    header.sequence = next_sequence_++;
    header.events_before = events_before_;
    events_before_ += events;
  }
  std::uint32_t eventsBefore() const { return events_before_; }

 private:
  std::uint32_t next_sequence_ = 0;
  std::uint32_t events_before_ = 0;
};

// Where an Encoder puts its datagrams. The encoder asks for a buffer, writes the words after
// kHeaderWords of room, and hands it back with the header facts it knows; the sink owns the
// sequence numbers and the running event count, writes the header and sends or keeps it.
class DatagramSink {
 public:
  virtual ~DatagramSink() = default;
  // Room for kHeaderWords plus the encoder's words per datagram.
  virtual std::uint32_t* openDatagram() = 0;
  // `header` carries flags, word_count and base_time; `events` is what the datagram adds to
  // the running event count.
  virtual void closeDatagram(std::uint32_t* datagram, const Header& header,
                             std::uint32_t events) = 0;
};

// Encoder: turns a time-ordered tag stream, block by block, into datagrams of at most
// `words_per_datagram` words. Throws DataError naming the tag (counted from the stream start)
// when the stream cannot be sent: out of time order, a channel outside 1..18 / -1..-18 (or 0
// for missed events), an unknown type, overflow marks that nest, more items at one time than
// a datagram holds. Error and overflow marks travel without their channel (they arrive on
// channel 0).
class Encoder {
 public:
  explicit Encoder(std::size_t words_per_datagram);

  // Declares where the stream begins, before its first tag (which may come later): sends the
  // start datagram (the stream's first, no words, base time `start_time`) and gives the first
  // datagram of tags the same base time, so that the receiver's stream begins there even when
  // one of the two is lost.
  void begin(timestamp_t start_time, DatagramSink& sink);
  void encode(std::span<const Tag> tags, DatagramSink& sink);
  // Sends the open datagram now (a paced or slow stream would otherwise hold it back). Only
  // between blocks: the next tag must be later than every tag encoded so far.
  void flush(DatagramSink& sink);
  // Flushes, then sends the end-of-stream datagram whose base time is `end_time`, the end of
  // the stream (later than every tag).
  void finish(timestamp_t end_time, DatagramSink& sink);

  std::uint64_t tagsEncoded() const { return tags_; }
  // The time of the last tag encoded (the stream's start before the first).
  timestamp_t lastTime() const { return last_time_; }
  bool hasOpenDatagram() const { return datagram_ != nullptr; }
  // Whether the stream is inside an overflow interval after what was encoded.
  bool inOverflow() const { return in_overflow_; }

 private:
  void encodeSlow(const Tag& tag, DatagramSink& sink);
  void open(timestamp_t base_time, DatagramSink& sink);
  void close(DatagramSink& sink);
  // The open datagram is full and `next` shares the time of its last items: moves those
  // items into a fresh datagram so that no time is split between two datagrams.
  void closeMovingRun(timestamp_t next_time, DatagramSink& sink);

  std::size_t capacity_;
  std::uint32_t* datagram_ = nullptr;
  std::size_t words_ = 0;
  std::uint32_t events_ = 0;
  timestamp_t base_time_ = 0;
  timestamp_t last_time_ = 0;
  std::size_t run_start_ = 0;  // first word of the items at last_time_
  bool open_in_overflow_ = false;
  bool in_overflow_ = false;
  bool started_ = false;
  bool declared_start_ = false;  // begin() was called and no datagram opened since
  timestamp_t start_time_ = 0;
  bool boundary_ = false;  // flush() closed a datagram after last_time_
  std::uint64_t tags_ = 0;
  std::vector<Tag> scratch_;
};

}  // namespace tagflow::wire
