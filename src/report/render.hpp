// report/render: turns ModelSpec, FitEstimate and ValidationReport records into text tables and
// JSON. Formatting only; every number shown comes from the record.
#pragma once

#include <string>

#include "base/json_util.hpp"
#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"
#include "model/model_spec.hpp"
#include "validate/validation.hpp"

namespace preflight::report {

struct Style {
  bool color = false;
};

Json inspect_to_json(const model::ModelSpec& spec);
std::string render_inspect(const model::ModelSpec& spec, const Style& style);

// Issue 15: fit's prediction over the engine versions it could be, when no version is given or dated: the KV
// tokens' range and each profile's verdict (empty string / null for an empty band).
std::string render_version_band(const deploy::VersionBand& band, const Style& st);
// The same with the reason the versions are uncertain in place of "no version given and nothing dates one" (issue 15,
// date37: "version not stated; the versions the formats of the printed lines allow, 0.10.2 or later").
std::string render_version_band(const deploy::VersionBand& band, const Style& st, const std::string& reason);
Json version_band_to_json(const deploy::VersionBand& band);
// Issue 15/16 (nccl): the estimate under each plausible interconnect when none was given (deploy::across_interconnects).
std::string render_interconnect_band(const deploy::InterconnectBand& band, const Style& st);
Json interconnect_band_to_json(const deploy::InterconnectBand& band);
Json fit_to_json(const model::ModelSpec& spec, const estimate::FitEstimate& fit, int64_t largest_context);
std::string render_fit(const model::ModelSpec& spec, const estimate::FitEstimate& fit, int64_t largest_context,
                       const std::vector<std::string>& fixes, const Style& style);

std::string render_validation(const validate::ValidationReport& report, const Style& style);

// Envelope every JSON output carries: schema version, tool version, build commit.
Json envelope(const std::string& command);

}  // namespace preflight::report
