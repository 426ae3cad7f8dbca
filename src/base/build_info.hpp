#pragma once

namespace preflight {

// The git commit (12 hex digits) the build was configured at, or "unknown"; generated at configure time
// (cmake/build_info.cpp.in). The version is the compile definition PREFLIGHT_VERSION.
const char* build_commit();

}  // namespace preflight
