import Foundation

/// Where a command reads and writes: injected so tests can run commands in-process.
public protocol TextOutput: AnyObject, Sendable {
  /// Writes `text` as is (no newline added).
  func write(_ text: String)
}

/// A `TextOutput` over a file descriptor (standard output or standard error).
public final class FileOutput: TextOutput, @unchecked Sendable {
  private let handle: FileHandle
  private let lock = NSLock()
  public init(_ handle: FileHandle) { self.handle = handle }
  public func write(_ text: String) {
    lock.lock()
    defer { lock.unlock() }
    handle.write(Data(text.utf8))
  }
}

/// A `TextOutput` that keeps everything written, for tests.
public final class BufferOutput: TextOutput, @unchecked Sendable {
  private let lock = NSLock()
  private var storage = ""
  public init() {}
  public func write(_ text: String) {
    lock.lock()
    storage += text
    lock.unlock()
  }
  /// Everything written so far.
  public var text: String {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }
}

/// The environment a command runs in: streams, terminal facts, environment variables and the
/// working directory. `CLI.run` builds the real one; tests build their own.
public struct CommandContext: Sendable {
  public var stdout: any TextOutput
  public var stderr: any TextOutput
  /// Reads one line of standard input without the newline; `nil` at end of input.
  public var readLine: @Sendable () -> String?
  /// Reads all of standard input (for `-` as a file name).
  public var readAll: @Sendable () -> [UInt8]
  public var stdoutIsTerminal: Bool
  public var stdinIsTerminal: Bool
  public var environment: [String: String]
  /// Absolute path of the working directory; relative paths are resolved against it.
  public var currentDirectory: String

  public init(stdout: any TextOutput, stderr: any TextOutput,
              readLine: @escaping @Sendable () -> String? = { nil },
              readAll: @escaping @Sendable () -> [UInt8] = { [] },
              stdoutIsTerminal: Bool = false, stdinIsTerminal: Bool = false,
              environment: [String: String] = [:], currentDirectory: String) {
    self.stdout = stdout
    self.stderr = stderr
    self.readLine = readLine
    self.readAll = readAll
    self.stdoutIsTerminal = stdoutIsTerminal
    self.stdinIsTerminal = stdinIsTerminal
    self.environment = environment
    self.currentDirectory = currentDirectory
  }

  /// The context of this process: real streams, `isatty`, `ProcessInfo` environment, cwd.
  public static func process() -> CommandContext {
    CommandContext(
      stdout: FileOutput(.standardOutput), stderr: FileOutput(.standardError),
      readLine: { Swift.readLine(strippingNewline: true) },
      readAll: { Array(FileHandle.standardInput.readDataToEndOfFile()) },
      stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stdinIsTerminal: isatty(STDIN_FILENO) == 1,
      environment: ProcessInfo.processInfo.environment,
      currentDirectory: FileManager.default.currentDirectoryPath)
  }

  /// `path` made absolute against `currentDirectory` (absolute paths are returned unchanged).
  public func resolve(_ path: String) -> String {
    path.hasPrefix("/") ? path : (currentDirectory as NSString).appendingPathComponent(path)
  }

  /// Whether human output may use colour: a terminal, `NO_COLOR` unset, no `--no-color`.
  public func useColor(noColorFlag: Bool) -> Bool {
    !noColorFlag && stdoutIsTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
  }
}
