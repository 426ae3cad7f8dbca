// base/curl_api: the part of libcurl preflight calls, reached through a table of function pointers
// that is filled on first use by dlopen("libcurl.so.4"). Only the commands that touch the network
// (bench, fetches from a model hub) pay for loading libcurl and its dependencies; `fit` and
// `--version` never do (issue 19, start-up time). The header types come from <curl/curl.h> at build
// time; nothing links against libcurl.
#pragma once

#include <curl/curl.h>

#include "base/error.hpp"

namespace preflight {

// One member per libcurl function used by hub/http_fetcher and bench/runner, typed from its own
// declaration so that a signature change in the header is a compile error here.
struct CurlApi {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
  decltype(&::curl_multi_init) multi_init = nullptr;
  decltype(&::curl_multi_setopt) multi_setopt = nullptr;
  decltype(&::curl_multi_add_handle) multi_add_handle = nullptr;
  decltype(&::curl_multi_remove_handle) multi_remove_handle = nullptr;
  decltype(&::curl_multi_perform) multi_perform = nullptr;
  decltype(&::curl_multi_socket_action) multi_socket_action = nullptr;
  decltype(&::curl_multi_info_read) multi_info_read = nullptr;
  decltype(&::curl_multi_poll) multi_poll = nullptr;
  decltype(&::curl_multi_cleanup) multi_cleanup = nullptr;
};

// The soname opened; libcurl's ABI has been .so.4 since 7.16.
inline constexpr const char* k_curl_soname = "libcurl.so.4";

// Loads libcurl and runs curl_global_init(CURL_GLOBAL_DEFAULT) once per process (thread-safe); later
// calls return the same table, or the same error. Never null on success.
// environment naming the library, and the symbol when one is missing, or the failed initialisation.
Expected<const CurlApi*> load_curl_api();

// The loading step of load_curl_api() for any soname, without the once-per-process cache and without
// curl_global_init: tests point it at a missing library or at one without the curl symbols.
Expected<CurlApi> bind_curl_api(const char* soname);

}  // namespace preflight
