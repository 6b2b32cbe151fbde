import Foundation

/// A `tsapply` process that keeps running (`device listen`, `bridge serve`): standard output is
/// read on demand (`waitFor`), standard error drained in the background so a chatty process
/// never blocks on a full pipe. Environment as `TSApplyBinary.run`, plus `environment`.
public final class ListeningProcess: @unchecked Sendable {
  private let process = Process()
  private let output = Pipe()
  private let errors = Pipe()
  private var seen = Data()
  private let lock = NSLock()
  private var errorText = Data()
  private let drained = DispatchSemaphore(value: 0)

  /// Starts `tsapply arguments` in `directory`.
  public init(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws {
    process.executableURL = TSApplyBinary.url
    process.arguments = arguments
    process.currentDirectoryURL = directory
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    env["TSAPPLY_STATE_DIR"] = TSApplyBinary.testStateDirectory
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let handle = errors.fileHandleForReading
    onOwnThread { [self] in
      while true {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        lock.withLock { errorText.append(chunk) }
      }
      drained.signal()
    }
  }

  /// Reads standard output until it contains `text`, and returns all of it so far.
  /// - Throws: when the process ends first.
  @discardableResult
  public func waitFor(_ text: String) throws -> String {
    try waitUntil { $0.contains(text) }
  }

  /// Reads standard output until `done` holds for all of it so far, and returns it.
  /// - Throws: when the process ends first.
  @discardableResult
  public func waitUntil(_ done: (String) -> Bool) throws -> String {
    while !done(String(decoding: seen, as: UTF8.self)) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { throw CocoaError(.fileReadUnknown) }
      seen.append(chunk)
    }
    return String(decoding: seen, as: UTF8.self)
  }

  /// Standard error so far.
  public var standardError: String { lock.withLock { String(decoding: errorText, as: UTF8.self) } }

  /// The process ID.
  public var pid: Int32 { process.processIdentifier }

  /// Sends `signal` (e.g. SIGTERM, SIGKILL) to the process.
  public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

  private var finished: (Int32, String, String)?

  /// Waits for the process to end; its status, whole standard output and standard error (the
  /// same again when called once more).
  public func finish() -> (Int32, String, String) {
    if let finished { return finished }
    let rest = output.fileHandleForReading.readDataToEndOfFile()
    drained.wait()
    process.waitUntilExit()
    let result = (process.terminationStatus, String(decoding: seen + rest, as: UTF8.self), standardError)
    finished = result
    return result
  }
}
