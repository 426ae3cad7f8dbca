#pragma once

namespace preflight {

// The git commit (12 hex digits) checked out when the preflight executable was built, or "unknown"; generated into
// that executable at every build (cmake/build_info.cmake); other programs get "unknown" (src/base/build_info.cpp).
// The version is the compile definition PREFLIGHT_VERSION.
const char* build_commit();

}  // namespace preflight
