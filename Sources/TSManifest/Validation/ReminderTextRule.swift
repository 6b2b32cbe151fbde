import TSModel

/// A reminder's name is non-empty and at most 32 bytes of UTF-8; its notes at most 64 bytes.
///
/// Sources: docs/platforms.md "Capacity" (the Npk protocol: name at most 32, note at most 64,
/// `kRemindNameLength 32`, `kRemindNoteLength 64`; the SDK does not check them and the device
/// may refuse) and docs/platforms.md "The example app's editor" (the Example app requires a non-empty name). Longer text is an error,
/// never silently cut; devices with smaller limits (Fit: 30 and 60 bytes) are checked at plan time.
enum ReminderTextRule {
  /// Most bytes of UTF-8 in a reminder name.
  static let maxNameBytes = 32
  /// Most bytes of UTF-8 in a reminder's notes.
  static let maxNotesBytes = 64

  /// The name, or an error when it is empty, blank, holds a control character or is too long.
  static func checkName(_ name: Located<String>, field: String, into diagnostics: inout [Diagnostic]) -> Located<String>? {
    guard !name.value.isEmpty else {
      diagnostics.append(.error(at: name.position, field: field, "must not be empty"))
      return nil
    }
    guard let name = DisplayTextRule.check(name, field: field, isName: true, into: &diagnostics) else { return nil }
    return checkLength(name, max: maxNameBytes, what: "a reminder name", field: field, into: &diagnostics)
  }

  /// The notes, or an error when they are too long or hold a control character (empty notes
  /// are allowed).
  static func checkNotes(_ notes: Located<String>, field: String, into diagnostics: inout [Diagnostic]) -> Located<String>? {
    guard let notes = DisplayTextRule.check(notes, field: field, isName: false, into: &diagnostics) else { return nil }
    return checkLength(notes, max: maxNotesBytes, what: "notes", field: field, into: &diagnostics)
  }

  private static func checkLength(_ text: Located<String>, max: Int, what: String, field: String,
                                  into diagnostics: inout [Diagnostic]) -> Located<String>? {
    let bytes = text.value.utf8.count
    guard bytes <= max else {
      diagnostics.append(.error(at: text.position, field: field, tooLong(text.value, max: max, what: what)))
      return nil
    }
    return text
  }

  /// `is 35 bytes (31 characters: characters outside A–Z, such as ä, ß or an emoji, take 2 to 4 bytes
  /// each); a reminder name may be at most 32 bytes of UTF-8: shorten it, e.g. to "Größere Pause
  /// machen, Füße h"` — bytes are what the watch counts, characters what a person sees, so both
  /// are said when they differ, with the longest start of the text that fits (whole characters).
  static func tooLong(_ text: String, max: Int, what: String) -> String {
    let bytes = text.utf8.count, characters = text.count
    let counts = characters == bytes ? "" : " (\(characters) characters: characters outside A–Z, such as ä, ß or an emoji, take 2 to 4 bytes each)"
    let fits = TextTruncation.cutName(text, maxBytes: max)
    return "is \(bytes) bytes\(counts); \(what) may be at most \(max) bytes of UTF-8" + (fits.isEmpty ? "" : ": shorten it, e.g. to \"\(fits)\"")
  }
}
