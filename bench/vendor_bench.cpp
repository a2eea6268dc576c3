#include "vendor_bench.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_stream.hpp"
#include "json_file.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace tagflow::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// Little-endian bytes of a file being made.
class Bytes {
 public:
  template <class T>
  void put(T value) {
    const auto at = data.size();
    data.resize(at + sizeof value);
    std::memcpy(data.data() + at, &value, sizeof value);
  }
  template <class T>
  void putAt(std::size_t at, T value) {
    std::memcpy(data.data() + at, &value, sizeof value);
  }
  void text(std::size_t at, std::string_view value) {
    std::memcpy(data.data() + at, value.data(), value.size());
  }
  std::vector<std::uint8_t> data;
};

void writeFile(const std::string& path, const std::vector<std::uint8_t>& header,
               std::span<const std::uint8_t> records, std::size_t copies = 1) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()),
            static_cast<std::streamsize>(header.size()));
  for (std::size_t i = 0; i < copies; ++i) {
    out.write(reinterpret_cast<const char*>(records.data()),
              static_cast<std::streamsize>(records.size()));
  }
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

template <class Word>
std::span<const std::uint8_t> bytesOf(const std::vector<Word>& words) {
  return {reinterpret_cast<const std::uint8_t*>(words.data()), words.size() * sizeof(Word)};
}

// ---- PicoQuant -------------------------------------------------------------------------------

constexpr std::uint32_t kSpecial = 1u << 31;
constexpr std::uint32_t kOverflowChannel = 0x3Fu << 25;

std::vector<std::uint8_t> ptuHeader(std::uint32_t record_type, double global_s, double resolution_s,
                                    std::uint64_t records) {
  Bytes b;
  for (char c : std::string_view("PQTTTR\0\0"
                                 "1.0.00\0\0",
                                 16))
    b.put(c);
  const auto entry = [&](std::string_view name, std::uint32_t type, auto value) {
    char field[32] = {};
    std::memcpy(field, name.data(), name.size());
    for (char c : field) b.put(c);
    b.put(std::int32_t{-1});
    b.put(type);
    b.put(value);
  };
  entry("TTResultFormat_TTTRRecType", 0x10000008u, std::int64_t{record_type});
  entry("TTResult_NumberOfRecords", 0x10000008u, static_cast<std::int64_t>(records));
  entry("MeasDesc_GlobalResolution", 0x20000008u, global_s);
  entry("MeasDesc_Resolution", 0x20000008u, resolution_s);
  entry("Header_End", 0xFFFF0008u, std::uint64_t{0});
  return b.data;
}

// Generic T2 (MultiHarp), 1 ps units: channel k is input k - 1; counted overflow records
// carry the time across the 25-bit field.
std::vector<std::uint32_t> genericT2Records(std::span<const Tag> tags) {
  std::vector<std::uint32_t> words;
  words.reserve(tags.size() + tags.size() / 512 + 16);
  std::uint64_t periods = 0;
  for (const Tag& tag : tags) {
    const auto units = static_cast<std::uint64_t>(tag.time);
    while ((units >> 25) > periods) {
      const std::uint64_t n = std::min<std::uint64_t>((units >> 25) - periods, (1u << 25) - 1);
      words.push_back(kSpecial | kOverflowChannel | static_cast<std::uint32_t>(n));
      periods += n;
    }
    words.push_back((static_cast<std::uint32_t>(tag.channel - 1) << 25) |
                    static_cast<std::uint32_t>(units & 0x1FFFFFF));
  }
  return words;
}

// HydraHarp T3 layout: nsync in 10 bits, dtime in 15; counted overflow records (generic) or one
// record per 1024 sync periods (HydraHarp V1).
std::vector<std::uint32_t> hydraHarpT3Records(std::span<const Tag> tags, double period_ps,
                                              double dtime_ps, bool counted) {
  std::vector<std::uint32_t> words;
  words.reserve(tags.size() + tags.size() / 512 + 16);
  std::uint64_t periods = 0;
  for (const Tag& tag : tags) {
    const auto t = static_cast<double>(tag.time);
    const auto nsync = static_cast<std::uint64_t>(std::floor(t / period_ps));
    const auto dtime = static_cast<std::uint32_t>(
        std::min(std::llround((t - static_cast<double>(nsync) * period_ps) / dtime_ps), 0x7FFFll));
    while ((nsync >> 10) > periods) {
      const std::uint64_t n = counted ? std::min<std::uint64_t>((nsync >> 10) - periods, 1023) : 1;
      words.push_back(kSpecial | kOverflowChannel | (counted ? static_cast<std::uint32_t>(n) : 0));
      periods += n;
    }
    words.push_back((static_cast<std::uint32_t>(tag.channel - 1) << 25) | (dtime << 10) |
                    static_cast<std::uint32_t>(nsync & 0x3FF));
  }
  return words;
}

// PicoHarp T2, 4 ps units: channel 3 (the demo's 10 MHz clock) is the sync input 0, channel k
// the record's channel k; one overflow record per 210698240 units.
std::vector<std::uint32_t> picoHarpT2Records(std::span<const Tag> tags) {
  constexpr std::uint64_t kWrap = 210698240;
  std::vector<std::uint32_t> words;
  words.reserve(tags.size() + 16);
  std::uint64_t wraps = 0;
  for (const Tag& tag : tags) {
    const std::uint64_t units = static_cast<std::uint64_t>(tag.time) / 4;
    for (; units >= (wraps + 1) * kWrap; ++wraps) words.push_back(0xFu << 28);
    const std::uint32_t channel = tag.channel == 3 ? 0 : static_cast<std::uint32_t>(tag.channel);
    words.push_back((channel << 28) | static_cast<std::uint32_t>(units - wraps * kWrap));
  }
  return words;
}

// PicoHarp T3: an 80 MHz sync (12.5 ns), 4 ps dtime units, channel k the record's channel k.
std::vector<std::uint32_t> picoHarpT3Records(std::span<const Tag> tags) {
  std::vector<std::uint32_t> words;
  words.reserve(tags.size() + tags.size() / 4096 + 16);
  std::uint64_t wraps = 0;
  for (const Tag& tag : tags) {
    const auto t = static_cast<std::uint64_t>(tag.time);
    const std::uint64_t nsync = t / 12'500;
    const auto dtime = static_cast<std::uint32_t>(t % 12'500 / 4);
    for (; (nsync >> 16) > wraps; ++wraps) words.push_back(0xFu << 28);
    words.push_back((static_cast<std::uint32_t>(tag.channel) << 28) | (dtime << 16) |
                    static_cast<std::uint32_t>(nsync & 0xFFFF));
  }
  return words;
}

// A HydraHarp .ht3 header of format 1.0 (880 bytes with 8 inputs): the fields the reader
// checks, at their offsets; the rest zero.
std::vector<std::uint8_t> ht3Header(double resolution_ps, std::int32_t sync_rate,
                                    std::uint64_t records) {
  Bytes b;
  b.data.assign(880, 0);
  b.text(0, "HydraHarp");
  b.text(16, "1.0");
  b.putAt(332, std::int32_t{32});        // BitsPerRecord
  b.putAt(340, std::int32_t{3});         // MeasurementMode: T3
  b.putAt(352, resolution_ps);           // Resolution
  b.putAt(564, std::int32_t{1});         // NumberOfModules
  b.putAt(648, 1.0);                     // BaseResolution
  b.putAt(664, std::int32_t{8});         // InpChansPresent
  b.putAt(856, sync_rate);               // SyncRate
  b.putAt(872, std::uint64_t{records});  // NumberOfRecords
  return b.data;
}

// ---- Becker & Hickl, quTAG ---------------------------------------------------------------------

constexpr std::uint32_t kSpcInvalid = 1u << 31;
constexpr std::uint32_t kSpcMtov = 1u << 30;
constexpr double kSpcClockPs = 12'500;               // 80 MHz sync as macrotime clock
constexpr double kSpcMicroPs = 50'000.0 / 4 / 4096;  // TAC 50 ns, gain 4, 4096 codes

// SPC-130 layout: 12-bit macrotime, routing channel k - 1, ADC counting down; MTOV on the
// first photon of a new overflow period, an overflow-count record for periods without one.
std::vector<std::uint32_t> spcRecords(std::span<const Tag> tags) {
  std::vector<std::uint32_t> words;
  words.reserve(tags.size() + 1 + tags.size() / 1024);
  words.push_back(kSpcInvalid | static_cast<std::uint32_t>(kSpcClockPs / 100));
  std::uint64_t periods = 0;
  for (const Tag& tag : tags) {
    const auto t = static_cast<std::uint64_t>(tag.time);
    const std::uint64_t macro = t / static_cast<std::uint64_t>(kSpcClockPs);
    const auto micro = static_cast<std::uint32_t>(
        std::min(std::floor(static_cast<double>(t - macro * 12'500) / kSpcMicroPs), 4095.0));
    std::uint32_t flags = 0;
    if ((macro >> 12) > periods) {
      if ((macro >> 12) - periods > 1) {
        words.push_back(kSpcInvalid | kSpcMtov |
                        static_cast<std::uint32_t>((macro >> 12) - periods - 1));
      }
      flags = kSpcMtov;
      periods = macro >> 12;
    }
    words.push_back(flags | ((4095 - micro) << 16) |
                    (static_cast<std::uint32_t>(tag.channel - 1) << 12) |
                    static_cast<std::uint32_t>(macro & 0xFFF));
  }
  return words;
}

// The .set file beside it: an SPC-150 whose macrotime clock is the sync (SP_MTCLK 1), so a
// sync tag comes with every period holding a photon; TAC range 50 ns over gain 4.
void writeSpcSet(const std::string& path) {
  std::vector<std::uint8_t> header(42, 0);
  const std::uint32_t revision = (0x28u << 4) | 13;
  header[0] = static_cast<std::uint8_t>(revision);
  header[1] = static_cast<std::uint8_t>(revision >> 8);
  header[2] = 42;
  header[32] = header[33] = 0x55;
  const std::string text =
      "*IDENTIFICATION\r\n  ID        : SPC Setup Script File\r\n*END\r\n\r\n*SETUP\r\n"
      "  SYS_PARA_BEGIN:\r\n  #SP [SP_MTCLK,I,1]\r\n  #SP [SP_TAC_R,F,5.0e-08]\r\n"
      "  #SP [SP_TAC_G,I,4]\r\n  #SP [SP_ADC_RE,I,4096]\r\n  SYS_PARA_END:\r\n*END\r\n";
  std::vector<std::uint8_t> bytes(text.begin(), text.end());
  writeFile(path, header, bytes);
}

struct QutagRecord {
  std::uint64_t stamp;
  std::uint16_t channel;
} __attribute__((packed));
static_assert(sizeof(QutagRecord) == 10);

std::vector<QutagRecord> qutagRecords(std::span<const Tag> tags) {
  std::vector<QutagRecord> records;
  records.reserve(tags.size());
  for (const Tag& tag : tags) {
    records.push_back(
        {static_cast<std::uint64_t>(tag.time), static_cast<std::uint16_t>(tag.channel - 1)});
  }
  return records;
}

// ---- the rows
// ------------------------------------------------------------------------------------

struct Format {
  std::string name;
  std::string setup;
  std::string file;  // its name in the folder
  std::function<void(std::span<const Tag>, const std::string& path)> write;
};

std::vector<Format> formats() {
  return {
      {"PTU generic T2", "0x00010207 (MultiHarp), 1 ps units, counted overflows", "t2.ptu",
       [](std::span<const Tag> tags, const std::string& path) {
         const auto words = genericT2Records(tags);
         writeFile(path, ptuHeader(0x00010207, 1e-12, 1e-12, words.size()), bytesOf(words));
       }},
      {"PTU generic T3",
       "0x00010307, sync period 1/80.0001 MHz (12499.98 ps: not whole), 5 ps dtime units", "t3.ptu",
       [](std::span<const Tag> tags, const std::string& path) {
         const double period_s = 1.0 / 80.0001e6;
         const auto words = hydraHarpT3Records(tags, period_s * 1e12, 5, true);
         writeFile(path, ptuHeader(0x00010307, period_s, 5e-12, words.size()), bytesOf(words));
       }},
      {"PTU PicoHarp T2", "0x00010203, 4 ps units, channel 3 as the sync input", "ph_t2.ptu",
       [](std::span<const Tag> tags, const std::string& path) {
         const auto words = picoHarpT2Records(tags);
         writeFile(path, ptuHeader(0x00010203, 4e-12, 4e-12, words.size()), bytesOf(words));
       }},
      {"PTU PicoHarp T3", "0x00010303, 80 MHz sync (12.5 ns), 4 ps dtime units", "ph_t3.ptu",
       [](std::span<const Tag> tags, const std::string& path) {
         const auto words = picoHarpT3Records(tags);
         writeFile(path, ptuHeader(0x00010303, 12.5e-9, 4e-12, words.size()), bytesOf(words));
       }},
      {"legacy .ht3", "HydraHarp format 1.0, SyncRate 80 MHz, 8 ps dtime units", "legacy.ht3",
       [](std::span<const Tag> tags, const std::string& path) {
         const auto words = hydraHarpT3Records(tags, 12'500, 8, false);
         writeFile(path, ht3Header(8, 80'000'000, words.size()), bytesOf(words));
       }},
      {"B&H SPC-130", "SPC-150 + .set: 12.5 ns macrotime = sync, microtime 3.05 ps (not whole)",
       "bh.spc",
       [](std::span<const Tag> tags, const std::string& path) {
         writeSpcSet(std::filesystem::path(path).replace_extension(".set").string());
         writeFile(path, {}, bytesOf(spcRecords(tags)));
       }},
      {"quTAG binary", "10-byte records, 1 ps stamps", "qutag.bin",
       [](std::span<const Tag> tags, const std::string& path) {
         std::vector<std::uint8_t> header(40, 0);
         const std::uint8_t signature[4] = {0x87, 0xB3, 0x91, 0xFA};
         std::memcpy(header.data(), signature, 4);
         writeFile(path, header, bytesOf(qutagRecords(tags)));
       }},
  };
}

struct Drained {
  std::uint64_t tags = 0;
  std::uint64_t checksum = 0;
};

// What a graph's source task does with a file: open it, then fill one block after another.
Drained drainFile(const std::string& path, std::size_t block_size,
                  std::vector<std::string>* warnings = nullptr) {
  VendorFile file = openVendorFile(path, "auto");
  if (warnings != nullptr) *warnings = file.warnings;
  VendorFileSource source(std::move(file), block_size);
  BlockBuffer block;
  block.storage.reserve(source.maxBlockTags());
  Drained drained;
  while (source.next(block)) {
    drained.tags += block.tags.size();
    if (!block.tags.empty()) drained.checksum += static_cast<std::uint64_t>(block.tags.back().time);
  }
  return drained;
}

struct Row {
  std::string name;
  std::string setup;
  std::uint64_t bytes = 0;
  std::uint64_t tags = 0;
  double mtags = 0;     // median MTags/s out of the source
  double mrecords = 0;  // the same run's records per second
};

// Removes the files made in the folder, also when a row throws.
struct Cleanup {
  std::vector<std::string> paths;
  ~Cleanup() {
    std::error_code ignored;
    for (const auto& path : paths) std::filesystem::remove(path, ignored);
  }
};

Row measureFormat(const Format& format, std::span<const Tag> tags,
                  const VendorBenchOptions& options, Cleanup& cleanup, std::uint64_t& checksum) {
  const std::string path = options.folder + "/tagflow-vendor-bench-" + format.file;
  cleanup.paths.push_back(path);
  if (format.file.ends_with(".spc")) {
    cleanup.paths.push_back(std::filesystem::path(path).replace_extension(".set").string());
  }
  format.write(tags, path);
  Row row{format.name, format.setup, std::filesystem::file_size(path)};
  const VendorFile file = openVendorFile(path, "auto");
  const double records = static_cast<double>(file.records);
  std::vector<std::string> warnings;
  std::vector<double> rates, record_rates;
  for (int run = 0; run < options.runs; ++run) {
    const auto began = Clock::now();
    const Drained drained = drainFile(path, options.block_size, run == 0 ? &warnings : nullptr);
    const double seconds = secondsSince(began);
    rates.push_back(static_cast<double>(drained.tags) / seconds * 1e-6);
    record_rates.push_back(records / seconds * 1e-6);
    row.tags = drained.tags;
    checksum += drained.checksum;
  }
  for (const auto& warning : warnings) std::cout << "  warning: " << warning << "\n";
  row.mtags = median(rates);
  row.mrecords = median(record_rates);
  std::filesystem::remove(path);
  return row;
}

// ---- the memory row
// ------------------------------------------------------------------------------

struct MemoryRun {
  std::uint64_t bytes = 0;
  std::uint64_t tags = 0;
  long before_kib = 0;  // resident before opening the file
  long peak_kib = 0;    // peak resident after draining it
  long growth() const { return peak_kib - before_kib; }
};

long residentKiB() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

MemoryRun runMemoryChild(const std::string& path, std::size_t block_size) {
  // popen runs a shell, in which /proc/self/exe would be the shell: resolve it here.
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) {
    throw std::runtime_error("cannot resolve /proc/self/exe");
  }
  const std::string command = std::string(self) + " --vendor-memory-child '" + path +
                              "' --block-size " + std::to_string(block_size);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start " + command);
  MemoryRun run;
  unsigned long long tags = 0;
  const int fields = std::fscanf(pipe, "%llu %ld %ld", &tags, &run.before_kib, &run.peak_kib);
  if (pclose(pipe) != 0 || fields != 3) throw std::runtime_error("memory child failed: " + command);
  run.tags = tags;
  run.bytes = std::filesystem::file_size(path);
  return run;
}

struct MemoryFigures {
  bool done = false;
  std::string skipped;  // why not, when not done
  MemoryRun small, large;
};

// A generic T2 body (records of the stream's first tags, then one overflow record so that the
// next copy begins in a later overflow period) written once and repeated past 4 GiB.
MemoryFigures memoryRow(std::span<const Tag> tags, const VendorBenchOptions& options,
                        Cleanup& cleanup) {
  MemoryFigures figures;
  std::vector<std::uint32_t> body =
      genericT2Records(tags.first(std::min<std::size_t>(tags.size(), 10'000'000)));
  body.push_back(kSpecial | kOverflowChannel | 1);
  const std::uint64_t body_bytes = 4 * body.size();
  const std::size_t copies = (std::uint64_t{4} << 30) / body_bytes + 1;
  const std::uint64_t large_bytes = copies * body_bytes;
  struct statvfs room {};
  const std::uint64_t margin = std::uint64_t{1} << 30;
  if (statvfs(options.folder.c_str(), &room) != 0 ||
      static_cast<std::uint64_t>(room.f_bavail) * room.f_frsize < large_bytes + margin) {
    figures.skipped = "not enough room in " + options.folder + " for a " +
                      std::to_string(large_bytes >> 20) + " MiB file and 1 GiB to spare";
    return figures;
  }
  const std::string small = options.folder + "/tagflow-vendor-bench-small.ptu";
  const std::string large = options.folder + "/tagflow-vendor-bench-large.ptu";
  cleanup.paths.push_back(small);
  cleanup.paths.push_back(large);
  writeFile(small, ptuHeader(0x00010207, 1e-12, 1e-12, body.size()), bytesOf(body));
  writeFile(large, ptuHeader(0x00010207, 1e-12, 1e-12, body.size() * copies), bytesOf(body),
            copies);
  figures.small = runMemoryChild(small, options.block_size);
  figures.large = runMemoryChild(large, options.block_size);
  figures.done = true;
  std::filesystem::remove(small);
  std::filesystem::remove(large);
  return figures;
}

}  // namespace

int vendorMemoryChild(const std::string& path, std::size_t block_size) {
  const long before = residentKiB();
  const Drained drained = drainFile(path, block_size);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::cout << drained.tags << " " << before << " " << usage.ru_maxrss << std::endl;
  return 0;
}

int runVendorBench(const VendorBenchOptions& options) {
  const auto all = formats();
  if (std::none_of(all.begin(), all.end(),
                   [&](const Format& format) { return format.name.starts_with(options.only); })) {
    throw std::invalid_argument("--only " + options.only + ": no such format");
  }
  const std::string cpu = cpuModel();
  const auto stream = makeAnnouncedBenchStream(options.tags);
  const double scan = measureBareScan(*stream, options.runs);
  std::uint64_t checksum = 0;

  Cleanup cleanup;
  std::vector<Row> rows;
  for (const Format& format : all) {
    if (!format.name.starts_with(options.only)) continue;
    std::cout << format.name << "..." << std::endl;
    rows.push_back(measureFormat(format, *stream, options, cleanup, checksum));
  }
  MemoryFigures memory;
  if (options.only.empty()) {
    memory = memoryRow(*stream, options, cleanup);
  } else {
    memory.skipped = "--only " + options.only;
  }

  std::cout << std::fixed << "\n"
            << cpu << "; " << stream->size() << " tags of the demo stream encoded per format in "
            << options.folder << ", medians of " << options.runs << " runs, one core: open + "
            << "drain a VendorFileSource into blocks of " << options.block_size << " tags\n"
            << "plain scan of the 16-byte tags from memory: " << std::setprecision(1) << scan
            << " MTags/s\n\n"
            << std::left << std::setw(18) << "format" << std::right << std::setw(10) << "MB"
            << std::setw(13) << "tags out" << std::setw(10) << "MTags/s" << std::setw(8) << "ratio"
            << std::setw(12) << "MRecords/s"
            << "  setup\n";
  for (const Row& row : rows) {
    std::cout << std::left << std::setw(18) << row.name << std::right << std::setw(10)
              << std::setprecision(1) << static_cast<double>(row.bytes) * 1e-6 << std::setw(13)
              << row.tags << std::setw(10) << row.mtags << std::setw(8) << std::setprecision(2)
              << row.mtags / scan << std::setw(12) << std::setprecision(1) << row.mrecords << "  "
              << row.setup << "\n";
  }
  if (memory.done) {
    std::cout << std::setprecision(2) << "\nmemory (generic T2, child processes): "
              << static_cast<double>(memory.small.bytes) / (1 << 20) << " MiB file: peak RSS "
              << memory.small.peak_kib / 1024.0 << " MiB, growth while draining "
              << memory.small.growth() / 1024.0 << " MiB; "
              << static_cast<double>(memory.large.bytes) / (1 << 30) << " GiB file ("
              << memory.large.tags << " tags): peak RSS " << memory.large.peak_kib / 1024.0
              << " MiB, growth " << memory.large.growth() / 1024.0 << " MiB\n";
  } else {
    std::cout << "\nmemory row skipped: " << memory.skipped << "\n";
  }
  if (checksum == 42) std::cout << "";  // keeps the loops observable
  if (!options.json.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row& row : rows) {
      results.push_back({{"name", row.name},
                         {"setup", row.setup},
                         {"file_bytes", row.bytes},
                         {"tags", row.tags},
                         {"mtags_per_s", row.mtags},
                         {"mrecords_per_s", row.mrecords},
                         {"ratio_to_scan", row.mtags / scan}});
    }
    nlohmann::json json{
        {"cpu", cpu},           {"tags", stream->size()},   {"block_size", options.block_size},
        {"runs", options.runs}, {"scan_mtags_per_s", scan}, {"vendor", results}};
    if (memory.done) {
      const auto run = [](const MemoryRun& r) {
        return nlohmann::json{{"file_bytes", r.bytes},
                              {"tags", r.tags},
                              {"rss_before_kib", r.before_kib},
                              {"peak_rss_kib", r.peak_kib},
                              {"growth_kib", r.growth()}};
      };
      json["memory"] = {{"small", run(memory.small)}, {"large", run(memory.large)}};
    }
    writeJsonFile(options.json, json);
  }
  return 0;
}

}  // namespace tagflow::bench
