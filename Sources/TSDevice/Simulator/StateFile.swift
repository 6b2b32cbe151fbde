import Foundation
import TSModel

extension SimulatedWatch {
  /// The state as the state file holds it: pretty-printed JSON, sorted keys, final newline.
  /// - Throws: `DeviceError` (simulator, 4002) if encoding fails.
  public func jsonData() throws(DeviceError) -> Data { try StateFile.encode(self) }
}

/// Reading and atomically writing the simulated watch's JSON state file.
///
/// Errors are in the `tsapply.simulator` domain: 4001 missing or unreadable, 4003 corrupted or
/// of another version (the file is left untouched, never reset), 4002 cannot write.
enum StateFile {
  private struct Header: Decodable {
    var format: String?
    var version: Int?
  }

  static func read(_ file: String) throws(DeviceError) -> SimulatedWatch {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: file))
    } catch {
      if !FileManager.default.fileExists(atPath: file) {
        throw .simulator(.dataGetFailed, "no simulated watch at \(file); create one with 'tsapply device init'")
      }
      throw .simulator(.dataGetFailed, "cannot read the simulated watch at \(file): \(error.localizedDescription)")
    }
    return try decode(data, file: file)
  }

  static func decode(_ data: Data, file: String) throws(DeviceError) -> SimulatedWatch {
    let hint = "the file was left as it is; repair it, or reset the watch with 'tsapply device init --force'"
    let decoder = JSONDecoder()
    guard let header = try? decoder.decode(Header.self, from: data), header.format == SimulatedWatch.formatName else {
      throw .simulator(.dataFormatError, "\(file) is not a tsapply simulated-watch state file (not JSON, or no \"format\": \"\(SimulatedWatch.formatName)\"); \(hint)")
    }
    guard header.version == SimulatedWatch.currentVersion else {
      let found = header.version.map(String.init) ?? "none"
      throw .simulator(.dataFormatError, "\(file) has state format version \(found); this tsapply reads version \(SimulatedWatch.currentVersion); \(hint)")
    }
    let watch: SimulatedWatch
    do {
      watch = try decoder.decode(SimulatedWatch.self, from: data)
    } catch {
      throw .simulator(.dataFormatError, "\(file) is corrupted: \(describe(error, in: data)); \(hint)")
    }
    if let problem = watch.journalProblem {
      throw .simulator(.dataFormatError, "\(file) is corrupted: \(problem); \(hint)")
    }
    guard (try? PlatformProfile.named(watch.profile)) != nil else {
      throw .simulator(.dataFormatError, "\(file) names an unknown profile '\(watch.profile)'; \(hint)")
    }
    return watch
  }

  /// The decoding error's path and reason, e.g. `reminders[0].startTime: Expected to decode Int…`.
  /// Foundation reports a number that is not a whole `Int` (1.5, 1e30) as "not valid JSON" at
  /// the top level; the file is then read as plain JSON to find the number and say so.
  static func describe(_ error: any Error, in data: Data) -> String {
    guard let decoding = error as? DecodingError else { return "\(error)" }
    switch decoding {
    case .dataCorrupted(let context) where context.codingPath.isEmpty:
      if let value = try? JSONDecoder().decode(JSONValue.self, from: data), let found = firstNonInteger(value, path: []) {
        return "\(pathText(found.path)): expected an integer, found \(found.number)"
      }
      return "top level: \(context.debugDescription)"
    case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
      return "\(pathText(context.codingPath.map(\.pathComponent))): \(context.debugDescription)"
    @unknown default:
      return "\(decoding)"
    }
  }

  /// `reminders[0].startTime` from path components (`.name` or `[index]`).
  private static func pathText(_ components: [String]) -> String {
    let path = components.joined()
    return path.isEmpty ? "top level" : String(path.dropFirst(path.hasPrefix(".") ? 1 : 0))
  }

  /// The first number that is not a whole `Int`, in key order. The state file has no
  /// fractional fields, so any such number is what the decoder refused.
  private static func firstNonInteger(_ value: JSONValue, path: [String]) -> (path: [String], number: Double)? {
    switch value {
    case .number(let number):
      return (path, number)
    case .array(let items):
      for (index, item) in items.enumerated() {
        if let found = firstNonInteger(item, path: path + ["[\(index)]"]) { return found }
      }
      return nil
    case .object(let members):
      for key in members.keys.sorted() {
        if let member = members[key], let found = firstNonInteger(member, path: path + [".\(key)"]) { return found }
      }
      return nil
    case .null, .bool, .integer, .string:
      return nil
    }
  }

  static func encode(_ watch: SimulatedWatch) throws(DeviceError) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    do {
      return try encoder.encode(watch) + Data("\n".utf8)
    } catch {
      throw .simulator(.dataSetFailed, "cannot encode the simulated watch: \(error)")
    }
  }

  /// Replaces `file` with `watch`: a temporary file created 0600 beside it, written, fsynced,
  /// renamed over `file`, then the directory fsynced.
  static func write(_ watch: SimulatedWatch, to file: String) throws(DeviceError) {
    let data = try encode(watch)
    let directory = (file as NSString).deletingLastPathComponent
    let temporary = "\(directory)/.\((file as NSString).lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw writeError(file) }
    var ok = data.withUnsafeBytes { buffer in writeAll(fd, buffer) } && fsync(fd) == 0
    ok = close(fd) == 0 && ok
    guard ok, rename(temporary, file) == 0 else {
      let error = writeError(file)
      unlink(temporary)
      throw error
    }
    let dirfd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
    if dirfd >= 0 {
      fsync(dirfd)
      close(dirfd)
    }
  }

  private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
    guard let base = buffer.baseAddress else { return buffer.isEmpty }
    var offset = 0
    while offset < buffer.count {
      let written = Foundation.write(fd, base + offset, buffer.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return false
      }
      offset += written
    }
    return true
  }

  private static func writeError(_ file: String) -> DeviceError {
    .simulator(.dataSetFailed, "cannot write the simulated watch at \(file): \(errnoText())")
  }

  static func errnoText() -> String { String(cString: strerror(errno)) }

  /// Creates `directory` (and missing parents) with mode 0700.
  static func makeDirectory(_ directory: String) throws(DeviceError) {
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                              attributes: [.posixPermissions: 0o700])
    } catch {
      throw .simulator(.dataSetFailed, "cannot create the directory \(directory): \(error.localizedDescription)")
    }
  }
}

extension CodingKey {
  /// `.name` for a key, `[index]` for an array position.
  fileprivate var pathComponent: String { intValue.map { "[\($0)]" } ?? ".\(stringValue)" }
}
