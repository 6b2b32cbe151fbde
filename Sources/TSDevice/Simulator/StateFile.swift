import Foundation
import TSModel

extension SimulatedWatch {
  /// The state as the state file holds it: pretty-printed JSON, `format` first and the other
  /// keys sorted, final newline.
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

  /// The state in `file`, for the watch the user calls `name` (used in the advice of errors).
  /// - Throws: 4001 when the file is missing, a directory or unreadable; 4003 when it is not a
  ///   state file, of another version, or corrupted.
  ///   Read bounded (`maxBytes`), like every file tsapply reads.
  static func read(_ file: String, name: WatchName) throws(DeviceError) -> SimulatedWatch {
    switch ManifestSource.file(path: file, displayName: file).read(maxBytes: maxBytes, noun: "simulated watch state") {
    case .success(let bytes):
      return try decode(Data(bytes), file: file, name: name)
    case .failure(let problem):
      switch problem.reason {
      case .notFound: throw .simulator(.dataGetFailed, "no simulated watch at \(file); create one with '\(name.initCommand(force: false))'")
      case .directory: try refuseDirectory(file)
      default: break
      }
      throw .simulator(.dataGetFailed, "cannot read the simulated watch at \(file): \(problem.explanation)")
    }
  }

  /// The most bytes a state file may have: a watch's whole state (100 contacts, 10 custom
  /// reminders and a long journal) is a few hundred KiB at most (`ManifestSource.maxRecordBytes`).
  static let maxBytes = ManifestSource.maxRecordBytes

  /// Refuses a directory where a state file is expected (4001, naming it).
  static func refuseDirectory(_ file: String) throws(DeviceError) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue else { return }
    throw .simulator(.dataGetFailed, "\(file) is a directory, but a simulated watch is a state file: name a file path, e.g. --device \(ShellWord.quoted(DeviceSelector.simulatorScheme + file + "/device.json"))")
  }

  static func decode(_ data: Data, file: String, name: WatchName = .defaultWatch) throws(DeviceError) -> SimulatedWatch {
    // Built only for an error (it quotes a command for the watch's name).
    var hint: String { "the file was left as it is; repair it, or reset the watch with '\(name.initCommand(force: true))'" }
    // One pass when the file reads; a refusal reads it again the slow way, header first, for
    // the plainest reason (JSONDecoder words an error well only from its own top level).
    // The fast path first, for a file in the form tsapply writes (`JSONReader`).
    let fast = JSONReader.decode(SimulatedWatch.self, from: data)
    let contents = fast.map { HeaderAndBody<Header, SimulatedWatch>(header: Header(format: $0.format, version: $0.version), body: $0) }
      ?? (try? JSONDecoder().decode(HeaderAndBody<Header, SimulatedWatch>.self, from: data))
    let header = contents?.header ?? (try? JSONDecoder().decode(Header.self, from: data))
    guard let header, header.format == SimulatedWatch.formatName else {
      // `device init --force` replaces only a file that carries the marker; the advice says
      // what it will do with this one.
      let advice = carriesFormatMarker(data) ? hint
        : "the file was left as it is; it is not a state file, so 'tsapply device init --force' will not replace it: if it may go, remove it yourself and create the watch again with '\(name.initCommand(force: false))'"
      throw .simulator(.dataFormatError, "\(file) is not a tsapply simulated-watch state file (not JSON, or no \"format\": \"\(SimulatedWatch.formatName)\"); \(advice)")
    }
    guard header.version == SimulatedWatch.currentVersion else {
      let found = header.version.map(String.init) ?? "none"
      throw .simulator(.dataFormatError, "\(file) has state format version \(found); this tsapply reads version \(SimulatedWatch.currentVersion); \(hint)")
    }
    // JSONDecoder keeps one value of a key written twice without a word (the fast path reads
    // no such file), so a hand edit could hide contacts: refused as corrupted.
    if fast == nil, let repeated = JSONReader.firstRepeatedKey(in: data) {
      throw .simulator(.dataFormatError, "\(file) is corrupted: \(repeated); \(hint)")
    }
    let watch: SimulatedWatch
    do {
      watch = try contents?.body ?? JSONDecoder().decode(SimulatedWatch.self, from: data)
    } catch {
      throw .simulator(.dataFormatError, "\(file) is corrupted: \(DecodingProblem.describe(error, in: data)); \(hint)")
    }
    if let problem = watch.journalProblem {
      throw .simulator(.dataFormatError, "\(file) is corrupted: \(problem); \(hint)")
    }
    guard (try? PlatformProfile.named(watch.profile)) != nil else {
      throw .simulator(.dataFormatError, "\(file) names an unknown profile '\(watch.profile)'; \(hint)")
    }
    return watch
  }

  /// Whether `file` carries the state file's format marker, so `tsapply device init --force`
  /// may replace it: its top-level `"format"` is `SimulatedWatch.formatName`, or, when it is not
  /// JSON (a corrupted state file, e.g. cut short), its first `markerWindow` bytes hold
  /// `"format": "tsapply-simulated-watch"`. Anything else (a manifest, a backup, an empty file)
  /// does not, and is never overwritten.
  static func carriesFormatMarker(_ file: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: file) else { return false }
    defer { try? handle.close() }
    guard let data = try? handle.read(upToCount: wholeReadLimit) else { return false }
    return carriesFormatMarker(data)
  }

  /// `carriesFormatMarker(_:)` for a file's first `wholeReadLimit` bytes (or all of them), so the
  /// advice of a 4003 error and `device init --force` agree on which files may be replaced.
  static func carriesFormatMarker(_ data: Data) -> Bool {
    guard !data.isEmpty else { return false }
    let data = data.prefix(wholeReadLimit)
    if data.count < wholeReadLimit, let header = try? JSONDecoder().decode(Header.self, from: data) {
      return header.format == SimulatedWatch.formatName
    }
    let text = String(decoding: data.prefix(markerWindow), as: UTF8.self)
    let pattern = #""format"\s*:\s*""# + NSRegularExpression.escapedPattern(for: SimulatedWatch.formatName) + "\""
    return (try? Regex(pattern)).map { text.contains($0) } ?? false
  }

  /// Bytes of a file searched for the format marker when it is not JSON. tsapply writes the
  /// marker first (`formatFirst`); files written before it have it after `contacts` (at most
  /// 100) and `emergency`, which keys sorted put first.
  static let markerWindow = 1 << 20
  /// Largest file read whole to check its top-level `format`.
  static let wholeReadLimit = 16 << 20

  static func encode(_ watch: SimulatedWatch) throws(DeviceError) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let sorted: Data
    do {
      sorted = try encoder.encode(watch) + Data("\n".utf8)
    } catch {
      throw .simulator(.dataSetFailed, "cannot encode the simulated watch: \(error)")
    }
    return formatFirst(sorted)
  }

  /// The top-level `"format"` line moved to the top, so that the marker is in the first bytes of
  /// every state file: a file cut short anywhere but its first line still carries it, and `init
  /// --force` may replace it (`carriesFormatMarker`). Keys are otherwise sorted; with pretty
  /// printing a top-level key is the only line that starts with two spaces and a quote and holds
  /// this exact text (a string inside is escaped and indented deeper).
  static func formatFirst(_ sorted: Data) -> Data {
    let line = Data("\n  \"format\" : \"\(SimulatedWatch.formatName)\",".utf8)
    guard sorted.starts(with: Data("{".utf8)), let range = sorted.range(of: line) else { return sorted }
    var moved = sorted
    moved.removeSubrange(range)
    moved.insert(contentsOf: line, at: moved.index(after: moved.startIndex))
    return moved
  }

  /// Replaces `file` with `watch` (`SecureFile.write`: a temporary file created 0600 beside it,
  /// written, fsynced, renamed over `file`, the directory fsynced).
  static func write(_ watch: SimulatedWatch, to file: String) throws(DeviceError) {
    let data = try encode(watch)
    do {
      try SecureFile.write([UInt8](data), to: file)
    } catch {
      throw .simulator(.dataSetFailed, "cannot write the simulated watch at \(file): \(error.reason)")
    }
  }

  private static func writeError(_ file: String) -> DeviceError {
    .simulator(.dataSetFailed, "cannot write the simulated watch at \(file): \(errnoText())")
  }

  static func errnoText() -> String { String(cString: strerror(errno)) }

  /// Creates `directory` (and missing parents) with mode 0700.
  /// - Throws: 4002 naming the directory; when it or a parent is a file, saying so.
  static func makeDirectory(_ directory: String) throws(DeviceError) {
    if let blocker = FilePaths.nonDirectory(in: directory) {
      throw .simulator(.dataSetFailed, "cannot create the directory \(directory): \(FilePaths.notADirectory(directory, blocker: blocker))")
    }
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                              attributes: [.posixPermissions: 0o700])
    } catch {
      throw .simulator(.dataSetFailed, "cannot create the directory \(directory): \(FilePaths.systemReason(of: error))")
    }
  }
}
