internal import CMosquitto
import Foundation

/// The network thread every `MQTTClient` of the process shares: one `poll(2)` over all their
/// sockets, driving libmosquitto through its external-loop calls (`mosquitto_loop_read`,
/// `_write`, `_misc`). One thread serves one client or a thousand (a process simulating many
/// agents), and no file-descriptor limit of `select(2)` applies.
///
/// Every libmosquitto call on a client's handle runs on this thread (`perform`), so the
/// library is used single-threaded, as its external loop expects; the only exception is the
/// blocking connect, which runs on a worker thread while the loop leaves that handle alone.
final class MQTTLoop: @unchecked Sendable {
  /// The process's loop, started on first use.
  static let shared = MQTTLoop()

  private let lock = NSLock()
  private var queued: [() -> Void] = []
  private var woken = false
  private let wakeRead: Int32
  private let wakeWrite: Int32
  /// Clients served; touched on the loop thread only.
  private var clients: [ObjectIdentifier: MQTTClient] = [:]

  private init() {
    mosquitto_lib_init()
    var descriptors: [Int32] = [-1, -1]
    _ = pipe(&descriptors)
    for descriptor in descriptors {
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }
    wakeRead = descriptors[0]
    wakeWrite = descriptors[1]
    let thread = Thread { [unowned self] in self.run() }
    thread.name = "tsapply-mqtt"
    thread.start()
  }

  /// Runs `work` on the loop thread, soon.
  func perform(_ work: @escaping () -> Void) {
    lock.lock()
    queued.append(work)
    let wake = !woken
    woken = true
    lock.unlock()
    if wake {
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
    }
  }

  /// Starts serving `client` (loop thread).
  func add(_ client: MQTTClient) { clients[ObjectIdentifier(client)] = client }

  /// Stops serving `client` (loop thread).
  func remove(_ client: MQTTClient) { clients[ObjectIdentifier(client)] = nil }

  private func run() {
    let clock = ContinuousClock()
    var lastHousekeeping = clock.now
    var descriptors: [pollfd] = []
    var polled: [MQTTClient] = []
    while true {
      lock.lock()
      let work = queued
      queued = []
      woken = false
      lock.unlock()
      for item in work { item() }

      let now = clock.now
      var timeout = Duration.seconds(1)
      descriptors.removeAll(keepingCapacity: true)
      polled.removeAll(keepingCapacity: true)
      descriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
      for client in clients.values {
        if let due = client.reconnectDue(now: now) { timeout = min(timeout, due) }
        guard let socket = client.pollSocket() else { continue }
        if client.usesTLS { timeout = min(timeout, .milliseconds(50)) }
        let events = Int16(POLLIN) | (client.wantsWrite ? Int16(POLLOUT) : 0)
        descriptors.append(pollfd(fd: socket, events: events, revents: 0))
        polled.append(client)
      }
      let milliseconds = Int32(max(0, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
      _ = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
      if descriptors[0].revents != 0 {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
      }
      for (index, client) in polled.enumerated() {
        let events = descriptors[index + 1].revents
        // TLS may hold decrypted bytes that poll cannot see, so a TLS client is read every turn.
        if events & Int16(POLLIN | POLLERR | POLLHUP) != 0 || client.usesTLS { client.readReady() }
        if events & Int16(POLLOUT) != 0 { client.writeReady() }
      }
      if clock.now - lastHousekeeping >= .milliseconds(500) {
        lastHousekeeping = clock.now
        for client in clients.values { client.housekeeping() }
      }
    }
  }
}
