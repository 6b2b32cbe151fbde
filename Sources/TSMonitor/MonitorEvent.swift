import Foundation
import TSManifest
import TSModel
import TSPlan

/// One thing a monitor saw or did, as it is logged (one JSON object per line), shown (one human
/// line) and, for an SOS, delivered to the notifiers.
///
/// Every event has `time` (UTC, milliseconds), `watch` (the watch's identity), `kind`, `id` and a
/// one-line `message` for people; the kind's own fields are in `fields` (docs/monitor.md
/// "Events"). Phone numbers are masked in `fields` and `message` unless the monitor was told to
/// show them (`--show-sensitive`).
public struct MonitorEvent: Hashable, Sendable {
  /// What happened.
  public enum Kind: String, Hashable, Sendable, CaseIterable {
    /// The watch changed since the last apply (`changes`: resource changes, `before` = what the
    /// apply left, `after` = now), and what healing did about it (`reconcile`).
    case drift
    /// The drift reported last (`drift_id`) is gone: the watch holds what the last apply left.
    case resolved
    /// The wearer pressed SOS.
    case sos
    /// The watch (or the bridge in front of it) cannot be reached; the monitor keeps retrying.
    case offline
    /// The watch is reached: at start and after each outage, with what is listened for and polled.
    case online
    /// The monitor healed drift through the engine's apply (`drift_id`, counts, `backup`).
    case applied
    /// Something the monitor was asked to do failed or was refused (`reason`).
    case error
    /// Someone acknowledged an SOS press on the status page (`sos_id`, `by`: the name they
    /// gave, `sos_watch`): the record of who took it on, and when.
    case acknowledged
    /// An alert (`Alerts`): `alert` (its kind: `drift`, `drifting_back`, `applied`, `failed`,
    /// `refused`, `offline`, `agent_offline`, `monitor_offline`, `recovered`, `test`), `severity`, `cause_id` (the
    /// event that raised it), `recovers` and `opened_id` for `recovered`.
    case alert
    /// An SOS whose delivery to a notifier failed (an `error`, `reason: delivery`) reached it
    /// now (`event_id`, `notifier`, `attempt`): what ends "not delivered yet" on the page.
    case delivered
    /// The watch left the fleet file while `monitor --fleet` ran (`fleet`: the fleet file,
    /// `device`): its monitor stopped, so it is no longer checked and its SOS presses are no
    /// longer heard, and it left the status page.
    case removed
  }

  /// When it happened.
  public var time: Date
  /// The watch's identity (`Device.identity`).
  public var watch: String
  /// What happened.
  public var kind: Kind
  /// Unique, so receivers can drop a second delivery of the same event.
  public var id: String
  /// One line for people (already masked as configured).
  public var message: String
  /// The kind's own fields, by JSON key.
  public var fields: [String: JSONValue]

  /// An event; `id` defaults to a new one for `time`.
  public init(time: Date, watch: String, kind: Kind, id: String? = nil, message: String,
              fields: [String: JSONValue] = [:]) {
    self.time = time
    self.watch = watch
    self.kind = kind
    self.id = id ?? Self.newID(time: time)
    self.message = message
    self.fields = fields
  }

  /// The event `jsonLine` holds (an outbox entry's body), or `nil` when it holds none: `time`
  /// (to the millisecond, as written), `watch`, `kind`, `id` and `message` read back, every other
  /// key a field.
  public init?(jsonLine: String) {
    guard case .object(var object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(jsonLine.utf8)),
          case .string(let time)? = object.removeValue(forKey: "time"), let date = InternetTime.date(time),
          case .string(let watch)? = object.removeValue(forKey: "watch"),
          case .string(let word)? = object.removeValue(forKey: "kind"), let kind = Kind(rawValue: word),
          case .string(let id)? = object.removeValue(forKey: "id"),
          case .string(let message)? = object.removeValue(forKey: "message") else { return nil }
    self.init(time: date, watch: watch, kind: kind, id: id, message: message, fields: object)
  }

  /// A new event id: the UTC time to the millisecond and 64 random bits in hex,
  /// e.g. `20261201T093000.123Z-5e1b7a90c4d2e6f1`. Ids sort by time.
  public static func newID(time: Date) -> String {
    let compact = String(timestamp(time).unicodeScalars.filter { $0 != "-" && $0 != ":" })
    return compact + "-" + RandomHex.sixteenDigits()
  }

  /// For a `drift` event: whether the drift alters whom an SOS press reaches — its
  /// `sos_at_risk` field (`ResourceChange.putsSOSAtRisk`), or, in an event from a monitor or an
  /// agent older than that field, the emergency list among its `addresses`.
  public var putsSOSAtRisk: Bool {
    if case .bool(let atRisk)? = fields["sos_at_risk"] { return atRisk }
    return ResourceAddress.mayPutSOSAtRisk(names("addresses"))
  }

  /// The strings of the list field `key` (`addresses`, `not_healed`); empty when it has none.
  public func names(_ key: String) -> [String] {
    guard case .array(let values)? = fields[key] else { return [] }
    return values.compactMap { if case .string(let text) = $0 { text } else { nil } }
  }

  /// For an `offline` event: when the outage was found — its `since` field, earlier than the
  /// event when a restarted monitor goes on with an outage its last run found — else its time.
  public var offlineSince: Date {
    if case .string(let since)? = fields["since"], let date = InternetTime.date(since), date <= time { return date }
    return time
  }

  /// `time` as ISO 8601 in UTC with milliseconds: `2026-12-01T09:30:00.123Z` (`InternetTime`).
  public static func timestamp(_ time: Date) -> String { InternetTime.text(time) }

  /// The whole event as one JSON object: the common keys and `fields`.
  public var json: JSONValue {
    var object = fields
    object["time"] = .string(Self.timestamp(time))
    object["watch"] = .string(watch)
    object["kind"] = .string(kind.rawValue)
    object["id"] = .string(id)
    object["message"] = .string(message)
    return .object(object)
  }

  /// The event as compact JSON with sorted keys on one line, without the newline (control
  /// characters in text are escaped, so it never spans lines): the log line and the webhook body.
  public var jsonLine: String { Self.compact(json) }

  /// `value` as compact JSON, keys sorted, slashes unescaped: `ManifestJSON.encoded`, which
  /// writes what `JSONEncoder` writes for these options (keys in `String` order, the same
  /// escapes) at a tenth of the cost; a whole number (`interval_seconds: 300`) is written as
  /// the integer it is, as `JSONEncoder` writes it; a value holding a fraction goes through
  /// `JSONEncoder`, whose spelling of doubles is its own.
  public static func compact(_ value: JSONValue) -> String {
    var text: String
    if let whole = wholeNumbers(value) {
      text = ManifestJSON.encoded(whole)
    } else {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      guard let data = try? encoder.encode(value) else { return "{}" }
      text = String(decoding: data, as: UTF8.self)
    }
    // Neither escapes U+2028 and U+2029 (E2 80 A8/A9 in UTF-8); some line readers split on them.
    guard text.utf8.contains(0xE2) else { return text }
    text = text.replacingOccurrences(of: "\u{2028}", with: "\\u2028").replacingOccurrences(of: "\u{2029}", with: "\\u2029")
    return text
  }

  /// `value` with each `.number` that is a whole number of at most 2⁵³ in size (exact in a
  /// double) as that `.integer`; `value` itself when it holds no `.number`; `nil` when one is
  /// a fraction, not finite or larger.
  private static func wholeNumbers(_ value: JSONValue) -> JSONValue? {
    switch value {
    case .number(let number):
      guard number.isFinite, number.rounded() == number, abs(number) <= 9_007_199_254_740_992 else { return nil }
      return .integer(Int(number))
    case .array(let items):
      var whole: [JSONValue] = []
      whole.reserveCapacity(items.count)
      for item in items {
        guard let converted = wholeNumbers(item) else { return nil }
        whole.append(converted)
      }
      return .array(whole)
    case .object(let entries):
      var whole = entries
      for (key, entry) in entries {
        switch entry {
        case .null, .bool, .integer, .string: continue
        case .number, .array, .object:
          guard let converted = wholeNumbers(entry) else { return nil }
          whole[key] = converted
        }
      }
      return .object(whole)
    case .null, .bool, .integer, .string: return value
    }
  }

  /// One line for a terminal: local time, kind, message (control characters escaped), e.g.
  /// `09:31:02 drift     contacts changed on the watch …`.
  public var humanLine: String {
    var seconds = time_t(time.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    localtime_r(&seconds, &parts)
    let clock = String(format: "%02d:%02d:%02d", Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    let label = (kind == .sos ? "SOS" : kind.rawValue).padding(toLength: 9, withPad: " ", startingAt: 0)
    return "\(clock) \(label)\(ControlCharacters.escaped(message))"
  }
}
