import Foundation
import TSManifest
import TSModel

/// Where a command reads and writes: injected so tests can run commands in-process.
public protocol TextOutput: AnyObject, Sendable {
  /// Writes `text` as is (no newline added).
  func write(_ text: String)
}

/// A `TextOutput` over a file descriptor (standard output or standard error).
///
/// Writes with `write(2)` and drops what cannot be written: a reader that went away (`… | grep
/// -m1 Backed`, EPIPE; the executable ignores SIGPIPE) must never stop an apply part-way or
/// crash the process. The outcome of an apply that failed goes to standard error, so it is
/// still seen when standard output was closed.
public final class FileOutput: TextOutput, @unchecked Sendable {
  private let descriptor: Int32
  private let lock = NSLock()
  /// An output writing to the file descriptor `descriptor` (e.g. `STDOUT_FILENO`).
  public init(descriptor: Int32) { self.descriptor = descriptor }
  /// Writes `text` as UTF-8 bytes; calls from several threads never interleave. Errors (a
  /// closed pipe, a full disk) drop the rest of `text`.
  public func write(_ text: String) {
    lock.lock()
    defer { lock.unlock() }
    var bytes = Array(text.utf8)
    var offset = 0
    bytes.withUnsafeMutableBytes { buffer in
      guard let base = buffer.baseAddress else { return }
      while offset < buffer.count {
        let written = Foundation.write(descriptor, base + offset, buffer.count - offset)
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
      }
    }
  }
}

/// A `TextOutput` that keeps everything written, for tests.
public final class BufferOutput: TextOutput, @unchecked Sendable {
  private let lock = NSLock()
  private var storage = ""
  /// An empty buffer.
  public init() {}
  /// Appends `text` to the buffer (thread-safe).
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
  /// Standard output: plans, reports and other results.
  public var stdout: any TextOutput
  /// Standard error: `Error: …` messages, interrupt notices.
  public var stderr: any TextOutput
  /// Reads one line of standard input without the newline; `nil` at end of input.
  public var readLine: @Sendable () -> String?
  /// Standard input as a manifest source (for `-` as a file name): the process's descriptor 0,
  /// read bounded by `ManifestSource.read`; bytes in memory in tests.
  public var standardInput: ManifestSource
  /// Whether standard output is a terminal (`isatty`): enables colour and verbose apply progress.
  public var stdoutIsTerminal: Bool
  /// Whether standard input is a terminal; confirmation prompts are refused when it is not.
  public var stdinIsTerminal: Bool
  /// Environment variables (e.g. `TSAPPLY_DEVICE`, `NO_COLOR`, `TERM`, `SOURCE_DATE_EPOCH`).
  public var environment: [String: String]
  /// Absolute path of the working directory; relative paths are resolved against it.
  public var currentDirectory: String
  /// What this build adds to the core commands (`Toolset`).
  package var toolset: Toolset
  /// The arguments `CLI.run` was given (without the program name); empty until then.
  public var invocation: [String] = []

  /// The command as it was run, `tsapply` and the arguments quoted for a shell
  /// (`tsapply apply --fleet fleet.yaml --auto-approve`): what the apply history and a lock's
  /// holder record, so "who changed this?" names the command that really ran.
  public var commandLine: String { (["tsapply"] + invocation.map(ShellWord.quoted)).joined(separator: " ") }

  /// A context from its parts; the defaults (empty input, no terminal, empty environment) suit tests.
  /// `currentDirectory` must be an absolute path.
  public init(stdout: any TextOutput, stderr: any TextOutput,
              readLine: @escaping @Sendable () -> String? = { nil },
              standardInput: ManifestSource = .bytes([], displayName: "-"),
              stdoutIsTerminal: Bool = false, stdinIsTerminal: Bool = false,
              environment: [String: String] = [:], currentDirectory: String) {
    self.init(stdout: stdout, stderr: stderr, readLine: readLine, standardInput: standardInput,
              stdoutIsTerminal: stdoutIsTerminal, stdinIsTerminal: stdinIsTerminal, environment: environment,
              currentDirectory: currentDirectory, toolset: .core)
  }

  /// A context from its parts, for the build whose commands `toolset` adds.
  package init(stdout: any TextOutput, stderr: any TextOutput,
               readLine: @escaping @Sendable () -> String? = { nil },
               standardInput: ManifestSource = .bytes([], displayName: "-"),
               stdoutIsTerminal: Bool = false, stdinIsTerminal: Bool = false,
               environment: [String: String] = [:], currentDirectory: String, toolset: Toolset) {
    self.toolset = toolset
    self.stdout = stdout
    self.stderr = stderr
    self.readLine = readLine
    self.standardInput = standardInput
    self.stdoutIsTerminal = stdoutIsTerminal
    self.stdinIsTerminal = stdinIsTerminal
    self.environment = environment
    self.currentDirectory = currentDirectory
  }

  /// The context of this process: real streams, `isatty`, `ProcessInfo` environment, cwd,
  /// for the core build.
  public static func process() -> CommandContext { process(toolset: .core) }

  /// The context of this process for the build whose commands `toolset` adds.
  package static func process(toolset: Toolset) -> CommandContext {
    CommandContext(
      stdout: FileOutput(descriptor: STDOUT_FILENO), stderr: FileOutput(descriptor: STDERR_FILENO),
      readLine: { Swift.readLine(strippingNewline: true) },
      standardInput: .standardInput,
      stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stdinIsTerminal: isatty(STDIN_FILENO) == 1,
      environment: ProcessInfo.processInfo.environment,
      currentDirectory: FileManager.default.currentDirectoryPath, toolset: toolset)
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
