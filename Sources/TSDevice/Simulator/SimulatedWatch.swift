import Foundation
import TSModel

/// Everything a simulated watch holds, as kept in its state file (`.tsapply/device.json`):
/// the profile it simulates, its reminders, contacts, emergency contacts and SOS switch, and a
/// journal of changes made on the watch itself (for drift and listeners).
///
/// Written as JSON with sorted keys; `format` and `version` let a reader refuse a file it does
/// not understand instead of misreading it.
public struct SimulatedWatch: Codable, Hashable, Sendable {
  /// The `format` value of every state file.
  public static let formatName = "tsapply-simulated-watch"
  /// The state file version this build reads and writes.
  public static let currentVersion = 1
  /// Journal entries kept; older ones are dropped (listeners only need recent events).
  public static let journalLimit = 200

  /// Always `formatName`; a file without it is refused as not a state file.
  public var format: String
  /// State file version; only `currentVersion` is read.
  public var version: Int
  /// Profile name (`PlatformProfile.name`).
  public var profile: String
  /// Every reminder as the watch stores it, built-ins first, in watch order.
  public var reminders: [Reminder]
  /// Regular contacts in watch order (empty where the platform has none).
  public var contacts: [Contact]
  /// Emergency contacts and the SOS switch.
  public var emergency: EmergencyContacts
  /// Watch-side changes, oldest first, at most `journalLimit`.
  public var journal: [WatchEvent]
  /// Sequence number the next journal entry gets (1 for the first).
  public var nextSequence: Int
  /// Random per watch made (`device init`, and each reset with `--force`): the first part of
  /// every event id (`EPOCH-SEQUENCE`, `eventID(_:)`), so an id heard before a reset is never
  /// taken for one of the new numbering, which starts again at 1 (a listener resuming after it
  /// hears every event the new journal keeps). 1–16 lowercase hex digits; `nil` in files
  /// written before it was kept, whose ids are the bare sequence number.
  public var journalEpoch: String?

  /// A watch of `profile` holding `state`, or the profile's factory state when `state` is `nil`
  /// (a `nil` emergency list in `state` means none, SOS off).
  public init(profile: PlatformProfile, state: DeviceState? = nil) {
    let state = state ?? profile.factoryState
    format = Self.formatName
    version = Self.currentVersion
    self.profile = profile.name
    reminders = state.reminders
    contacts = state.contacts
    emergency = state.emergency ?? EmergencyContacts(contacts: [], isSosOn: false)
    journal = []
    nextSequence = 1
    journalEpoch = String(UInt32.random(in: 0...UInt32.max), radix: 16)
  }

  /// The id listeners are given for the journal entry numbered `sequence`: `EPOCH-SEQUENCE`, or
  /// the bare number for a watch without an epoch (`journalEpoch`).
  public func eventID(_ sequence: Int) -> DeviceEventID {
    DeviceEventID(journalEpoch.map { "\($0)-\(sequence)" } ?? String(sequence))
  }

  /// Where a listener resuming after `id` starts, and what it can no longer be given.
  ///
  /// `heard`: the sequence number it has heard the journal up to — the id's number when the id
  /// is of this journal (its epoch, a number this journal has reached); otherwise 0, so every
  /// entry kept is replayed: an id from before a reset (another epoch, or a bare number where
  /// the watch now has an epoch), from an older copy of the file put back (a number beyond this
  /// journal's newest), or none a watch writes (`DeviceEventID.everything`). Replaying too much
  /// can repeat an event; too little would lose an SOS press.
  ///
  /// `missedBefore`: the id of the first event it is given when events after `id` can no
  /// longer be had (for a `ListenerReport.missed`): the journal keeps only its newest
  /// `journalLimit` entries, so those between `id` and the oldest kept were dropped; or `id` is
  /// of a journal a reset replaced, whose events after it went with it — whether there were any
  /// is not known. Never for `DeviceEventID.everything`, an older copy of this journal put back,
  /// or a watch without an epoch (whose bare numbers cannot tell a reset).
  public func resume(after id: DeviceEventID) -> (heard: Int, missedBefore: DeviceEventID?) {
    let parts = id.rawValue.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    let epoch = parts.count == 2 ? String(parts[0]) : nil
    let number = parts.last.flatMap { Int($0) }
    let oldest = journal.first?.sequence ?? nextSequence
    if epoch == journalEpoch, let number, (0...lastSequence).contains(number) {
      return (number, oldest > number + 1 ? eventID(oldest) : nil)
    }
    guard journalEpoch != nil, id != .everything, epoch != journalEpoch else { return (0, nil) }
    return (0, eventID(oldest))
  }

  /// The watch's contents as the `Device` interface reads them.
  public var deviceState: DeviceState {
    DeviceState(reminders: reminders, contacts: contacts, emergency: emergency)
  }

  /// Highest `nextSequence` a state file may hold: far more changes than a watch ever sees, and
  /// far from `Int.max`, so counting on never overflows.
  public static let maxSequence = 1_000_000_000_000

  /// What is wrong with the journal numbers, or `nil` when they are sound: `nextSequence` must
  /// be 1…`maxSequence` and greater than every entry's `sequence`, each of which must be ≥ 1.
  /// Checked when a state file is read (a bad file is 4003, never a crash).
  public var journalProblem: String? {
    if let journalEpoch, !(1...16).contains(journalEpoch.utf8.count) || !journalEpoch.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) {
      return "journalEpoch: expected 1 to 16 lowercase hexadecimal digits, found \"\(journalEpoch.prefix(40))\""
    }
    guard (1...Self.maxSequence).contains(nextSequence) else {
      return "nextSequence: expected a whole number from 1 to \(Self.maxSequence), found \(nextSequence)"
    }
    for (index, event) in journal.enumerated() where event.sequence < 1 || event.sequence >= nextSequence {
      return "journal[\(index)].sequence: expected a whole number from 1 to nextSequence − 1 (\(nextSequence - 1)), found \(event.sequence)"
    }
    return nil
  }

  /// The sequence number of the newest journal entry, 0 when none was ever written.
  public var lastSequence: Int { nextSequence - 1 }

  /// Appends `event`, made on the watch at `time`, with the next sequence number and returns it.
  @discardableResult
  mutating func record(_ kind: WatchEvent.Kind, contacts: [Contact]? = nil, reminderId: String? = nil,
                       isEnabled: Bool? = nil, at time: Date = Date()) -> WatchEvent {
    let event = WatchEvent(sequence: nextSequence, kind: kind, contacts: contacts, reminderId: reminderId, isEnabled: isEnabled,
                           time: InternetTime.text(time))
    nextSequence += 1
    journal.append(event)
    if journal.count > Self.journalLimit { journal.removeFirst(journal.count - Self.journalLimit) }
    return event
  }
}

/// A change made on the watch itself, as recorded in the journal.
public struct WatchEvent: Codable, Hashable, Sendable {
  /// What changed.
  public enum Kind: String, Codable, Hashable, Sendable {
    /// Regular contacts changed; `contacts` holds the new list.
    case contactsChanged
    /// Emergency contacts changed; `contacts` holds the new list.
    case emergencyContactsChanged
    /// The wearer pressed SOS.
    case sosRequested
    /// A reminder was switched on or off; `reminderId` and `isEnabled` say which and how.
    case reminderToggled
  }

  /// Position in the journal, 1 and up, never reused.
  public var sequence: Int
  /// What changed.
  public var kind: Kind
  /// The new list, for contact and emergency-contact changes.
  public var contacts: [Contact]?
  /// The reminder switched, for `reminderToggled`.
  public var reminderId: String?
  /// Its new state, for `reminderToggled`.
  public var isEnabled: Bool?
  /// When it was made on the watch, ISO 8601 UTC with milliseconds (`InternetTime`); `nil` in
  /// entries written before watches recorded it (then unknown).
  public var time: String?

  /// When it was made on the watch; `nil` when unknown (no `time`, or one that is no time).
  public var date: Date? { time.flatMap(InternetTime.date) }
}

/// Reading the state file without `JSONDecoder` when it is in the form tsapply writes
/// (`JSONReader`; anything else falls back to `JSONDecoder`, which has the last word).
extension SimulatedWatch: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var format: String?, version: Int?, profile: String?, reminders: [Reminder]?, contacts: [Contact]?
    var emergency: EmergencyContacts?, journal: [WatchEvent]?, nextSequence: Int?, journalEpoch: String??
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "format": try reader.field(&format)
      case "version": try reader.field(&version)
      case "profile": try reader.field(&profile)
      case "reminders": try reader.field(&reminders)
      case "contacts": try reader.field(&contacts)
      case "emergency": try reader.field(&emergency)
      case "journal": try reader.field(&journal)
      case "nextSequence": try reader.field(&nextSequence)
      case "journalEpoch": try reader.optionalField(&journalEpoch)
      default: throw JSONReader.Miss()
      }
    }
    guard let format, let version, let profile, let reminders, let contacts, let emergency, let journal,
          let nextSequence else { throw JSONReader.Miss() }
    self.format = format
    self.version = version
    self.profile = profile
    self.reminders = reminders
    self.contacts = contacts
    self.emergency = emergency
    self.journal = journal
    self.nextSequence = nextSequence
    self.journalEpoch = journalEpoch ?? nil
  }
}

extension WatchEvent.Kind: FastJSONDecodable {
  /// A name that is no case is a `Miss` (`JSONDecoder` refuses it).
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    guard let kind = Self(rawValue: try reader.string()) else { throw JSONReader.Miss() }
    self = kind
  }
}

extension WatchEvent: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var sequence: Int?, kind: Kind?, contacts: [Contact]??, reminderId: String??, isEnabled: Bool??, time: String??
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "sequence": try reader.field(&sequence)
      case "kind": try reader.field(&kind)
      case "contacts": try reader.optionalField(&contacts)
      case "reminderId": try reader.optionalField(&reminderId)
      case "isEnabled": try reader.optionalField(&isEnabled)
      case "time": try reader.optionalField(&time)
      default: throw JSONReader.Miss()
      }
    }
    guard let sequence, let kind else { throw JSONReader.Miss() }
    self.sequence = sequence
    self.kind = kind
    self.contacts = contacts ?? nil
    self.reminderId = reminderId ?? nil
    self.isEnabled = isEnabled ?? nil
    self.time = time ?? nil
  }
}
