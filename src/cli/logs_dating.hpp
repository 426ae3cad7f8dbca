// cli/logs_dating: `preflight logs` dates a log that states no version by the formats of its printed lines (issue 15,
// date37: "date it from what is there ... the format of the printed lines"). Each line the log shows of
// data/engines/line_formats.json (logs/line_formats) bounds the releases that print it so; their intersection is a
// version window. An undated log runs on the newest profile inside the window, with the band over the profiles inside
// it; a stated version (a version line, an image tag, a "vX.Y" in the file's name) still wins, and one outside the
// window is said; a window that is
// empty (lines of incompatible versions) or holds no profile is said and not used. Internal to cli.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "deploy/version_band.hpp"
#include "engine/engine_profile.hpp"
#include "logs/engine_log.hpp"
#include "logs/line_formats.hpp"

namespace preflight::cli {

// One printed line that bounds the version, with its record.
struct DatingLine {
  std::string record;
  std::string version_min, version_max;  // "" = unbounded
  int64_t line = 0;
  std::string text;
};

struct LineDating {
  std::string engine;                     // the engine whose records were read (vllm, vllm-ascend)
  std::vector<DatingLine> lines;          // the log's lines of that engine's records
  std::optional<engine::Version> lo, hi;  // the window: the highest version_min, the lowest version_max
  int64_t lo_line = 0, hi_line = 0;       // the lines that set them
  bool empty_window = false;              // lo above hi: lines of incompatible versions
  std::vector<std::string> profiles;      // the profiles inside the window (the other evidence applied)
  bool applied = false;                   // the window chose the profile (the log states and dates no version)
  std::string version;                    // then the version it chose: the newest profile's lowest inside the window
  std::string decision;                   // what the window did, in words
  // "0.10.2 - 0.17.1", "0.10.2 or later", "up to 0.9.2".
  std::string window_text() const;
  bool contains(const engine::Version& v) const;
};

// The window of `log_text`'s lines for `engine` (the log's engine, --engine's, else vllm). Bad data (an unreadable
// embedded file) gives no lines, with the error in `decision`.
LineDating scan_line_dating(const std::string& log_text, const std::string& engine);

// Applies the window to the engine `in` resolves for `inputs` (the deployment logs predicts), as the header says: sets
// in.version_hint to the version chosen where the window dates an undated log, and dating.decision and profiles in every
// case. `v0_shown`: the log shows vLLM's V0 engine (its versions are kept to those with one).
void apply_line_dating(LineDating& dating, deploy::EngineInput& in, const deploy::Inputs& inputs, const deploy::Catalogs& catalogs, bool v0_shown);

// The band over the profiles inside the window (deploy::across_versions_within); empty unless the window chose the
// profile and holds two or more.
deploy::VersionBand line_dating_band(const LineDating& dating, const deploy::Inputs& inputs, const deploy::Catalogs& catalogs, bool v0_shown);

}  // namespace preflight::cli
