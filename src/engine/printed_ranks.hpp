// engine/printed_ranks: which workers of one engine print a per-worker start-up line, by engine and version
// (data/engines/printed_ranks.json, issue 15 pp35). Under pipeline parallelism every stage sizes its own KV budget and
// its workers print it ("Available KV cache memory"); which worker's line a log shows decides which stage's budget it
// is: every worker's (a log reader keeps the smallest), or only the first local rank's (PP stage 0 on one node).
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

enum class PrintingRanks { every_rank, local_first_rank };

struct PrintedRanksRecord {
  std::string id;
  std::vector<std::string> engines;
  Version version_min, version_max;
  std::string line;  // the line the record is about: "available_kv" ("Available KV cache memory" / "Available memory")
  PrintingRanks ranks = PrintingRanks::every_rank;
  std::string source;
};

struct PrintedRanks {
  std::vector<PrintedRanksRecord> records;
  std::string origin;
  // The record that covers `line` on `engine` at its rule version, or nullptr (no record: the smallest printed line is
  // the one kept, as every_rank).
  const PrintedRanksRecord* record_for(const EngineProfile& engine, const std::string& line) const;
};

// corrupt naming `origin` and the record: an unknown key, a duplicate id, a bad version range, an empty engine list, a
// line other than "available_kv", ranks other than every_rank / local_first_rank, an empty source, two records of one
// engine and line whose version ranges overlap.
Expected<PrintedRanks> parse_printed_ranks(const Json& root, const std::string& origin);
// The embedded data/engines/printed_ranks.json, parsed once per process.
const Expected<PrintedRanks>& shipped_printed_ranks();

}  // namespace preflight::engine
