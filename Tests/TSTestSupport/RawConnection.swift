import Foundation

/// A plain TCP connection to 127.0.0.1, for peers that speak HTTP badly on purpose. Its reads
/// block: call them through `offThePool` (the bridge's handlers need the pooled threads).
public struct RawConnection: Sendable {
  public let socket: Int32

  /// Connects to 127.0.0.1:`port`.
  public init(port: UInt16) throws {
    socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard socket >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    // 30 s: a handler runs on the shared thread pool, which the start of a full `swift test` on
    // two cores can keep busy for more than 10 s.
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  /// Sends `text` (no SIGPIPE when the server closed the connection); whether all of it went.
  @discardableResult
  public func send(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return Foundation.send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
  }

  /// Everything the server sends until it closes the connection or `until` appears (at most 30 s
  /// without a byte, and 120 s in all: a stream that never ends, such as `/events`' heartbeats,
  /// ends the test's wait instead of hanging the suite).
  public func receive(until marker: String? = nil) -> String {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = Date().addingTimeInterval(120)
    while Date() < deadline {
      let count = recv(socket, &buffer, buffer.count, 0)
      if count <= 0 { break }
      received += buffer[..<count]
      if let marker, String(decoding: received, as: UTF8.self).contains(marker) { break }
    }
    return String(decoding: received, as: UTF8.self)
  }

  /// Whether the server closed the connection (a read sees its end within `seconds`).
  public func closedByServer(within seconds: Int) -> Bool {
    var pollFD = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    guard poll(&pollFD, 1, Int32(seconds * 1000)) > 0 else { return false }
    var byte: UInt8 = 0
    return recv(socket, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
  }

  public func close() { _ = Foundation.close(socket) }
}
