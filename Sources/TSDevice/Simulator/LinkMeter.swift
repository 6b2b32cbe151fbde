import TSModel

/// Estimates what one device call moves over the Bluetooth link (documented in docs/device.md).
///
/// Messages are sized as the Npk protobuf messages of docs/platforms.md "The link (Npk)" (`TSMetaRemindList`,
/// `TSMetaContactList`, `TSMetaContactEmergencyList`), proto3 rules: fields with default values
/// are omitted, every tag here is one byte, lengths and integers are varints, negative int32s
/// take 10 bytes. Each message travels in a frame with a `frameHeaderBytes` header (command,
/// key, length, sequence, checksum) cut into packets of `packetBytes` (the default 20-byte
/// packet, docs/platforms.md "The link (Npk)"). Fit and Fw protocols are closed; the same estimate is used for them.
public struct LinkMeter: Hashable, Sendable {
  /// Bytes of framing around each message (an estimate; the real Npk header is not documented).
  public static let frameHeaderBytes = 6
  /// Payload bytes per BLE packet (docs/platforms.md "The link (Npk)": default packet size 20).
  public static let packetBytes = 20
  /// Body of a set acknowledgement: one varint result field.
  static let acknowledgementBody = 2

  /// Bytes sent to the watch (frames: header + message).
  public private(set) var bytesSent = 0
  /// Bytes received from the watch.
  public private(set) var bytesReceived = 0
  /// Packets sent, ⌈frame / 20⌉ per frame.
  public private(set) var packetsSent = 0
  /// Packets received.
  public private(set) var packetsReceived = 0

  /// A meter with nothing counted.
  public init() {}

  /// Packets moved in either direction.
  public var packets: Int { packetsSent + packetsReceived }

  mutating func send(body: Int) {
    let frame = body + Self.frameHeaderBytes
    bytesSent += frame
    packetsSent += Self.packets(frame)
  }

  mutating func receive(body: Int) {
    let frame = body + Self.frameHeaderBytes
    bytesReceived += frame
    packetsReceived += Self.packets(frame)
  }

  static func packets(_ frame: Int) -> Int { max(1, (frame + packetBytes - 1) / packetBytes) }

  // MARK: Exchanges

  /// A get request (empty body) answered with a message of `body` bytes.
  mutating func get(answer body: Int) {
    send(body: 0)
    receive(body: body)
  }

  /// A set request of `body` bytes answered with an acknowledgement.
  mutating func set(body: Int) {
    send(body: body)
    receive(body: Self.acknowledgementBody)
  }

  mutating func fetchReminders(_ reminders: [Reminder]) { get(answer: WireSize.reminderList(reminders)) }
  mutating func sendReminders(_ reminders: [Reminder]) { set(body: WireSize.reminderList(reminders)) }
}

/// Protobuf sizes of the Npk messages (docs/platforms.md "The link (Npk)"), proto3 encoding.
enum WireSize {
  static func varint(_ value: Int) -> Int {
    if value < 0 { return 10 }
    var size = 1
    var rest = value >> 7
    while rest > 0 {
      size += 1
      rest >>= 7
    }
    return size
  }

  /// An int32/bool field: omitted when 0.
  static func integer(_ value: Int) -> Int { value == 0 ? 0 : 1 + varint(value) }
  /// A string field: omitted when empty.
  static func string(_ text: String) -> Int { text.isEmpty ? 0 : embedded(text.utf8.count) }
  /// A length-delimited field holding `length` bytes.
  static func embedded(_ length: Int) -> Int { 1 + varint(length) + length }

  /// `TSMetaRemindItem`.
  static func reminder(_ r: Reminder) -> Int {
    let dnd = integer(r.isLunchBreakDNDEnabled ? 1 : 0) + integer(r.lunchBreakDNDStartTime) + integer(r.lunchBreakDNDEndTime)
    var size = integer(WireSize.numericID(r.reminderId)) + integer(r.isEnabled ? 1 : 0)
    size += string(r.reminderName) + string(r.notes) + (dnd == 0 ? 0 : embedded(dnd))
    if r.timeType == .point {
      let packed = r.timePoints.map(varint).reduce(0, +)
      size += packed == 0 ? 0 : embedded(packed)
    } else {
      size += integer(1) + integer(r.startTime) + integer(r.endTime) + integer(r.interval)
    }
    return size + integer(r.repeatDays.rawValue)
  }

  /// `TSMetaRemindList`.
  static func reminderList(_ reminders: [Reminder]) -> Int {
    reminders.map { embedded(reminder($0)) }.reduce(0, +)
  }

  /// `TSMetaContactItem`.
  static func contact(_ c: Contact) -> Int { string(c.name) + string(c.phoneNum) + string(c.shortName ?? "") }

  /// `TSMetaContactList`.
  static func contactList(_ contacts: [Contact]) -> Int {
    contacts.map { embedded(contact($0)) }.reduce(0, +)
  }

  /// `TSMetaContactEmergencyList`.
  static func emergency(_ contacts: [Contact], sosOn: Bool) -> Int {
    integer(sosOn ? 1 : 0) + contactList(contacts)
  }

  static func numericID(_ id: String) -> Int { ReminderValidator.integerValue(id) }
}
