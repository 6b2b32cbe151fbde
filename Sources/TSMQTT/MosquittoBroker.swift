import Foundation
#if canImport(CSpawn)
import CSpawn
#endif

/// A private Eclipse Mosquitto broker on 127.0.0.1, for tests, benchmarks and trying agents out
/// on one machine: started on a free port with a generated configuration in a directory of its
/// own, and stopped with `stop()`. It never listens on another address.
///
/// ```swift
/// let broker = try MosquittoBroker.start(in: directory)
/// defer { broker.stop() }
/// let address = broker.address        // mqtt://127.0.0.1:PORT
/// ```
public final class MosquittoBroker: @unchecked Sendable {
  /// Where Debian installs the broker.
  public static let defaultExecutable = "/usr/sbin/mosquitto"
  /// Held while a broker is started (`start(in:executable:configuration:)`), and guarding
  /// `usedPorts`.
  private static let startLock = NSLock()
  /// Every port a broker of this process was started on.
  nonisolated(unsafe) private static var usedPorts: Set<Int> = []

  /// The port it listens on, on 127.0.0.1.
  public let port: Int
  /// The directory holding its configuration (`mosquitto.conf`) and log (`mosquitto.log`).
  public let directory: String
  /// The broker's process id.
  public let processIdentifier: pid_t
  /// The watchdog shell that started the broker and stops it when `lifeline` closes.
  private let watchdog: pid_t
  private let lifeline: Int32
  private let lock = NSLock()
  private var stopped = false

  private init(port: Int, directory: String, processIdentifier: pid_t, watchdog: pid_t, lifeline: Int32) {
    self.port = port
    self.directory = directory
    self.processIdentifier = processIdentifier
    self.watchdog = watchdog
    self.lifeline = lifeline
  }

  deinit { stop() }

  /// `mqtt://127.0.0.1:PORT`.
  public var address: MQTTAddress { MQTTAddress(host: "127.0.0.1", port: port) }

  /// A configuration for a broker open to anyone on 127.0.0.1:`port`, without persistence.
  public static func openConfiguration(port: Int, directory: String) -> String {
    """
    listener \(port) 127.0.0.1
    allow_anonymous true
    persistence false
    max_queued_messages 100000
    log_dest file \(directory)/mosquitto.log
    log_type error
    log_type warning
    log_type notice

    """
  }

  /// A configuration for a broker open to anyone on 127.0.0.1:`port` with Mosquitto's default
  /// settings otherwise (in-flight window 20, 1,000 queued messages per client, no persistence):
  /// what a site gets from a broker nobody tuned, for the tests that must hold there.
  public static func defaultConfiguration(port: Int, directory: String) -> String {
    """
    listener \(port) 127.0.0.1
    allow_anonymous true
    log_dest file \(directory)/mosquitto.log
    log_type error
    log_type warning
    log_type notice

    """
  }

  /// Starts the broker with the configuration `configuration(port, directory)` written to
  /// `directory/mosquitto.conf`, on a free port of 127.0.0.1, and waits until it accepts
  /// connections. The configuration must listen on 127.0.0.1 and that port only. The broker is
  /// started by a watchdog shell that stops it when this process ends, however it ends, so a
  /// killed test run never leaves a broker behind.
  /// - Throws: `MQTTError.library` when the broker is not installed or does not start (its log
  ///   is quoted).
  public static func start(in directory: String, executable: String = defaultExecutable,
                           configuration: (Int, String) -> String = MosquittoBroker.openConfiguration)
    throws(MQTTError) -> MosquittoBroker {
    guard FileManager.default.isExecutableFile(atPath: executable) else {
      throw .library("\(executable) is not installed (Debian package mosquitto; script/bootstrap installs it)")
    }
    // One start at a time in this process, each on a port no broker of this process had before:
    // two brokers started together could be given the same free port (and the one that fails to
    // bind it would pass the connection check against the other's listener), and a client of a
    // stopped broker that still reconnects (an agent a test abandoned) would join a new broker on
    // its old port, taking over the session of a client with the same ID.
    startLock.lock()
    defer { startLock.unlock() }
    var lastLog = ""
    for _ in 0..<5 {
      var port = freePort()
      for _ in 0..<100 where usedPorts.contains(port) { port = freePort() }
      usedPorts.insert(port)
      let path = directory + "/mosquitto.conf"
      let text = configuration(port, directory)
      guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
        throw .library("cannot write \(path)")
      }
      let broker = try launch(executable, configurationFile: path, port: port, directory: directory)
      let deadline = Date().addingTimeInterval(10)
      while Date() < deadline, broker.isRunning {
        // A listener answered; a broker that could not bind the port (another process took it)
        // exits at once, so it must still run a moment later to be the one that answered.
        if canConnect(port: port) {
          usleep(50_000)
          if broker.isRunning { return broker }
          break
        }
        usleep(20_000)
      }
      broker.stop()
      lastLog = (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""
    }
    throw .library("the broker did not start; its log says:\n\(lastLog)")
  }

  /// `start(in:executable:configuration:)` for async callers: run on a thread of its own, so the
  /// wait for the broker (and for the other starts ahead of it) holds no thread of Swift's
  /// cooperative pool — two on a two-core machine, which tests starting brokers together
  /// would otherwise hold while the rest of the process waited.
  /// - Throws: as `start(in:executable:configuration:)`.
  public static func started(in directory: String, executable: String = defaultExecutable,
                             configuration: @escaping @Sendable (Int, String) -> String = MosquittoBroker.openConfiguration)
    async throws(MQTTError) -> MosquittoBroker {
    let result = await withCheckedContinuation { (done: CheckedContinuation<Result<MosquittoBroker, MQTTError>, Never>) in
      Thread.detachNewThread {
        do throws(MQTTError) {
          done.resume(returning: .success(try start(in: directory, executable: executable, configuration: configuration)))
        } catch {
          done.resume(returning: .failure(error))
        }
      }
    }
    return try result.get()
  }

  /// Stops the broker and starts it again on the same port with the same configuration, as
  /// `systemctl restart mosquitto` does: its clients reconnect to the new one, which keeps what
  /// the configuration persists (retained messages and sessions, with `persistence true`).
  /// - Throws: `MQTTError.library` when it does not start again (its log is quoted).
  public func restart(executable: String = defaultExecutable) throws(MQTTError) -> MosquittoBroker {
    stop()
    let broker = try Self.launch(executable, configurationFile: directory + "/mosquitto.conf", port: port, directory: directory)
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline, broker.isRunning {
      if Self.canConnect(port: port) { return broker }
      usleep(20_000)
    }
    broker.stop()
    throw .library("the broker did not start again; its log says:\n" + ((try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""))
  }

  /// Stops the broker (the watchdog sends SIGTERM) and waits for it and the watchdog to exit.
  public func stop() {
    lock.lock()
    defer { lock.unlock() }
    guard !stopped else { return }
    stopped = true
    close(lifeline)
    var status: Int32 = 0
    waitpid(watchdog, &status, 0)
  }

  /// Whether the broker process is still running.
  public var isRunning: Bool {
    lock.lock()
    defer { lock.unlock() }
    return !stopped && kill(processIdentifier, 0) == 0 && !isZombie
  }

  private var isZombie: Bool {
    guard let text = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return false }
    return text[text.index(after: close)...].dropFirst().first == "Z"
  }

  /// Starts `sh`, which starts the broker, prints its pid, and kills it when its standard
  /// input (the lifeline, whose other end only this process holds) reaches end of file.
  private static func launch(_ executable: String, configurationFile: String, port: Int, directory: String) throws(MQTTError) -> MosquittoBroker {
    var lifeline: [Int32] = [-1, -1], report: [Int32] = [-1, -1]
    guard pipe(&lifeline) == 0, pipe(&report) == 0 else { throw .library("cannot make a pipe: \(String(cString: strerror(errno)))") }
    _ = fcntl(lifeline[1], F_SETFD, FD_CLOEXEC)
    _ = fcntl(report[0], F_SETFD, FD_CLOEXEC)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, lifeline[0], 0)
    posix_spawn_file_actions_adddup2(&actions, report[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addclose(&actions, lifeline[0])
    posix_spawn_file_actions_addclose(&actions, report[1])
    // Nothing else this process has open goes to the broker (a test's HTTP connection it held
    // would not end when the server closed it).
    #if canImport(CSpawn)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    #endif
    // The broker starts with no blocked and no ignored signals, whatever this thread has.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), all = sigset_t()
    sigemptyset(&none)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let script = "\"$1\" -c \"$2\" </dev/null >/dev/null 2>&1 & broker=$!; echo $broker; exec >/dev/null; "
      + "while read -r _; do :; done; kill -TERM $broker; wait $broker"
    let words: [String] = ["/bin/sh", "-c", script, "sh", executable, configurationFile]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var shell: pid_t = 0
    let rc = posix_spawn(&shell, "/bin/sh", &actions, &attributes, argv, environ)
    close(lifeline[0])
    close(report[1])
    guard rc == 0 else {
      close(lifeline[1])
      close(report[0])
      throw .library("cannot start \(executable): \(String(cString: strerror(rc)))")
    }
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = read(report[0], &buffer, buffer.count)
    close(report[0])
    let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let pid = pid_t(text) else {
      close(lifeline[1])
      var status: Int32 = 0
      waitpid(shell, &status, 0)
      throw .library("cannot start \(executable)")
    }
    return MosquittoBroker(port: port, directory: directory, processIdentifier: pid, watchdog: shell, lifeline: lifeline[1])
  }

  /// CPU seconds (user + system) the broker has used so far, from `/proc/PID/stat`; `nil`
  /// where there is no `/proc`.
  public func cpuSeconds() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 3; utime and stime are fields 14 and 15.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  /// A port of 127.0.0.1 that was free a moment ago.
  static func freePort() -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = loopback(port: 0)
    _ = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  private static func canConnect(port: Int) -> Bool {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
  }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
  }
}
