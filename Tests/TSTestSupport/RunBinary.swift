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
    DispatchQueue.global().async {
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

  /// Runs `/bin/sh -c script` in `directory`, with `$TSAPPLY` set to the built binary's path, so
  /// a test can redirect standard input from a file (`< /dev/zero`) or bound memory (`ulimit -v`).
  public static func runShell(_ script: String, in directory: URL? = nil) throws -> ProcessResult {
    try runProgram(URL(fileURLWithPath: "/bin/sh"), ["-c", script], in: directory, environment: ["TSAPPLY": url.path])
  }

  /// A new empty temporary directory.
  public static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tsapply-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }
}
