internal import CMosquitto
import TSModel
import Foundation

/// One MQTT 3.1.1 connection over libmosquitto: it connects, keeps reconnecting (with backoff)
/// until closed, subscribes to its filters when it first connects and whenever the broker has
/// no session for it (so a reconnection to a kept session brings only what was queued; with
/// `Configuration.resubscribes`, on every connection), and
/// delivers messages to a handler. Publishing waits for the broker's acknowledgement (PUBACK
/// for QoS 1).
///
/// ```swift
/// let client = try MQTTClient(address: try MQTTAddress(parsing: "mqtt://127.0.0.1:1883"),
///                             configuration: .init(clientID: "tsapply-agent-ward-a", cleanSession: false,
///                                                  subscriptions: ["tsapply/v1/ward-a/+/desired"]),
///                             onMessage: { message in … }, onConnection: { event in … })
/// client.connect()
/// try await client.ready(within: .seconds(10))
/// try await client.publish("tsapply/v1/ward-a/room-12/status", payload: bytes, qos: 1, retain: true)
/// ```
///
/// Every client of the process shares one network thread (`MQTTLoop`); the handlers run on it
/// and must return quickly (hand work to a task).
public final class MQTTClient: @unchecked Sendable {
  /// The message the broker publishes for this client when it goes away without saying so
  /// (MQTT's Last Will).
  public struct Will: Sendable {
    /// Topic of the will.
    public var topic: String
    /// Its payload.
    public var payload: [UInt8]
    /// QoS 0–2.
    public var qos: Int
    /// Whether the broker keeps it as the topic's retained message.
    public var retain: Bool
    /// A will on `topic`.
    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = true) {
      self.topic = topic
      self.payload = payload
      self.qos = qos
      self.retain = retain
    }
  }

  /// TLS settings for an `mqtts://` address.
  public struct TLS: Sendable {
    /// PEM file of the certificate authorities that sign the broker's certificate; `nil` uses
    /// the system's (`caDirectory`).
    public var caFile: String?
    /// Directory of CA certificates (default `/etc/ssl/certs`).
    public var caDirectory: String?
    /// Client certificate (PEM), for brokers that authenticate clients by certificate.
    public var certificateFile: String?
    /// The client certificate's private key (PEM).
    public var keyFile: String?
    /// TLS settings; without a CA file the system's certificate directory is used.
    public init(caFile: String? = nil, caDirectory: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
      self.caFile = caFile
      self.caDirectory = caDirectory
      self.certificateFile = certificateFile
      self.keyFile = keyFile
    }
  }

  /// How the client connects.
  public struct Configuration: Sendable {
    /// The client identifier: a persistent session is the broker's memory of this name.
    public var clientID: String
    /// `false` asks the broker to keep the session (subscriptions and queued QoS 1 messages)
    /// while the client is away.
    public var cleanSession: Bool
    /// Filters subscribed to (with `subscriptionQoS`) on the client's first connection and
    /// whenever the broker has no session for it — on every connection with `resubscribes`.
    public var subscriptions: [String]
    /// Subscribe again on every connection, a kept session too, so the broker sends its
    /// retained messages again: a broker restored from an older save holds older ones than the
    /// client was sent, and says nothing of it otherwise (a fleet agent's desired documents).
    /// What the kept session queued still comes first; a retained message already had comes
    /// again. `false` by default.
    public var resubscribes = false
    /// The QoS of the subscriptions (1 by default: the broker queues what a kept session
    /// misses). A subscriber that reads retained messages in bulk takes 0: Mosquitto then sends
    /// every retained message at once, in order, instead of 20 at a time behind its in-flight
    /// window, holding at most `max_queued_messages` of the rest and dropping what is beyond.
    public var subscriptionQoS: Int
    /// Seconds between keep-alive pings; the broker drops the client after 1.5 times that.
    public var keepAlive: Int
    /// The Last Will, if any.
    public var will: Will?
    /// User name and password, if the broker asks for them.
    public var username: String?
    /// Password for `username`.
    public var password: String?
    /// TLS settings; required for an `mqtts://` address (defaults are used when `nil`).
    public var tls: TLS?
    /// First and longest wait between reconnection attempts (doubling in between, with jitter:
    /// `Backoff`).
    public var reconnectDelay: (first: Duration, longest: Duration)

    /// A configuration; the session is kept (`cleanSession: false`) only when asked.
    public init(clientID: String, cleanSession: Bool = true, subscriptions: [String] = [], subscriptionQoS: Int = 1, keepAlive: Int = 30,
                will: Will? = nil, username: String? = nil, password: String? = nil, tls: TLS? = nil,
                reconnectDelay: (first: Duration, longest: Duration) = (.milliseconds(500), .seconds(30))) {
      self.clientID = clientID
      self.cleanSession = cleanSession
      self.subscriptions = subscriptions
      self.subscriptionQoS = subscriptionQoS
      self.keepAlive = keepAlive
      self.will = will
      self.username = username
      self.password = password
      self.tls = tls
      self.reconnectDelay = reconnectDelay
    }
  }

  /// A message the broker delivered.
  public struct Message: Sendable {
    /// Its topic.
    public var topic: String
    /// Its payload.
    public var payload: [UInt8]
    /// Whether it is a retained message sent because the client subscribed.
    public var retained: Bool
  }

  /// A change of the connection.
  public enum ConnectionEvent: Sendable {
    /// Connected and subscribed; `sessionPresent` when the broker kept the session.
    case ready(sessionPresent: Bool)
    /// The connection was lost or could not be made; the client tries again.
    case lost(String)
    /// The broker refused the client (credentials, authorisation); the client tries again
    /// after the longest delay.
    case refused(MQTTError)
  }

  /// The broker's address.
  public let address: MQTTAddress
  /// How the client connects.
  public let configuration: Configuration
  private let onMessage: @Sendable (Message) -> Void
  private let onConnection: @Sendable (ConnectionEvent) -> Void
  private let loop = MQTTLoop.shared

  // Loop-thread state.
  private var handle: OpaquePointer?
  private var wanted = false
  private var connecting = false
  private var ready = false
  private var attempt = 0
  private var reconnectAt: ContinuousClock.Instant?
  private var connectedOnce = false
  private var publishes: [Int32: (token: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
  private var publishTokens: [Int: Int32] = [:]
  private var cancelledTokens: Set<Int> = []
  private let tokens = TokenCounter()
  private var subscribing: Int32?
  private var subscribedOnce = false
  private var sessionPresent = false
  private var lastRefusal: MQTTError?
  /// Why the last attempt to connect, or the last connection, ended.
  private var lastProblem: String?
  private let logLock = NSLock()
  private var loggedError: String?
  private var closeWaiters: [CheckedContinuation<Void, Never>] = []

  /// Whether the handle speaks TLS (read every loop turn).
  let usesTLS: Bool

  /// A client for `address`; nothing happens until `connect()`.
  /// - Throws: `MQTTError.library` when libmosquitto cannot make a client (out of memory, a
  ///   will or TLS file it refuses).
  public init(address: MQTTAddress, configuration: Configuration,
              onMessage: @escaping @Sendable (Message) -> Void,
              onConnection: @escaping @Sendable (ConnectionEvent) -> Void = { _ in }) throws(MQTTError) {
    self.address = address
    self.configuration = configuration
    self.onMessage = onMessage
    self.onConnection = onConnection
    usesTLS = address.usesTLS
    _ = MQTTLoop.shared
    guard let handle = mosquitto_new(configuration.clientID, configuration.cleanSession, nil) else {
      throw .library("cannot create an MQTT client: \(String(cString: strerror(errno)))")
    }
    self.handle = handle
    mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
    do throws(MQTTError) {
      try configure(handle)
    } catch {
      mosquitto_destroy(handle)
      self.handle = nil
      throw error
    }
  }

  deinit {
    if let handle { mosquitto_destroy(handle) }
  }

  private func configure(_ handle: OpaquePointer) throws(MQTTError) {
    func check(_ rc: Int32, _ what: String) throws(MQTTError) {
      guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw .library("\(what): \(String(cString: mosquitto_strerror(rc)))") }
    }
    if let will = configuration.will {
      try check(will.payload.withUnsafeBytes {
        mosquitto_will_set(handle, will.topic, Int32($0.count), $0.baseAddress, Int32(will.qos), will.retain)
      }, "cannot set the last will on \(will.topic)")
    }
    if let username = configuration.username {
      try check(mosquitto_username_pw_set(handle, username, configuration.password), "cannot set the user name")
    }
    if address.usesTLS {
      let tls = configuration.tls ?? TLS()
      let directory = tls.caFile == nil ? (tls.caDirectory ?? "/etc/ssl/certs") : tls.caDirectory
      try check(mosquitto_tls_set(handle, tls.caFile, directory, tls.certificateFile, tls.keyFile, nil),
                "cannot use the TLS files (CA \(tls.caFile ?? directory ?? "-"), certificate \(tls.certificateFile ?? "-"))")
    }
    mosquitto_connect_with_flags_callback_set(handle) { _, object, rc, flags in
      MQTTClient.from(object)?.connected(rc: rc, flags: flags)
    }
    mosquitto_disconnect_callback_set(handle) { _, object, rc in
      MQTTClient.from(object)?.disconnected(rc: rc)
    }
    mosquitto_publish_callback_set(handle) { _, object, mid in
      MQTTClient.from(object)?.published(mid: mid)
    }
    mosquitto_subscribe_callback_set(handle) { _, object, mid, _, _ in
      MQTTClient.from(object)?.subscribed(mid: mid)
    }
    mosquitto_log_callback_set(handle) { _, object, level, text in
      // MOSQ_LOG_ERR: libmosquitto's reason for a failed TLS handshake, among others.
      guard level & 8 != 0, let text, let client = MQTTClient.from(object) else { return }
      client.noteError(String(cString: text))
    }
    mosquitto_message_callback_set(handle) { _, object, message in
      guard let client = MQTTClient.from(object), let message = message?.pointee else { return }
      let topic = message.topic.map { String(cString: $0) } ?? ""
      let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
      client.onMessage(Message(topic: topic, payload: payload, retained: message.retain))
    }
  }

  /// The last error libmosquitto logged (it logs from the connecting thread too).
  private func noteError(_ text: String?) {
    logLock.lock()
    loggedError = text
    logLock.unlock()
  }

  private var lastLoggedError: String? {
    logLock.lock()
    defer { logLock.unlock() }
    return loggedError
  }

  private static func from(_ object: UnsafeMutableRawPointer?) -> MQTTClient? {
    object.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
  }

  // MARK: Public operations

  /// Starts connecting; the client reconnects whenever the connection is lost, until `close()`.
  public func connect() {
    loop.perform { [self] in
      guard handle != nil, !wanted else { return }
      wanted = true
      loop.add(self)
      startConnect()
    }
  }

  /// Waits until the client is connected and subscribed.
  /// - Throws: `MQTTError.refused` as soon as the broker refuses it (or TLS fails), `.timedOut`
  ///   after `timeout`.
  public func ready(within timeout: Duration) async throws(MQTTError) {
    let deadline = ContinuousClock.now + timeout
    while true {
      let (isReady, refusal, problem) = await connectionState()
      if isReady { return }
      if let refusal { throw refusal }
      if ContinuousClock.now >= deadline {
        throw .timedOut("waiting for the broker at \(address)" + (problem.map { " (last: \($0))" } ?? ""))
      }
      try? await Task.sleep(for: .milliseconds(10))
    }
  }

  /// Whether the client is connected and subscribed now.
  public var isReady: Bool {
    get async { await connectionState().ready }
  }

  private func connectionState() async -> (ready: Bool, refusal: MQTTError?, problem: String?) {
    await withCheckedContinuation { continuation in
      loop.perform { continuation.resume(returning: (self.ready, self.lastRefusal, self.lastProblem)) }
    }
  }

  /// Publishes `payload` on `topic` and waits for the broker's acknowledgement (QoS 1: its
  /// PUBACK; QoS 0: handed to the socket). A QoS 1 message published while the connection is
  /// down is sent when it comes back.
  /// `handedOver` is called once the message has been handed to libmosquitto (or refused, or
  /// the publish cancelled before): messages go to the broker in the order they are handed
  /// over, so a caller that publishes the next only after it keeps them in order.
  /// - Throws: `MQTTError.library` for a topic or payload libmosquitto refuses, `.notConnected`
  ///   when the client is closed before the acknowledgement.
  public func publish(_ topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false,
                      handedOver: (@Sendable () -> Void)? = nil) async throws(MQTTError) {
    let token = tokens.next()
    do {
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
          loop.perform { [self] in
            defer { handedOver?() }
            if cancelledTokens.remove(token) != nil { return continuation.resume(throwing: MQTTError.timedOut("publishing on \(topic)")) }
            guard let handle, wanted else { return continuation.resume(throwing: MQTTError.notConnected) }
            var mid: Int32 = 0
            let rc = payload.withUnsafeBytes {
              mosquitto_publish(handle, &mid, topic, Int32($0.count), $0.baseAddress, Int32(qos), retain)
            }
            if rc == MOSQ_ERR_SUCCESS.rawValue, qos == 0 {
              // libmosquitto reports a QoS 0 message sent from inside mosquitto_publish.
              continuation.resume()
            } else if rc == MOSQ_ERR_SUCCESS.rawValue || (rc == MOSQ_ERR_NO_CONN.rawValue && qos > 0) {
              publishes[mid] = (token, continuation)
              publishTokens[token] = mid
            } else if rc == MOSQ_ERR_NO_CONN.rawValue {
              continuation.resume(throwing: MQTTError.notConnected)
            } else {
              continuation.resume(throwing: MQTTError.library("cannot publish on \(topic): \(String(cString: mosquitto_strerror(rc)))"))
            }
          }
        }
      } onCancel: {
        loop.perform { [self] in
          if let mid = publishTokens.removeValue(forKey: token), let waiting = publishes.removeValue(forKey: mid) {
            waiting.continuation.resume(throwing: MQTTError.timedOut("publishing on \(topic)"))
          } else {
            cancelledTokens.insert(token)
          }
        }
      }
    } catch {
      throw (error as? MQTTError) ?? .notConnected
    }
  }

  /// Disconnects cleanly (the broker does not publish the will), waits until the socket is
  /// closed (at most a second) and releases the client. Waiting publishes fail.
  public func close() async {
    await finish(clean: true)
  }

  /// Drops the connection without saying goodbye, as a crashed or unplugged client would: the
  /// broker publishes the will. The client is released and does not reconnect.
  public func abandon() async {
    await finish(clean: false)
  }

  private func finish(clean: Bool) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      loop.perform { [self] in
        guard let handle, wanted else { return continuation.resume() }
        wanted = false
        reconnectAt = nil
        let socket = mosquitto_socket(handle)
        if !ready || socket < 0 {
          release()
          return continuation.resume()
        }
        closeWaiters.append(continuation)
        if clean {
          mosquitto_disconnect(handle)
        } else {
          shutdown(socket, Int32(SHUT_RDWR))
        }
        let deadline = DispatchTime.now() + 1
        DispatchQueue.global().asyncAfter(deadline: deadline) { self.loop.perform { self.release() } }
      }
    }
  }

  /// Fails what waits, stops serving the handle and destroys it (loop thread).
  private func release() {
    guard let handle else { return }
    failPending(MQTTError.notConnected)
    mosquitto_destroy(handle)
    self.handle = nil
    ready = false
    loop.remove(self)
    let waiters = closeWaiters
    closeWaiters = []
    for waiter in waiters { waiter.resume() }
  }

  private func failPending(_ error: MQTTError) {
    let waiting = publishes
    publishes = [:]
    publishTokens = [:]
    for (_, entry) in waiting { entry.continuation.resume(throwing: error) }
  }

  // MARK: Loop-thread machinery

  /// The socket to poll, when connected (not while a blocking connect runs elsewhere).
  func pollSocket() -> Int32? {
    guard let handle, !connecting else { return nil }
    let socket = mosquitto_socket(handle)
    return socket >= 0 ? socket : nil
  }

  /// Whether libmosquitto has bytes to write.
  var wantsWrite: Bool {
    guard let handle, !connecting else { return false }
    return mosquitto_want_write(handle)
  }

  func readReady() {
    guard let handle, !connecting else { return }
    let rc = mosquitto_loop_read(handle, 1)
    if rc != MOSQ_ERR_SUCCESS.rawValue { lostWithoutCallback(rc) }
  }

  func writeReady() {
    guard let handle, !connecting, mosquitto_socket(handle) >= 0 else { return }
    let rc = mosquitto_loop_write(handle, 1)
    if rc != MOSQ_ERR_SUCCESS.rawValue { lostWithoutCallback(rc) }
  }

  func housekeeping() {
    guard let handle, !connecting, mosquitto_socket(handle) >= 0 else { return }
    _ = mosquitto_loop_misc(handle)
  }

  /// Time until a reconnection is due; starts it when it is due now.
  func reconnectDue(now: ContinuousClock.Instant) -> Duration? {
    guard let due = reconnectAt else { return nil }
    if due <= now {
      reconnectAt = nil
      startConnect()
      return nil
    }
    return due - now
  }

  /// libmosquitto closes the socket and calls the disconnect callback on most read and write
  /// errors; a socket closed without one (a TLS handshake that fails while it completes on the
  /// loop) is handled here as a lost connection or a failed attempt.
  private func lostWithoutCallback(_ rc: Int32) {
    guard let handle, wanted, mosquitto_socket(handle) < 0 else { return }
    if ready { return disconnected(rc: rc) }
    guard reconnectAt == nil else { return }
    let reason = lastLoggedError ?? String(cString: mosquitto_strerror(rc))
    lastProblem = "cannot connect: \(reason)"
    scheduleReconnect(longest: failedTLS(rc, reason))
  }

  /// Connects on a worker thread (DNS, TCP and the TLS handshake block), then hands the handle
  /// back to the loop.
  private func startConnect() {
    guard let handle, wanted, !connecting else { return }
    connecting = true
    let first = !connectedOnce
    connectedOnce = true
    // Only what this attempt logs says why it failed: an error logged when the last connection
    // ended (a broker killed mid-session: OpenSSL's "unexpected eof") is no TLS failure of this
    // attempt, which would wait the longest (fresh-eyes finding: 30 s to reconnect over TLS
    // after a broker crash, 1 s after a clean restart).
    noteError(nil)
    let host = address.host, port = Int32(address.port), keepAlive = Int32(configuration.keepAlive)
    nonisolated(unsafe) let unsafeHandle = handle
    // mosquitto_connect blocks (name lookup, TCP and TLS handshakes): a thread of its own, so it
    // never waits for, or holds, one of the few pooled threads.
    Thread {
      let rc = first ? mosquitto_connect(unsafeHandle, host, port, keepAlive) : mosquitto_reconnect(unsafeHandle)
      let reason = rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
      self.loop.perform {
        self.connecting = false
        guard self.handle != nil else { return }
        guard self.wanted else { return self.release() }
        // A handshake that failed inside a "successful" connect leaves no socket and no callback.
        let rc = rc == MOSQ_ERR_SUCCESS.rawValue && mosquitto_socket(unsafeHandle) < 0 ? MOSQ_ERR_CONN_LOST.rawValue : rc
        if rc != MOSQ_ERR_SUCCESS.rawValue { self.lastProblem = "cannot connect: \(self.lastLoggedError ?? reason)" }
        if self.failedTLS(rc, reason) {
          self.scheduleReconnect(longest: true)
        } else if rc != MOSQ_ERR_SUCCESS.rawValue {
          self.scheduleReconnect()
          self.onConnection(.lost("cannot connect to \(self.address): \(reason)"))
        }
      }
    }.start()
  }

  /// Whether `rc` is a TLS failure, which a retry will not mend (the broker's certificate, or
  /// this client's); it is then kept as the refusal `ready(within:)` reports.
  private func failedTLS(_ rc: Int32, _ reason: String) -> Bool {
    let tlsLogged = usesTLS && lastLoggedError?.contains("OpenSSL") == true
    guard rc == MOSQ_ERR_TLS.rawValue || rc == MOSQ_ERR_TLS_HANDSHAKE.rawValue || (rc != MOSQ_ERR_SUCCESS.rawValue && tlsLogged) else {
      return false
    }
    let failure = MQTTError.tls("with \(address): \(lastLoggedError ?? reason)")
    lastRefusal = failure
    onConnection(.refused(failure))
    return true
  }

  private func scheduleReconnect(longest: Bool = false) {
    guard wanted else { return }
    let (first, maximum) = configuration.reconnectDelay
    let delay = longest ? maximum : Backoff(Backoff.Policy(initial: first, maximum: maximum)).wait(retry: attempt)
    attempt += 1
    reconnectAt = ContinuousClock.now + delay
  }

  private func connected(rc: Int32, flags: Int32) {
    guard let handle else { return }
    guard rc == 0 else {
      let refusal = MQTTError.refused(String(cString: mosquitto_connack_string(rc)))
      lastRefusal = refusal
      onConnection(.refused(refusal))
      return
    }
    lastRefusal = nil
    attempt = 0
    sessionPresent = flags & 1 == 1
    let filters = configuration.subscriptions
    // The first connection of this client subscribes even to a kept session, so a process that
    // starts again gets the retained messages it no longer remembers.
    if filters.isEmpty || (sessionPresent && subscribedOnce && !configuration.resubscribes) {
      becomeReady()
      return
    }
    subscribedOnce = true
    var mid: Int32 = 0
    let copies = filters.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let rcSubscribe = copies.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: UnsafeMutablePointer<CChar>?.self) { pointers in
        mosquitto_subscribe_multiple(handle, &mid, Int32(filters.count), UnsafeMutablePointer(mutating: pointers.baseAddress),
                                    Int32(configuration.subscriptionQoS), 0, nil)
      }
    }
    if rcSubscribe == MOSQ_ERR_SUCCESS.rawValue { subscribing = mid }
  }

  private func subscribed(mid: Int32) {
    guard mid == subscribing else { return }
    subscribing = nil
    becomeReady()
  }

  private func becomeReady() {
    ready = true
    onConnection(.ready(sessionPresent: sessionPresent))
  }

  private func disconnected(rc: Int32) {
    let wasReady = ready
    ready = false
    subscribing = nil
    if !wanted {
      // Called from inside mosquitto_loop_read: the handle is destroyed on the next turn.
      loop.perform { self.release() }
      return
    }
    lastProblem = "the connection ended: \(rc == 0 ? "disconnected" : lastLoggedError ?? String(cString: mosquitto_strerror(rc))) (rc \(rc))"
    // A connection that was made and then ended (a broker killed mid-session: OpenSSL logs
    // "unexpected eof") is no TLS failure a retry cannot mend: the next try comes as soon as
    // for any lost connection (fresh-eyes finding: 30 s to reconnect over TLS after a broker
    // crash, 1 s after a clean restart).
    let refused = !wasReady && (failedTLS(rc, String(cString: mosquitto_strerror(rc))) || lastRefusal != nil)
    scheduleReconnect(longest: refused)
    if wasReady { onConnection(.lost(rc == 0 ? "disconnected" : String(cString: mosquitto_strerror(rc)))) }
  }

  private func published(mid: Int32) {
    guard let entry = publishes.removeValue(forKey: mid) else { return }
    publishTokens[entry.token] = nil
    entry.continuation.resume()
  }
}

/// Numbers publishes, so a cancelled one can be found on the loop thread.
private final class TokenCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var value = 0
  func next() -> Int {
    lock.lock()
    defer { lock.unlock() }
    value += 1
    return value
  }
}
