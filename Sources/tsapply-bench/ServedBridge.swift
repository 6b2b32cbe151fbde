import Foundation
import TSDevice

/// A `tsapply bridge serve` process (the built binary) serving simulated watches on
/// 127.0.0.1 at a free port, and what it printed: the pairing string and each watch's id.
struct ServedBridge {
  let process: Process
  /// `tsapply-bridge:v1/…`, as printed after "Pairing string: ".
  let pairing: String
  /// Watch id by the path of its state file.
  let watchIDs: [String: String]

  /// Starts `binary bridge serve --listen 127.0.0.1:0` for the watches at `paths` (state files
  /// already made) with `environment`; returns once it printed its pairing string.
  /// - Throws: when the process cannot start or ends before it printed the pairing string.
  static func start(binary: String, paths: [String], environment: [String: String]) throws -> ServedBridge {
    let server = Process()
    server.executableURL = URL(fileURLWithPath: binary)
    server.arguments = ["bridge", "serve", "--listen", "127.0.0.1:0", "--show-pairing"] + paths.flatMap { ["--device", "sim:" + $0] }
    server.environment = environment
    let output = Pipe()
    server.standardOutput = output
    server.standardError = FileHandle.nullDevice
    try server.run()
    var text = ""
    while !text.contains("Pairing string: ") || !text.hasSuffix("\n") {
      let data = output.fileHandleForReading.availableData
      if data.isEmpty {
        server.terminate()
        server.waitUntilExit()
        throw BenchmarkFailure("\(binary) bridge serve ended: \(text)")
      }
      text += String(decoding: data, as: UTF8.self)
    }
    var watchIDs: [String: String] = [:]
    var pairing = ""
    for line in text.split(separator: "\n") {
      if line.hasPrefix("Serving "), let from = line.range(of: " from sim:") {
        watchIDs[String(line[from.upperBound...])] = String(line.dropFirst("Serving ".count).prefix { $0 != " " })
      } else if line.hasPrefix("Pairing string: ") {
        pairing = String(line.dropFirst("Pairing string: ".count))
      }
    }
    return ServedBridge(process: server, pairing: pairing, watchIDs: watchIDs)
  }

  /// Ends the process (SIGTERM) and waits for it.
  func stop() {
    process.terminate()
    process.waitUntilExit()
  }
}
