import Foundation

/// The result of running the built `tsapply` binary.
public struct ProcessResult: Sendable {
  public var status: Int32
  public var stdout: String
  public var stderr: String
}

/// Runs commands with the `tsapply` executable built next to the test bundle.
public enum TSApplyBinary {
  /// Path of the built binary (`.build/<triple>/debug/tsapply`).
  public static var url: URL {
    var directory = Bundle.main.bundleURL
    // Under `swift test` the main bundle is the xctest runner; the binary sits in the build directory.
    for candidate in [directory, directory.deletingLastPathComponent()] {
      let url = candidate.appendingPathComponent("tsapply")
      if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    return directory.appendingPathComponent("tsapply")
  }

  /// The package root (the directory holding Package.swift), found from this source file.
  public static var packageRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  }

  /// Runs `tsapply arguments` in `directory` with `stdin` as standard input and extra `environment`.
  public static func run(_ arguments: [String], in directory: URL? = nil, stdin: String = "",
                         environment: [String: String] = [:]) throws -> ProcessResult {
    try runProgram(url, arguments, in: directory, stdin: stdin, environment: environment)
  }

  /// A started `tsapply` process; `wait()` collects its output and status.
  public final class Running: @unchecked Sendable {
    let process: Process
    let output: Pipe, error: Pipe
    init(process: Process, output: Pipe, error: Pipe) {
      self.process = process
      self.output = output
      self.error = error
    }
    /// The process id.
    public var pid: Int32 { process.processIdentifier }
    /// Sends `signal` (e.g. SIGTERM, SIGKILL) to the process.
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }
    /// Reads both pipes to the end and waits for the exit.
    public func wait() -> ProcessResult {
      nonisolated(unsafe) var errData = Data()
      let group = DispatchGroup()
      group.enter()
      onOwnThread {
        errData = self.error.fileHandleForReading.readDataToEndOfFile()
        group.leave()
      }
      let outData = output.fileHandleForReading.readDataToEndOfFile()
      group.wait()
      process.waitUntilExit()
      return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                           stderr: String(decoding: errData, as: UTF8.self))
    }
  }

  /// Starts `tsapply arguments` in `directory` (standard input empty) without waiting, with the
  /// same environment as `run`.
  public static func start(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> Running {
    try start(arguments, in: directory, environment: environment, input: FileHandle.nullDevice)
  }

  /// Starts `tsapply arguments` in `directory` reading `input`, as `run` sets up its environment.
  private static func start(_ arguments: [String], in directory: URL, environment: [String: String], input: FileHandle) throws -> Running {
    let process = Process()
    process.executableURL = url
    process.arguments = arguments
    process.currentDirectoryURL = directory
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    env["TSAPPLY_STATE_DIR"] = testStateDirectory
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let output = Pipe(), error = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    return Running(process: process, output: output, error: error)
  }

  /// A started `tsapply` whose standard input is a terminal (a pseudo-terminal this process
  /// holds the other end of), for the questions a command asks only on a terminal.
  public final class Interactive: @unchecked Sendable {
    /// The process, its output read with `wait()`.
    public let running: Running
    private let terminal: FileHandle
    private let lock = NSLock()
    private var seen = Data()

    init(running: Running, terminal: FileHandle) {
      self.running = running
      self.terminal = terminal
    }

    /// Types `text` at the terminal.
    public func type(_ text: String) { terminal.write(Data(text.utf8)) }

    /// Reads standard output until it holds `text` (or it ends), returning what was read.
    @discardableResult
    public func read(until text: String) -> String {
      let handle = running.output.fileHandleForReading
      while true {
        let shown = lock.withLock { String(decoding: seen, as: UTF8.self) }
        if shown.contains(text) { return shown }
        let chunk = handle.availableData
        if chunk.isEmpty { return shown }
        lock.withLock { seen.append(chunk) }
      }
    }

    /// Waits for the exit, killing the process (SIGKILL) if it has not exited within `limit`
    /// (a command left waiting at a question fails its test instead of hanging it); stdout
    /// holds what `read(until:)` read and the rest.
    public func wait(limit: Double = 90) -> ProcessResult {
      let running = self.running
      DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
        if running.process.isRunning { running.send(SIGKILL) }
      }
      var result = running.wait()
      result.stdout = lock.withLock { String(decoding: seen, as: UTF8.self) } + result.stdout
      return result
    }
  }

  /// Starts `tsapply arguments` in `directory` with a pseudo-terminal as standard input.
  public static func startInteractive(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> Interactive {
    let master = pty_posix_openpt(O_RDWR | O_NOCTTY)
    guard master >= 0, pty_grantpt(master) == 0, pty_unlockpt(master) == 0, let name = pty_ptsname(master) else {
      throw CocoaError(.fileReadUnknown)
    }
    let slave = open(String(cString: name), O_RDWR | O_NOCTTY)
    guard slave >= 0 else { throw CocoaError(.fileReadUnknown) }
    let running = try start(arguments, in: directory, environment: environment,
                            input: FileHandle(fileDescriptor: slave, closeOnDealloc: true))
    return Interactive(running: running,
                       terminal: FileHandle(fileDescriptor: master, closeOnDealloc: true))
  }

  /// Runs any program (e.g. bash with a generated completion script, or a git hook) the same
  /// way: `NO_COLOR=1` and extra `environment` on top of this process's, both pipes read.
  public static func runProgram(_ executable: URL, _ arguments: [String], in directory: URL? = nil, stdin: String = "",
                                environment: [String: String] = [:]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    // tsapply's per-watch records (backups, lock, last-applied) go to a folder of this test
    // process, never into the user's ~/.local/state; watches are told apart by identity.
    env["TSAPPLY_STATE_DIR"] = testStateDirectory
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let input = Pipe(), output = Pipe(), error = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    // Read both pipes concurrently so neither fills up and blocks the child.
    nonisolated(unsafe) var errData = Data()
    let group = DispatchGroup()
    group.enter()
    onOwnThread {
      errData = error.fileHandleForReading.readDataToEndOfFile()
      group.leave()
    }
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
  }

  /// The state root (`TSAPPLY_STATE_DIR`) every run of this test process uses unless the test
  /// sets another.
  public static let testStateDirectory: String = {
    if let path = try? TestFolders.make("tsapply-test-state") { return path }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsapply-test-state-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }()

  /// The backup path an apply printed (`Backed up the watch's current state to PATH (restore
  /// with …)`), or `nil`. Backups live in the watch's state folder under `testStateDirectory`.
  public static func backupPath(in output: String) -> String? {
    guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Backed up the watch's current state to ") }) else {
      return nil
    }
    let rest = line.dropFirst("Backed up the watch's current state to ".count)
    return rest.range(of: " (restore with").map { String(rest[..<$0.lowerBound]) }
  }

  /// Every backup file of every watch under the state root `root` (default: `testStateDirectory`)
  /// whose folder's `watch.json` names `identity`.
  public static func backups(of identity: String, root: String = testStateDirectory) -> [String] {
    let watches = root + "/watches"
    let folders = (try? FileManager.default.contentsOfDirectory(atPath: watches)) ?? []
    return folders.flatMap { folder -> [String] in
      let record = (try? String(contentsOfFile: watches + "/" + folder + "/watch.json", encoding: .utf8)) ?? ""
      guard record.contains("\"" + identity.replacingOccurrences(of: "/", with: "\\/") + "\"")
              || record.contains("\"" + identity + "\"") else { return [] }
      let directory = watches + "/" + folder + "/backups"
      return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).map { directory + "/" + $0 }
    }
  }

  /// Runs `/bin/sh -c script` in `directory`, with `$TSAPPLY` set to the built binary's path, so
  /// a test can redirect standard input from a file (`< /dev/zero`) or bound memory (`ulimit -v`).
  public static func runShell(_ script: String, in directory: URL? = nil) throws -> ProcessResult {
    try runProgram(URL(fileURLWithPath: "/bin/sh"), ["-c", script], in: directory, environment: ["TSAPPLY": url.path])
  }

  /// A new empty temporary directory (`TestFolders`: removed when the test process exits).
  public static func temporaryDirectory() throws -> URL {
    URL(fileURLWithPath: try TestFolders.make("tsapply-test"))
  }
}

// The C library's pseudo-terminal calls, which Glibc's Swift module leaves out (they need
// _XOPEN_SOURCE); plain int and pointer signatures.
@_silgen_name("posix_openpt") private func pty_posix_openpt(_ flags: Int32) -> Int32
@_silgen_name("grantpt") private func pty_grantpt(_ descriptor: Int32) -> Int32
@_silgen_name("unlockpt") private func pty_unlockpt(_ descriptor: Int32) -> Int32
@_silgen_name("ptsname") private func pty_ptsname(_ descriptor: Int32) -> UnsafeMutablePointer<CChar>?
