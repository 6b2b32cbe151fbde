import Foundation
import TSManifest
import TSModel

/// A copy of everything tsapply manages on a watch, taken before an apply's first write so that
/// `tsapply restore` can put the watch back exactly as it was.
///
/// Stored as JSON at `.tsapply/backups/<UTC timestamp>.json`, mode 0600 (it holds contacts).
public struct Backup: Hashable, Codable, Sendable {
  /// Version of this file's format.
  public static let currentFormatVersion = 1

  /// `format_version` in JSON; `read(path:)` refuses any value other than `currentFormatVersion`.
  public var formatVersion: Int
  /// When the backup was taken, ISO 8601 UTC.
  public var createdAt: String
  /// Platform profile of the watch (restore refuses another platform).
  public var profile: String
  /// The watch the backup was taken from (e.g. `sim:/abs/path.json`); restore goes back to it
  /// unless `--device` names another. `nil` in backups that did not record it.
  public var device: String?
  /// The watch's state before the apply.
  public var state: DeviceState

  /// A backup of `state` taken at `createdAt` (stored as ISO 8601 UTC, whole seconds) from a
  /// `profile` watch identified by `device` (e.g. `sim:/abs/path.json`).
  public init(createdAt: Date, profile: String, device: String? = nil, state: DeviceState) {
    self.formatVersion = Self.currentFormatVersion
    self.createdAt = Backup.timestamp(createdAt, style: .iso)
    self.profile = profile
    self.device = device
    self.state = state
  }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", createdAt = "created_at", profile, device, state
  }

  /// Writes the backup into `directory` under a timestamped name and returns the path.
  ///
  /// The name is the UTC time with milliseconds (`20261129T231841.123Z.json`), so names sort by
  /// time; a second backup in the same millisecond gets a `-2`, `-3`… suffix instead of replacing
  /// the first. Each name is claimed atomically (`SecureFile.write(overwrite: false)`), so two
  /// processes backing up at once never write the same file.
  /// - Throws: `SecureFileError` when the directory or file cannot be written.
  public func write(into directory: String, at date: Date) throws(SecureFileError) -> String {
    let base = directory + "/" + Backup.timestamp(date, style: .fileName)
    let bytes = Array(canonicalJSON(self).utf8)
    for counter in 1...10_000 {
      let path = counter == 1 ? base + ".json" : "\(base)-\(counter).json"
      do {
        try SecureFile.write(bytes, to: path, overwrite: false)
        return path
      } catch where error.alreadyExists {
        continue
      }
    }
    throw SecureFileError(path: base + ".json", reason: "10 000 backups already carry this millisecond's name")
  }

  /// Reads a backup file.
  /// - Throws: `BackupError` when the file is missing, unreadable, of another format version, or
  ///   not a tsapply backup; the reason names the field that is wrong in plain words
  ///   (`DecodingProblem`), e.g. `not a tsapply backup (state.contacts[0].phoneNum: missing)`.
  public static func read(path: String) throws(BackupError) -> Backup {
    let data: Data
    switch ManifestSource.file(path: path, displayName: path).read(maxBytes: ManifestSource.maxRecordBytes, noun: "backup") {
    case .success(let bytes): data = Data(bytes)
    case .failure(let error): throw BackupError(path: path, reason: error.explanation)
    }
    do {
      return try RecordFile.decode(Backup.self, from: data, currentVersion: currentFormatVersion, kind: "backup")
    } catch {
      // A saved plan given for a backup is named as such, with the command that takes it.
      if (try? SavedPlan.parse([UInt8](data), path: path)) != nil {
        throw BackupError(path: path, reason: "it is a saved plan (tsapply plan -out), not a backup: apply it with 'tsapply apply \(path)'")
      }
      // So is a manifest (fresh-eyes fe106 #5: "top level: not valid JSON", and no word of it).
      if ManifestLoader.load(bytes: [UInt8](data), file: path).manifest != nil {
        throw BackupError(path: path, reason: "it is a manifest, not a backup: apply it with 'tsapply apply \(ShellWord.quoted(path))'")
      }
      throw BackupError(path: path, reason: error.reason)
    }
  }

  enum TimestampStyle { case iso, fileName }

  /// `date` in UTC as `2026-11-29T23:18:41Z` (`.iso`) or `20261129T231841.123Z` (`.fileName`:
  /// file names carry milliseconds so that backups sort by time even within one second).
  /// Formatted from `gmtime_r`'s fields: a `DateFormatter` would start ICU for every apply.
  static func timestamp(_ date: Date, style: TimestampStyle) -> String {
    // Milliseconds since 1970 to the nearest, as Foundation hands a date to ICU, so the digits agree.
    let milliseconds = Int64(((date.timeIntervalSinceReferenceDate + 978_307_200) * 1000 + 0.5).rounded(.down))
    var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
    var fields = tm()
    gmtime_r(&seconds, &fields)
    func digits(_ value: some BinaryInteger, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    let day = digits(Int(fields.tm_year) + 1900, 4) + (style == .iso ? "-" : "") + digits(fields.tm_mon + 1, 2)
      + (style == .iso ? "-" : "") + digits(fields.tm_mday, 2)
    let time = [fields.tm_hour, fields.tm_min, fields.tm_sec].map { digits($0, 2) }.joined(separator: style == .iso ? ":" : "")
    return style == .iso ? "\(day)T\(time)Z" : "\(day)T\(time).\(digits(milliseconds - Int64(seconds) * 1000, 3))Z"
  }
}

/// A backup file that cannot be used, with the path and the reason.
public struct BackupError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The backup file's path, as given to `read(path:)`.
  public var path: String
  /// Why it cannot be used, in plain words (missing, not a backup, unsupported format).
  public var reason: String
  /// The backup at `path` cannot be used because of `reason`.
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }
  public var description: String { "cannot restore from \(path): \(reason)" }
}
