#include "base/curl_api.hpp"

#include <mutex>

#include "base/dynamic_library.hpp"

namespace preflight {

Expected<CurlApi> bind_curl_api(const char* soname) {
  PF_TRY(lib, DynamicLibrary::open(soname));
  CurlApi api;
  Status status = Ok{};
  auto bind = [&](const char* name, auto& out) {
    if (status) status = lib.bind(name, out);
  };
  bind("curl_global_init", api.global_init);
  bind("curl_easy_init", api.easy_init);
  bind("curl_easy_setopt", api.easy_setopt);
  bind("curl_easy_getinfo", api.easy_getinfo);
  bind("curl_easy_strerror", api.easy_strerror);
  bind("curl_easy_cleanup", api.easy_cleanup);
  bind("curl_slist_append", api.slist_append);
  bind("curl_slist_free_all", api.slist_free_all);
  bind("curl_multi_init", api.multi_init);
  bind("curl_multi_setopt", api.multi_setopt);
  bind("curl_multi_add_handle", api.multi_add_handle);
  bind("curl_multi_remove_handle", api.multi_remove_handle);
  bind("curl_multi_perform", api.multi_perform);
  bind("curl_multi_socket_action", api.multi_socket_action);
  bind("curl_multi_info_read", api.multi_info_read);
  bind("curl_multi_poll", api.multi_poll);
  bind("curl_multi_cleanup", api.multi_cleanup);
  if (!status) return status.error();
  return api;
}

Expected<const CurlApi*> load_curl_api() {
  // Filled once; the outcome, success or error, is kept so that every caller sees the same answer.
  static std::once_flag once;
  static CurlApi api;
  static Error error;
  static bool loaded = false;
  std::call_once(once, [] {
    auto bound = bind_curl_api(k_curl_soname);
    if (!bound) {
      error = bound.error();
      return;
    }
    // curl_global_init is not thread-safe before 7.84; call_once makes it run exactly once.
    if (const CURLcode code = bound->global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
      error = make_error(ErrorKind::environment, std::string(k_curl_soname) + ": curl_global_init failed (" + bound->easy_strerror(code) + ")", k_curl_soname);
      return;
    }
    api = *bound;
    loaded = true;
  });
  if (!loaded) return error;
  return &api;
}

}  // namespace preflight
