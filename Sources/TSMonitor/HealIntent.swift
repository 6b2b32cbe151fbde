import Foundation
import TSModel

/// The drift a monitor is healing, kept on disk while the heal's apply runs
/// (`WatchHome.monitorHealPath`, 0600: its changes may name contacts): written before the apply
/// starts and removed once the drift event is out. A monitor killed while it heals (its apply
/// left unfinished in the watch's history) reports the drift when it starts again — the event
/// it would have sent, with `reconcile: interrupted` — so a drift healed by an apply that never
/// finished, an SOS switched off for the seconds it took, is never lost without a trace
/// (docs/monitor.md "Drift and healing").
struct HealIntent: Codable {
  var format = "tsapply-monitor-heal"
  var version = 1
  /// The drift event's id, time (ISO 8601), watch, message and fields, as it would be sent
  /// had the heal been cut short.
  var id: String
  var time: String
  var watch: String
  var message: String
  var fields: [String: JSONValue]

  /// At most this many bytes are read.
  static let maxBytes = 1024 * 1024

  /// The intent for `event` (a drift event, worded for a heal cut short).
  init(_ event: MonitorEvent) {
    id = event.id
    time = MonitorEvent.timestamp(event.time)
    watch = event.watch
    message = event.message
    fields = event.fields
  }

  /// Writes `event` as the intent at `path`.
  /// - Throws: `SecureFileError` when it cannot be written.
  static func write(_ event: MonitorEvent, to path: String) throws(SecureFileError) {
    try SecureFile.write(Array(canonicalJSON(HealIntent(event)).utf8), to: path)
  }

  /// The drift event an intent left at `path` says (`nil` when there is none, or it cannot be
  /// used), and removes the file.
  static func take(_ path: String) -> MonitorEvent? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer {
      try? handle.close()
      unlink(path)
    }
    guard let data = try? handle.read(upToCount: maxBytes + 1), data.count <= maxBytes,
          let intent = try? JSONDecoder().decode(HealIntent.self, from: data), intent.format == "tsapply-monitor-heal",
          let time = InternetTime.date(intent.time) else { return nil }
    return MonitorEvent(time: time, watch: intent.watch, kind: .drift, id: intent.id, message: intent.message, fields: intent.fields)
  }
}
