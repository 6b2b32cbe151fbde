/// `FastJSONDecodable` for the model types that state files and records hold. Each reads the
/// keys its synthesized `Decodable` conformance reads, under the same names; a key it does not
/// know, a missing required key or a value of another type is a `Miss`, so `JSONDecoder`
/// decides (and words the error). `FastJSONTests` checks each against `JSONDecoder`.

extension Contact: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var name: String?, phoneNum: String?, shortName: String??
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "name": try reader.field(&name)
      case "phoneNum": try reader.field(&phoneNum)
      case "shortName": try reader.optionalField(&shortName)
      default: throw JSONReader.Miss()
      }
    }
    guard let name, let phoneNum else { throw JSONReader.Miss() }
    self.init(name: name, phoneNum: phoneNum, shortName: shortName ?? nil)
  }
}

extension EmergencyContacts: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var contacts: [Contact]?, isSosOn: Bool?
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "contacts": try reader.field(&contacts)
      case "isSosOn": try reader.field(&isSosOn)
      default: throw JSONReader.Miss()
      }
    }
    guard let contacts, let isSosOn else { throw JSONReader.Miss() }
    self.init(contacts: contacts, isSosOn: isSosOn)
  }
}

extension ReminderType: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self = try Self.read(rawValue: &reader) }
}

extension ReminderTimeType: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self = try Self.read(rawValue: &reader) }
}

extension RepeatDays: FastJSONDecodable {
  /// Any integer, as `Decodable` reads an `OptionSet` (its raw value, unchecked).
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self.init(rawValue: try reader.int()) }
}

extension Reminder: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var reminderId: String?, reminderName: String?, isEnabled: Bool?, reminderType: ReminderType?
    var repeatDays: RepeatDays?, timeType: ReminderTimeType?, startTime: Int?, endTime: Int?, interval: Int?
    var timePoints: [Int]?, notes: String?, isLunchBreakDNDEnabled: Bool?
    var lunchBreakDNDStartTime: Int?, lunchBreakDNDEndTime: Int?
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "reminderId": try reader.field(&reminderId)
      case "reminderName": try reader.field(&reminderName)
      case "isEnabled": try reader.field(&isEnabled)
      case "reminderType": try reader.field(&reminderType)
      case "repeatDays": try reader.field(&repeatDays)
      case "timeType": try reader.field(&timeType)
      case "startTime": try reader.field(&startTime)
      case "endTime": try reader.field(&endTime)
      case "interval": try reader.field(&interval)
      case "timePoints": try reader.field(&timePoints)
      case "notes": try reader.field(&notes)
      case "isLunchBreakDNDEnabled": try reader.field(&isLunchBreakDNDEnabled)
      case "lunchBreakDNDStartTime": try reader.field(&lunchBreakDNDStartTime)
      case "lunchBreakDNDEndTime": try reader.field(&lunchBreakDNDEndTime)
      default: throw JSONReader.Miss()
      }
    }
    guard let reminderId, let reminderName, let isEnabled, let reminderType, let repeatDays, let timeType,
          let startTime, let endTime, let interval, let timePoints, let notes, let isLunchBreakDNDEnabled,
          let lunchBreakDNDStartTime, let lunchBreakDNDEndTime else { throw JSONReader.Miss() }
    self.init(reminderId: reminderId, reminderName: reminderName, isEnabled: isEnabled, reminderType: reminderType,
              repeatDays: repeatDays, timeType: timeType, startTime: startTime, endTime: endTime, interval: interval,
              timePoints: timePoints, notes: notes, isLunchBreakDNDEnabled: isLunchBreakDNDEnabled,
              lunchBreakDNDStartTime: lunchBreakDNDStartTime, lunchBreakDNDEndTime: lunchBreakDNDEndTime)
  }
}

extension DeviceState: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var reminders: [Reminder]?, contacts: [Contact]?, emergency: EmergencyContacts??
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "reminders": try reader.field(&reminders)
      case "contacts": try reader.field(&contacts)
      case "emergency": try reader.optionalField(&emergency)
      default: throw JSONReader.Miss()
      }
    }
    guard let reminders, let contacts else { throw JSONReader.Miss() }
    self.init(reminders: reminders, contacts: contacts, emergency: emergency ?? nil)
  }
}
