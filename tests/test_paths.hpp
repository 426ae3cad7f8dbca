// Where the tests find the checkout, ../shared, the built binary and the test peers.
//
// Each test target is compiled with `-include` of this header. The paths themselves live in one generated file per
// build directory (test_paths.cpp, written by tests/CMakeLists.txt), so no test object's compile line carries a
// checkout-specific path: two checkouts share their compiled test objects through ccache.
#pragma once

namespace pftest::paths {
const char* shared_dir();          // ../shared beside the checkout (real configs and validation cases)
const char* source_dir();          // the checkout's root
const char* preflight_binary();    // the built preflight
const char* fake_acl_lib();        // the fake libascendcl.so (tests/probe/fake_runtime)
const char* fake_cudart_lib();     // the fake libcudart.so
const char* fake_server_binary();  // tests/fake_server's OpenAI-compatible peer
}  // namespace pftest::paths

#define PREFLIGHT_SHARED_DIR (::pftest::paths::shared_dir())
#define PREFLIGHT_SOURCE_DIR (::pftest::paths::source_dir())
#define PREFLIGHT_BINARY (::pftest::paths::preflight_binary())
#define FAKE_ACL_LIB (::pftest::paths::fake_acl_lib())
#define FAKE_CUDART_LIB (::pftest::paths::fake_cudart_lib())
#define FAKE_SERVER_BINARY (::pftest::paths::fake_server_binary())
