import Foundation
import TSModel
import TSApply

/// The durable outbox of one watch's SOS events (`outbox/` in its state folder, `WatchHome`):
/// an event is written here, flushed to disk, before any notifier runs, and removed only when
/// every notifier has succeeded; a monitor that was stopped or killed delivers what is left when
/// it starts again. Delivery is therefore at least once: a receiver may see an event twice
/// (after a crash between its success and the outbox's update) and drops the second by its id.
///
/// One file per event, `<event id>.json` (0600, folder 0700), replaced atomically and the folder
/// synced after every change, so neither a crash nor a power cut leaves half an entry.
public struct Outbox: Sendable {
  /// One undelivered event.
  public struct Entry: Hashable, Codable, Sendable {
    /// Always `tsapply-monitor-outbox`.
    public var format: String
    /// The entry format's version (1).
    public var version: Int
    /// The event's id.
    public var id: String
    /// The event exactly as delivered: the webhook body and `TSAPPLY_EVENT_JSON` (its bytes are
    /// what the signature covers, so every retry sends the same bytes).
    public var body: String
    /// Keys of the notifiers that have already succeeded (`Notifier.key`).
    public var delivered: [String]
    /// Attempts started so far, by notifier key (counted before each attempt, so one cut short
    /// by a crash counts); absent in entries written before attempts were counted.
    public var attempts: [String: Int]?
    /// When each notifier's first failed attempt ended (ISO 8601), by notifier key: how long a
    /// delivery has failed, across restarts; absent in entries written before it was kept.
    public var failingSince: [String: String]?

    /// An entry for the event `id` whose JSON is `body`, delivered to nobody yet.
    public init(id: String, body: String, delivered: [String] = [], attempts: [String: Int]? = nil) {
      format = Outbox.formatName
      version = Outbox.currentVersion
      self.id = id
      self.body = body
      self.delivered = delivered
      self.attempts = attempts
    }
  }

  /// The `format` of every entry.
  public static let formatName = "tsapply-monitor-outbox"
  /// The entry version this build reads and writes.
  public static let currentVersion = 1

  /// Absolute path of the folder.
  public let directory: String

  /// The outbox in `directory` (created when the first entry is written).
  public init(directory: String) { self.directory = directory }

  /// Writes `entry`, replacing an entry with the same id; returns once it is on disk.
  /// - Throws: `SecureFileError` when it cannot be written.
  public func put(_ entry: Entry) throws(SecureFileError) {
    guard Self.isSafeID(entry.id) else { throw SecureFileError(path: directory, reason: "'\(entry.id)' is not an event id") }
    let data: Data
    do {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      data = try encoder.encode(entry)
    } catch {
      throw SecureFileError(path: path(entry.id), reason: "cannot encode the entry: \(error)")
    }
    try SecureFile.write(Array(data), to: path(entry.id))
    syncDirectory()
  }

  /// Records that the notifier `key` delivered the entry `id`.
  /// - Throws: `SecureFileError` when the entry cannot be rewritten.
  public func markDelivered(_ id: String, by key: String) throws(SecureFileError) {
    guard var entry = entry(id), !entry.delivered.contains(key) else { return }
    entry.delivered.append(key)
    try put(entry)
  }

  /// Counts one more attempt to deliver the entry `id` to the notifier `key` and returns its
  /// number (1 for the first, across restarts); on disk before it returns. An entry that is
  /// gone or unreadable counts from `fallback`.
  /// - Throws: `SecureFileError` when the entry cannot be rewritten.
  public func beginAttempt(_ id: String, by key: String, fallback: Int) throws(SecureFileError) -> Int {
    guard var entry = entry(id) else { return fallback }
    let attempt = max(fallback, (entry.attempts?[key] ?? 0) + 1)
    entry.attempts = (entry.attempts ?? [:]).merging([key: attempt]) { _, new in new }
    try put(entry)
    return attempt
  }

  /// When `key` first failed to deliver `id`: as recorded, or `time`, recorded now (the first
  /// failure). `time` when the entry is gone.
  /// - Throws: `SecureFileError` when the entry cannot be written.
  public func failing(_ id: String, by key: String, at time: Date) throws(SecureFileError) -> Date {
    guard var entry = entry(id) else { return time }
    if let kept = entry.failingSince?[key].flatMap(InternetTime.date) { return kept }
    entry.failingSince = (entry.failingSince ?? [:]).merging([key: InternetTime.text(time)]) { _, new in new }
    try put(entry)
    return time
  }

  /// Removes the entry `id` (every notifier succeeded).
  public func remove(_ id: String) {
    guard Self.isSafeID(id) else { return }
    unlink(path(id))
    syncDirectory()
  }

  /// The entry `id`, if it is there and readable.
  public func entry(_ id: String) -> Entry? {
    guard Self.isSafeID(id) else { return nil }
    return try? read(path(id))
  }

  /// The entry storing the SOS press the device numbered `deviceEvent` (its event's
  /// `device_event_id`), if any: that press heard again — replayed to a monitor whose earlier
  /// run stored it and was killed before it recorded it as handled.
  public func entry(deviceEvent: String) -> Entry? {
    entries().entries.first { MonitorEvent(jsonLine: $0.body)?.fields["device_event_id"] == .string(deviceEvent) }
  }

  /// Every entry, oldest first, and the files that are not readable entries (named, never
  /// removed: they are left for a person to look at).
  public func entries() -> (entries: [Entry], unreadable: [String]) {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    var entries: [Entry] = [], unreadable: [String] = []
    for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
      let file = directory + "/" + name
      var info = stat()
      guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        unreadable.append(file)
        continue
      }
      if let entry = try? read(file), entry.id + ".json" == name { entries.append(entry) } else { unreadable.append(file) }
    }
    return (entries, unreadable)
  }

  /// Path of the entry `id`.
  public func path(_ id: String) -> String { directory + "/" + id + ".json" }

  /// Whether `id` can name a file: letters, digits, `.`, `-`, `_`, not starting with a dot.
  public static func isSafeID(_ id: String) -> Bool {
    !id.isEmpty && id.count <= 128 && !id.hasPrefix(".")
      && id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
  }

  private func read(_ file: String) throws -> Entry {
    guard let data = FileManager.default.contents(atPath: file), data.count <= 1 << 20 else {
      throw SecureFileError(path: file, reason: "unreadable")
    }
    let entry = try JSONDecoder().decode(Entry.self, from: data)
    guard entry.format == Self.formatName, entry.version == Self.currentVersion else {
      throw SecureFileError(path: file, reason: "not an outbox entry of version \(Self.currentVersion)")
    }
    return entry
  }

  /// Makes the folder's latest renames and removals durable.
  private func syncDirectory() {
    let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
  }
}

extension Outbox.Entry {
  /// The SOS press this entry stores, to be said again by a monitor that finds it left in the
  /// outbox at its start: the run that stored it may have been killed before it said it (the
  /// outbox is written first), so its `sos` event may be in no log and on no page. The stored
  /// event, marked `left_in_outbox: true`; a reader that had it already drops it by its id (the
  /// status page does). `nil` when the body is not an SOS event with the entry's id.
  public var leftPress: MonitorEvent? {
    guard var event = MonitorEvent(jsonLine: body), event.kind == .sos, event.id == id else { return nil }
    event.fields["left_in_outbox"] = .bool(true)
    return event
  }

  /// The watch the stored event names: the name the press was made under (the watch's
  /// identity for `tsapply monitor`); `nil` when the body is not an event.
  public var pressedBy: String? { MonitorEvent(jsonLine: body)?.watch }
}
