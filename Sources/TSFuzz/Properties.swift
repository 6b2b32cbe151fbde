import Foundation
import TSManifest
import TSModel

/// Checks shared by the targets: meaning without positions, phone numbers in output, control
/// characters in human output, JSON output, and the wording of refusals.
enum Properties {
  // MARK: Meaning

  /// `manifest` with every position and the file name cleared, so two manifests read from
  /// different text compare by meaning. With `ignoringShortNameSpelling`, whether a short name
  /// was written is dropped too (the encoder leaves out a short name equal to the derived one;
  /// the value is still compared).
  static func meaning(_ manifest: Manifest, ignoringShortNameSpelling: Bool = false) -> Manifest {
    let origin = SourcePosition(file: "", line: 0, column: 0)
    func erase<Value>(_ located: Located<Value>?) -> Located<Value>? { located.map { Located($0.value, at: origin) } }
    func erase(_ reminder: ManifestReminder) -> ManifestReminder {
      var reminder = reminder
      reminder.position = origin
      reminder.keyPosition = origin
      reminder.keyPositions = [:]
      reminder.name = erase(reminder.name)
      reminder.isEnabled = erase(reminder.isEnabled)
      reminder.repeatDays = erase(reminder.repeatDays)
      reminder.schedule = erase(reminder.schedule)
      reminder.lunchBreak = erase(reminder.lunchBreak)
      reminder.notes = erase(reminder.notes)
      return reminder
    }
    func erase(_ contacts: Located<[ManifestContact]>?) -> Located<[ManifestContact]>? {
      contacts.map { list in
        Located(list.value.map { contact in
          var contact = contact
          contact.position = origin
          contact.name = Located(contact.name.value, at: origin)
          contact.phone = Located(contact.phone.value, at: origin)
          contact.shortNamePosition = nil  // whether it was written is `shortNameIsExplicit`
          if ignoringShortNameSpelling { contact.shortNameIsExplicit = false }
          return contact
        }, at: origin)
      }
    }
    var result = manifest
    result.file = ""
    if var reminders = result.reminders {
      reminders.position = origin
      reminders.lunchBreak = erase(reminders.lunchBreak)
      reminders.lunchBreakKeys = [:]
      reminders.sedentary = reminders.sedentary.map(erase)
      reminders.drinking = reminders.drinking.map(erase)
      reminders.medicine = reminders.medicine.map(erase)
      reminders.custom = reminders.custom.map { Located($0.value.map(erase), at: origin) }
      result.reminders = reminders
    }
    result.contacts = erase(result.contacts)
    if var emergency = result.emergency {
      emergency.position = origin
      emergency.isSosOn = erase(emergency.isSosOn)
      emergency.contacts = erase(emergency.contacts)
      result.emergency = emergency
    }
    return result
  }

  // MARK: Phone numbers

  /// Fewest digits a phone number needs for the redaction check. Shorter numbers cannot be told
  /// from times (`1080` minutes), lines and columns, which output shows; `--redact` masks every
  /// run of five or more digits in free text (docs/plan.md, "Redaction").
  static let phoneDigits = 5

  /// The digits of every phone-like run in `text` with at least `phoneDigits` digits: digits
  /// (of any script, as their ASCII values) joined across the formatting that
  /// `PhoneRedaction.redactPhoneLike` treats as part of a number (`+`, space, `-`, `.`, `(`, `)`).
  static func phoneRuns(in text: String) -> Set<String> {
    var runs = Set<String>()
    var digits: [UInt8] = []
    func finish() {
      if digits.count >= phoneDigits { runs.insert(String(decoding: digits, as: UTF8.self)) }
      digits.removeAll(keepingCapacity: true)
    }
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x30...0x39: digits.append(UInt8(scalar.value))
      case 0x2B, 0x20, 0x2D, 0x2E, 0x28, 0x29: continue  // + space - . ( ): phone formatting
      case 0..<0x80: finish()
      default:
        if scalar.properties.numericType == .decimal, let value = scalar.properties.numericValue {
          digits.append(UInt8(ascii: "0") + UInt8(value))
        } else {
          finish()
        }
      }
    }
    finish()
    return runs
  }

  /// The phone numbers of `manifest` (contacts and emergency contacts), as digit runs
  /// (`phoneRuns`).
  static func phones(of manifest: Manifest) -> Set<String> {
    let contacts = (manifest.contacts?.value ?? []) + (manifest.emergency?.contacts?.value ?? [])
    return contacts.reduce(into: Set()) { $0.formUnion(phoneRuns(in: $1.phone.value)) }
  }

  /// Throws when redacted `output` holds a phone-like run of `phoneDigits` or more digits.
  static func requireFullyMasked(_ output: String, _ what: String) throws(PropertyFailure) {
    let shown = phoneRuns(in: output)
    try require(shown.isEmpty, "no phone number from the input appears in redacted output",
                "\(what) shows \(shown.sorted()):\n\(output)")
  }

  /// Throws when `output` (redacted output of `what`) shows one of `phones` (digit runs) whole.
  static func requireRedacted(_ output: String, phones: Set<String>, _ what: String) throws(PropertyFailure) {
    guard !phones.isEmpty else { return }
    let shown = phoneRuns(in: output).intersection(phones)
    try require(shown.isEmpty, "no phone number from the input appears in redacted output",
                "\(what) shows \(shown.sorted()):\n\(output)")
  }

  // MARK: Output

  /// Throws when human output holds a control character other than a line feed (text from a
  /// manifest or a watch must be escaped, so it cannot drive a terminal).
  static func requireNoControlCharacters(_ output: String, _ what: String) throws(PropertyFailure) {
    let control = output.unicodeScalars.first { $0 != "\n" && ControlCharacters.isControl($0) }
    try require(control == nil, "human output escapes control characters",
                "\(what) holds \(control.map(ControlCharacters.codePoint) ?? ""):\n\(output.debugDescription)")
  }

  /// Every string in `json` (a value from `requireJSON`), one a line: what JSON output says, with
  /// its escapes resolved (`\u0000` followed by `00` is not six digits).
  static func strings(inJSON json: Any) -> String {
    switch json {
    case let text as String: text
    case let list as [Any]: list.map(strings(inJSON:)).joined(separator: "\n")
    case let object as [String: Any]: object.values.map(strings(inJSON:)).joined(separator: "\n")
    default: ""
    }
  }

  /// The JSON value of `output` (`JSONSerialization`'s objects), or a failure naming `what`.
  @discardableResult
  static func requireJSON(_ output: String, _ what: String) throws(PropertyFailure) -> Any {
    do {
      return try JSONSerialization.jsonObject(with: Data(output.utf8))
    } catch {
      throw PropertyFailure("JSON output is valid JSON", "\(what) is not JSON (\(error)):\n\(output)")
    }
  }

  // MARK: Refusals

  /// Words that show a refusal repeats a Swift `DecodingError` or Foundation error instead of
  /// saying what is wrong in plain words.
  static let rawErrorWords = ["DecodingError", "CodingKeys", "codingPath", "debugDescription", "underlyingError",
                              "Swift.", "NSCocoaErrorDomain", "Error Domain=", "dataCorrupted", "keyNotFound",
                              "typeMismatch", "valueNotFound", "NSDebugDescription"]

  /// Throws unless `message` (why `file` was refused) names the file and uses plain words.
  static func requireClearRefusal(_ message: String, naming file: String, _ what: String) throws(PropertyFailure) {
    try require(message.contains(file), "every refusal names the file", "\(what): \(message)")
    let raw = rawErrorWords.filter { message.contains($0) }
    try require(raw.isEmpty, "every refusal is in plain words (no raw DecodingError)", "\(what) says \(raw): \(message)")
  }
}
