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
  /// Set when the event was sent already: a `monitor --once` run ended with that drift open (no
  /// `resolved`), kept so the next run ends it or replaces it (`supersedes`), saying whether a
  /// heal reached the watch over it (`healed`).
  var sent: Bool?
  var healed: Bool?
  /// With `sent`: how many entries the watch's history had when the drift was found, so the next
  /// monitor tells an apply made after them as having written over it (`Monitor.overwrite`);
  /// `nil` when not known.
  var history: Int?

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

  /// Writes `event` as the intent at `path`; with `sent`, as a drift reported and left open
  /// (`healed`: a heal reached the watch over it). An intent before a heal is fsynced (a heal a
  /// power cut interrupted is told on restart); a drift left open is not: losing it to a power
  /// cut makes a restart report that drift again as new, and a thousand drifted watches' first
  /// start would cost two thousand fsyncs.
  /// - Throws: `SecureFileError` when it cannot be written.
  static func write(_ event: MonitorEvent, to path: String, sent: Bool = false, healed: Bool = false, history: Int? = nil) throws(SecureFileError) {
    var intent = HealIntent(event)
    if sent { (intent.sent, intent.healed, intent.history) = (true, healed, history) }
    try SecureFile.write(Array(canonicalJSON(intent).utf8), to: path, durable: !sent)
  }

  /// The drift event an intent left at `path` says, whether it was sent already and whether a
  /// heal reached the watch over it (`nil` when there is none, or it cannot be used), and
  /// removes the file.
  static func take(_ path: String) -> (event: MonitorEvent, sent: Bool, healed: Bool, history: Int?)? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer {
      try? handle.close()
      unlink(path)
    }
    guard let data = try? handle.read(upToCount: maxBytes + 1), data.count <= maxBytes,
          let intent = try? JSONDecoder().decode(HealIntent.self, from: data), intent.format == "tsapply-monitor-heal",
          let time = InternetTime.date(intent.time) else { return nil }
    return (MonitorEvent(time: time, watch: intent.watch, kind: .drift, id: intent.id, message: intent.message, fields: intent.fields),
            intent.sent == true, intent.healed == true, intent.history)
  }
}
