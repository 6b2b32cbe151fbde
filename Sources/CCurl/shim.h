// libcurl (Debian libcurl4-openssl-dev, Homebrew curl; pkg-config libcurl) for TSHTTPClient.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: the inline
// functions below call them with one argument of each type TSHTTPClient passes.
#include <stddef.h>
#include <curl/curl.h>

/// The signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
typedef size_t (*tscurl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode tscurl_set_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tscurl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}

/// For options taking a string (libcurl copies it).
static inline CURLcode tscurl_set_string(CURL *handle, CURLoption option, const char *value) {
  return curl_easy_setopt(handle, option, value);
}

/// For options taking a `curl_slist *` or a context pointer.
static inline CURLcode tscurl_set_pointer(CURL *handle, CURLoption option, const void *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tscurl_set_callback(CURL *handle, CURLoption option, tscurl_data_callback callback) {
  return curl_easy_setopt(handle, option, callback);
}

/// Limits `handle` to the protocols in `list` ("http" or "http,https"), redirects included.
static inline CURLcode tscurl_set_protocols(CURL *handle, const char *list) {
#if LIBCURL_VERSION_NUM >= 0x075500
  CURLcode result = curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, list);
  if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, list);
  return result;
#else
  long mask = CURLPROTO_HTTP;
  if (list[0] != 0 && list[4] == ',') mask |= CURLPROTO_HTTPS;
  CURLcode result = curl_easy_setopt(handle, CURLOPT_PROTOCOLS, mask);
  if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS, mask);
  return result;
#endif
}

/// The signature of CURLOPT_PREREQFUNCTION: called each time the request is about to go out
/// on a connection (again when libcurl resends it on a new one); returns CURL_PREREQFUNC_OK (0).
typedef int (*tscurl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port);

/// Sets CURLOPT_PREREQFUNCTION and its context (libcurl 7.80.0 or later; CURLE_UNKNOWN_OPTION
/// before, where a caller cannot count the times a request was sent).
static inline CURLcode tscurl_set_prereq(CURL *handle, tscurl_prereq_callback callback, void *context) {
#if LIBCURL_VERSION_NUM >= 0x075000
  CURLcode result = curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
  if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_PREREQDATA, context);
  return result;
#else
  (void)handle; (void)callback; (void)context;
  return CURLE_UNKNOWN_OPTION;
#endif
}

static inline CURLcode tscurl_get_long(CURL *handle, CURLINFO info, long *value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode tscurl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
  return curl_easy_getinfo(handle, info, value);
}

/// CURLINFO_PRIVATE: the pointer set with CURLOPT_PRIVATE.
static inline CURLcode tscurl_get_private(CURL *handle, void **value) {
  return curl_easy_getinfo(handle, CURLINFO_PRIVATE, value);
}

/// The result of a finished transfer's message (its `data` union's `result`).
static inline CURLcode tscurl_message_result(const CURLMsg *message) {
  return message->data.result;
}
