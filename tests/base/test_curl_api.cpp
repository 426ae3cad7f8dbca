// base/curl_api and base/dynamic_library: libcurl is opened with dlopen on first use (issue 19,
// start-up time). The table binds every function; a missing library or symbol is an environment
// error naming both; and the real binary loads libcurl and libsqlite3 only in the commands that use
// them, checked through the dynamic loader's own trace (LD_DEBUG=files).
#include "base/curl_api.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../test_support.hpp"
#include "base/dynamic_library.hpp"

using preflight::ErrorKind;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The binary under the loader's trace of every shared object it opens, stderr included.
pftest::CliRun traced(const std::string& args) { return pftest::run_cli(args, {"LD_DEBUG=files timeout 30"}); }

}  // namespace

TEST(CurlApi, Issue19_LoadsAndCallsLibcurl) {
  auto api = preflight::load_curl_api();
  ASSERT_TRUE(api) << api.error().describe();
  const preflight::CurlApi& c = **api;
  EXPECT_STREQ(c.easy_strerror(CURLE_OK), "No error");
  CURL* easy = c.easy_init();
  ASSERT_NE(easy, nullptr);
  EXPECT_EQ(c.easy_setopt(easy, CURLOPT_URL, "http://127.0.0.1:9/"), CURLE_OK);
  long redirects = -1;
  EXPECT_EQ(c.easy_getinfo(easy, CURLINFO_REDIRECT_COUNT, &redirects), CURLE_OK);
  EXPECT_EQ(redirects, 0);
  c.easy_cleanup(easy);
  // Filled once: a second call returns the same table.
  auto again = preflight::load_curl_api();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *api);
}

TEST(CurlApi, Issue19_MissingLibraryOrSymbolIsEnvironment) {
  struct Case {
    const char* soname;
    const char* fragment;
  };
  const Case cases[] = {
      {"libpreflight-no-such-library.so.9", "cannot load libpreflight-no-such-library.so.9"},
      // A real library without the curl symbols: the first one looked up is named.
      {"libc.so.6", "libc.so.6: symbol curl_global_init not found"},
  };
  for (const auto& c : cases) {
    auto api = preflight::bind_curl_api(c.soname);
    ASSERT_FALSE(api) << c.soname;
    EXPECT_EQ(api.error().kind, ErrorKind::environment) << c.soname;
    EXPECT_TRUE(contains(api.error().message, c.fragment)) << api.error().message;
    EXPECT_EQ(api.error().context, c.soname);
  }
}

TEST(DynamicLibrary, Issue19_BindsTypedSymbol) {
  auto lib = preflight::DynamicLibrary::open("libc.so.6");
  ASSERT_TRUE(lib) << lib.error().describe();
  decltype(&::strlen) fn = nullptr;
  ASSERT_TRUE(lib->bind("strlen", fn));
  EXPECT_EQ(fn("preflight"), 9u);
  decltype(&::strlen) missing = nullptr;
  auto bad = lib->bind("preflight_no_such_symbol", missing);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::environment);
  EXPECT_EQ(missing, nullptr);  // unchanged on error
}

// `fit` and `--version` must not pay for libcurl (4.6-8 ms with its dependencies) or libsqlite3.
TEST(CurlApi, Issue19_FitAndVersionDoNotLoadCurlOrSqlite) {
  const char* commands[] = {
      "--version",
      "fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768",
  };
  for (const char* args : commands) {
    auto r = traced(args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out.substr(0, 2000);
    // The trace is there (so an absent name means something): libc is always opened.
    EXPECT_TRUE(contains(r.out, "file=libc.so.6")) << args;
    EXPECT_FALSE(contains(r.out, "libcurl")) << args;
    EXPECT_FALSE(contains(r.out, "libsqlite3")) << args;
  }
}

// `bench` loads both, on demand: a refused connection still makes a run record in the database.
TEST(CurlApi, Issue19_BenchLoadsCurlAndSqlite) {
  const std::string db = pftest::scratch_dir("issue19-bench") + "/bench.db";
  auto r = traced("bench --url http://127.0.0.1:9 --model m --num-prompts 1 --input-len 4 --output-len 4 --warmup 0 --db " + db);
  EXPECT_TRUE(contains(r.out, "file=libcurl.so.4")) << r.out.substr(0, 4000);
  EXPECT_TRUE(contains(r.out, "file=libsqlite3.so.0")) << r.out.substr(0, 4000);
  EXPECT_TRUE(contains(r.out, "dynamically loaded by")) << "libcurl should come from dlopen, not from the link";
}
