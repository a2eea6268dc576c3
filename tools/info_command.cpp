// `tagflow info FILE`: what a time-tag file holds, as a table or, with --json, as a JSON
// object. A vendor's file: from its header, the format, the records, and every header entry
// with its type and value (format, path, size, records, missing_records, data_offset, warnings,
// provenance, header). A tagflow recording: its header, and per part its size and time index
// (records listed, the time range they cover), from the parts' last bytes only.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <variant>

#include "commands.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"
#include "tagflow/io/truncated_data.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace tagflow::cli {

namespace {

nlohmann::json provenanceJson(const Parameters& provenance) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [key, value] : provenance.entries()) {
    std::visit([&, &key = key](const auto& v) { json[key] = v; }, value);
  }
  return json;
}

void printJson(const VendorFile& file) {
  nlohmann::json header = nlohmann::json::array();
  for (const HeaderField& field : file.header.fields()) {
    header.push_back({{"name", field.name}, {"type", field.type}, {"value", field.value}});
  }
  const nlohmann::json json{{"path", file.path},
                            {"format", file.format},
                            {"size", file.file_size},
                            {"records", file.records},
                            {"missing_records", file.missing_records},
                            {"data_offset", file.data_offset},
                            {"warnings", file.warnings},
                            {"provenance", provenanceJson(file.provenance)},
                            {"header", header}};
  std::cout << json.dump(2) << "\n";
}

void printTable(const VendorFile& file) {
  std::cout << fmt::format("{}\n  format  {}\n  size    {} bytes\n  records {} from byte {}\n",
                           file.path, file.format, file.file_size, file.records, file.data_offset);
  if (file.missing_records != 0) {
    std::cout << fmt::format("  truncated: the header counts {} more records than the file holds\n",
                             file.missing_records);
  }
  for (const std::string& warning : file.warnings) std::cout << "  warning: " << warning << "\n";
  std::size_t name_width = 4, type_width = 4;
  for (const HeaderField& field : file.header.fields()) {
    name_width = std::max(name_width, field.name.size());
    type_width = std::max(type_width, field.type.size());
  }
  std::cout << fmt::format("\n{:<{}}  {:<{}}  value\n", "name", name_width, "type", type_width);
  for (const HeaderField& field : file.header.fields()) {
    std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", field.name, name_width, field.type, type_width,
                             field.value);
  }
}

bool isTagFile(const std::string& path) {
  std::array<char, tagfile::kFileMagic.size()> magic{};
  std::ifstream file(path, std::ios::binary);
  file.read(magic.data(), magic.size());
  return file &&
         std::equal(magic.begin(), magic.end(), tagfile::kFileMagic.begin(),
                    [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; });
}

// A part without a time index, read through from its start, every record checked: its tags
// records, their tags and time range, and where reading it stops short ("problem"; null when
// it ends with its part end).
nlohmann::json readThrough(const std::string& path) {
  TagFileReader reader(path);
  TagFileReader::Record record;
  std::vector<Tag> tags;
  std::uint64_t records = 0, tag_count = 0;
  nlohmann::json read{{"problem", nullptr}};
  try {
    while (reader.next(record, tags)) {
      if (record.header.kind != tagfile::RecordKind::Tags) continue;
      if (records++ == 0) read["begin_ps"] = record.header.begin_time;
      read["end_ps"] = record.header.end_time;
      tag_count += record.header.tag_count;
    }
  } catch (const TruncatedData& cut) {
    read["problem"] = std::string("cut short: ") + cut.what();
  } catch (const DataError& damage) {
    read["problem"] = std::string("damaged: ") + damage.what();
  }
  read["records"] = records;
  read["tags"] = tag_count;
  return read;
}

// The parts from `path` on (all of the set when it is part 0), each with its index, or what
// reading it through found where it has none.
nlohmann::json tagFileJson(const std::string& path) {
  TagFileReader first(path);
  const tagfile::FileHeader& header = first.header();
  nlohmann::json parts = nlohmann::json::array();
  std::optional<StreamSpan> span;
  bool every_part_indexed = true;
  std::string part_path = path;
  for (std::uint32_t part = header.part;; ++part) {
    TagFileReader reader(part_path);
    const std::optional<tagfile::PartIndex> index = reader.readIndex();
    nlohmann::json entry{{"part", part},
                         {"path", part_path},
                         {"size", std::filesystem::file_size(part_path)},
                         {"index", nullptr}};
    if (index) {
      entry["index"] = {{"records", index->entries.size()}};
      if (!index->entries.empty()) {
        entry["index"]["begin_ps"] = index->entries.front().begin_time;
        entry["index"]["end_ps"] = index->entries.back().end_time;
        if (!span) span = StreamSpan{index->entries.front().begin_time, 0};
        span->end = index->entries.back().end_time;
      }
    } else {
      every_part_indexed = false;
      entry["read"] = readThrough(part_path);
    }
    parts.push_back(entry);
    if (!index || !index->continues || header.part != 0) break;
    part_path = TagFileWriter::partPath(path, part + 1);
  }
  nlohmann::json json{{"format", "tagflow tag file"},
                      {"path", path},
                      {"recording_id", header.recording_id},
                      {"software", header.software},
                      {"channels", header.channels},
                      {"configuration", header.configuration},
                      {"parts", parts},
                      {"seekable", every_part_indexed}};
  if (every_part_indexed && span) json["span_ps"] = {span->begin, span->end};
  return json;
}

void printTagFileTable(const nlohmann::json& json) {
  std::cout << fmt::format("{}\n  format     {}\n  software   {}\n  recording  {:016x}\n",
                           json["path"].get<std::string>(), json["format"].get<std::string>(),
                           json["software"].get<std::string>(),
                           json["recording_id"].get<std::uint64_t>());
  std::cout << "  channels   " << (json["channels"].empty() ? "all" : json["channels"].dump())
            << "\n";
  if (json.contains("span_ps")) {
    const auto begin = json["span_ps"][0].get<std::int64_t>();
    const auto end = json["span_ps"][1].get<std::int64_t>();
    std::cout << fmt::format("  span       [{}, {}) ps, {:.6f} s; seekable by its time index\n",
                             begin, end, static_cast<double>(end - begin) * 1e-12);
  } else {
    std::cout << "  span       unknown: a part has no time index (cut while recording?); "
                 "it was read through from its start (below); seeking does not work\n";
  }
  std::cout << fmt::format("\n  {:>4}  {:>12}  {:>9}  {}\n", "part", "bytes", "records",
                           "time range (ps)");
  for (const auto& part : json["parts"]) {
    const auto& index = part["index"];
    const auto& read = part.contains("read") ? part["read"] : index;
    const std::string records = std::to_string(read["records"].get<std::size_t>());
    std::string range = read.contains("begin_ps")
                            ? fmt::format("[{}, {})", read["begin_ps"].get<std::int64_t>(),
                                          read["end_ps"].get<std::int64_t>())
                            : "empty";
    if (index.is_null()) {
      range += fmt::format(", no index: read through, {} tags", read["tags"].get<std::uint64_t>());
    }
    std::cout << fmt::format("  {:>4}  {:>12}  {:>9}  {}\n", part["part"].get<std::uint32_t>(),
                             part["size"].get<std::uint64_t>(), records, range);
    if (index.is_null() && !read["problem"].is_null()) {
      std::cout << "        " << read["problem"].get<std::string>() << "\n";
    }
  }
}

}  // namespace

int infoCommand(const InfoOptions& options) {
  if (options.format == "auto" && isTagFile(options.path)) {
    const nlohmann::json json = tagFileJson(options.path);
    if (options.json) {
      std::cout << json.dump(2) << "\n";
    } else {
      printTagFileTable(json);
    }
    return 0;
  }
  if (options.format == "auto" && detectVendorFormat(options.path).empty()) {
    throw InvalidArgument(fmt::format(
        "the format of '{}' is not recognised (valid: a tagflow tag file, which begins with "
        "the bytes \\x89TAGF, or {}; name a vendor format with --format where the file lacks a "
        "signature)",
        options.path, fmt::join(vendorFormats(), ", ")));
  }
  const VendorFile file = openVendorFile(options.path, options.format);
  if (options.json) {
    printJson(file);
  } else {
    printTable(file);
  }
  return 0;
}

}  // namespace tagflow::cli
