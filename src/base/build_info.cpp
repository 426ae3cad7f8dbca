#include "base/build_info.hpp"

namespace preflight {

// The default for binaries other than `preflight` (the test and benchmark programs): weak, so the definition generated
// into the preflight executable (cmake/build_info.cpp.in) takes its place there, and only that executable relinks when
// the commit changes.
[[gnu::weak]] const char* build_commit() { return "unknown"; }

}  // namespace preflight
