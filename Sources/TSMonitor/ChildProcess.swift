import Foundation
#if canImport(CSpawn)
import CSpawn
#endif

/// Runs a program directly (`posix_spawn`, never a shell) and waits for it, for `--on-sos`.
///
/// The child gets: exactly the given arguments; exactly the given environment; standard input
/// from `/dev/null`; standard output and error on the descriptor given (the monitor's standard
/// error, so nothing it prints can mix into the JSON event stream on standard output); the
/// default action for the signals the monitor ignores or catches (SIGPIPE, SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT) and an empty signal mask; its own process group, so a Ctrl-C meant for the
/// monitor does not reach it and a timeout can stop it with everything it started; and no other
/// descriptor of the monitor — not all are close-on-exec (libmicrohttpd's connections, Foundation's
/// files): every one from 3 up is closed in the child (glibc's `addclosefrom`, Sources/CSpawn).
enum ChildProcess {
  /// How a child ended.
  enum Outcome: Hashable, Sendable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it.
    case signalled(Int32)
    /// It ran longer than allowed and was killed.
    case timedOut
    /// It could not be started (the system's reason).
    case notStarted(String)
    /// The wait was cancelled (the monitor is stopping); the child was killed.
    case cancelled
  }

  /// The signals whose action is reset to the default in the child.
  static let resetSignals: [Int32] = [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT]

  /// Runs `path` with `arguments` (`arguments[0]` is the program's name as given) and
  /// `environment`, output on `outputDescriptor`; kills it (the whole process group) after
  /// `timeout` or when the task is cancelled.
  static func run(path: String, arguments: [String], environment: [String: String], timeout: Duration,
                  outputDescriptor: Int32 = STDERR_FILENO) async -> Outcome {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 1)
    posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 2)
    // Nothing else the monitor has open goes to the program: a status page's connection it held
    // would keep that page's client waiting for the program to end.
    #if canImport(CSpawn)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    #endif

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t(), mask = sigset_t()
    sigemptyset(&defaults)
    for number in resetSignals { sigaddset(&defaults, number) }
    sigemptyset(&mask)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setsigmask(&attributes, &mask)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

    let argv = arguments.map { strdup($0.replacingOccurrences(of: "\0", with: "")) } + [nil]
    let envp = environment.sorted { $0.key < $1.key }
      .map { strdup(($0.key + "=" + $0.value).replacingOccurrences(of: "\0", with: "")) } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    var started = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    // ETXTBSY: the program is open for writing somewhere (being replaced, or a descriptor
    // another thread's child inherited for an instant); it passes.
    for _ in 0..<10 where started == ETXTBSY {
      try? await Task.sleep(for: .milliseconds(50))
      started = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    }
    guard started == 0 else { return .notStarted(String(cString: strerror(started))) }

    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var status: Int32 = 0
    while true {
      let result = waitpid(pid, &status, WNOHANG)
      if result == pid { break }
      if result < 0 && errno != EINTR { return .notStarted("waitpid: \(String(cString: strerror(errno)))") }
      let cancelled = Task.isCancelled
      if cancelled || clock.now >= deadline {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return cancelled ? .cancelled : .timedOut
      }
      try? await Task.sleep(for: .milliseconds(20))
    }
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
  }

  /// The absolute path of the program `name`: itself when it holds a `/` (made absolute against
  /// `currentDirectory`), else the first executable file of that name in `searchPath`
  /// (`$PATH`, colon-separated); `nil` when there is none.
  static func resolve(_ name: String, searchPath: String, currentDirectory: String) -> String? {
    func executable(_ path: String) -> Bool {
      var info = stat()
      return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
    if name.contains("/") {
      let path = name.hasPrefix("/") ? name : (currentDirectory as NSString).appendingPathComponent(name)
      return executable(path) ? path : nil
    }
    for directory in searchPath.split(separator: ":", omittingEmptySubsequences: true) {
      let path = String(directory) + "/" + name
      if directory.hasPrefix("/") && executable(path) { return path }
    }
    return nil
  }
}
