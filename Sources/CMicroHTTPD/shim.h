// libmicrohttpd (Debian libmicrohttpd-dev, pkg-config libmicrohttpd) for TSHTTPServer.
// MHD_start_daemon and MHD_get_daemon_info are variadic, which Swift cannot call: the two
// inline functions below call them with the fixed option lists TSHTTPServer uses.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/// The request context `tshttp_uri_logger` gives a request whose URI, as sent, holds `%00`:
/// libmicrohttpd decodes it into a NUL, which ends the path and query the handler sees (a path
/// `/v1/watches%00zzz` would be taken for `/v1/watches`). Never a pointer to anything.
#define TSHTTP_URI_HOLDS_NUL ((void *)(uintptr_t)1)

/// libmicrohttpd's URI log callback (MHD_OPTION_URI_LOG_CALLBACK), called once per request
/// with the URI before it is decoded: `TSHTTP_URI_HOLDS_NUL` when it holds `%00`, else NULL
/// (the first call of the access handler then finds no context, as without the callback).
static inline void *tshttp_uri_logger(void *cls, const char *uri, struct MHD_Connection *connection) {
  (void)cls;
  (void)connection;
  for (const char *p = uri; p && p[0]; p++) {
    if (p[0] == '%' && p[1] == '0' && p[2] == '0') return TSHTTP_URI_HOLDS_NUL;
  }
  return NULL;
}

/// Whether `context` is `TSHTTP_URI_HOLDS_NUL`.
static inline int tshttp_uri_holds_nul(const void *context) { return context == TSHTTP_URI_HOLDS_NUL; }

/// Starts a daemon with one thread per connection, bound to `address`, calling `handler` for
/// each request, `completed` when a request ends and `notify` when a connection starts or closes;
/// a request whose URI holds `%00` comes to `handler` with `TSHTTP_URI_HOLDS_NUL` as its context.
/// `timeout` is seconds of idleness before a connection is closed (0: never); `limit` the most
/// connections at once; `memory` the bytes each connection may use for its request line and
/// header fields (libmicrohttpd refuses more itself: 414 or 431).
static inline struct MHD_Daemon *tshttp_start(unsigned int flags, const struct sockaddr *address,
                                              MHD_AccessHandlerCallback handler, void *handler_cls,
                                              MHD_RequestCompletedCallback completed, void *completed_cls,
                                              MHD_NotifyConnectionCallback notify, void *notify_cls,
                                              unsigned int timeout, unsigned int limit, size_t memory) {
  return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                          MHD_OPTION_SOCK_ADDR, address,
                          MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                          MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                          MHD_OPTION_URI_LOG_CALLBACK, tshttp_uri_logger, NULL,
                          MHD_OPTION_CONNECTION_TIMEOUT, timeout,
                          MHD_OPTION_CONNECTION_LIMIT, limit,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
                          MHD_OPTION_END);
}

/// The port the daemon listens on (the one the system chose for port 0), or 0.
static inline uint16_t tshttp_port(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info ? info->port : 0;
}

/// The socket of `connection`, or -1.
static inline int tshttp_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}

/// The IPv4 address (network byte order) `connection` comes from, or 0.
static inline uint32_t tshttp_connection_ipv4(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr || info->client_addr->sa_family != AF_INET) return 0;
  return ((const struct sockaddr_in *)info->client_addr)->sin_addr.s_addr;
}
