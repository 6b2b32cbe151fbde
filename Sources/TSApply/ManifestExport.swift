import Foundation
import TSManifest
import TSModel
import TSPlan

/// `tsapply export`: a watch's state as a complete manifest in canonical form.
///
/// The state becomes a `Manifest` through `StateManifest` (every section the platform has,
/// every field it stores; custom reminders sharing a name get distinct names with a warning),
/// which `ManifestEncoder` writes through libyaml's emitter. Applying the text back to the same
/// watch gives an empty plan.
public enum ManifestExport {
  /// The exported manifest text and the warnings (renamed duplicates) or errors (values the
  /// watch holds that a manifest cannot state, left out) found on the way.
  public struct Output: Sendable {
    /// The YAML text, header comment first.
    public var text: String
    /// Warnings for renamed duplicate custom reminders and errors for watch values left out.
    public var diagnostics: [Diagnostic]
  }

  /// Exports `state`, read from a watch with `capabilities`, as of `date` (shown in the header,
  /// as a UTC calendar date).
  /// - Throws: `YAMLWriteError` when libyaml's emitter fails.
  public static func export(_ state: DeviceState, capabilities: DeviceCapabilities, date: Date) throws(YAMLWriteError) -> Output {
    let (manifest, diagnostics) = StateManifest.manifest(for: state, capabilities: capabilities, file: "export",
                                                         renamingDuplicates: true)
    let body = try ManifestEncoder.encode(manifest)
    // The text is read back with every rule of a manifest: what the watch holds that no
    // manifest may state, and that `StateManifest` lets through (a period interval of 0 or
    // longer than the period, a phone number the phone rules refuse), is an error here rather
    // than in the first `plan` of the file.
    // The rules quote the value; the watch's phone numbers in it are masked, as the export's
    // other messages name a contact and never its number. Other digits stay: a name's or a
    // note's shortening to paste must read as the watch holds it (fresh-eyes fe99 #4:
    // "Room *****67 pills").
    var checked = diagnostics
    let phones = Set((state.contacts + (state.emergency?.contacts ?? [])).map(\.phoneNum))
    for problem in ManifestLoader.load(bytes: Array(body.utf8), file: "export").diagnostics where problem.severity == .error {
      checked.append(.error(at: nil, field: problem.field,
        "the watch holds a value a manifest cannot state; it is written as the watch holds it, so the file does not load until it is changed: \(PhoneRedaction.redactDigits(of: phones, in: PhoneRedaction.redact(problem.message, phones: phones)))"))
    }
    // libyaml's emitter has no comment events, so the header comment is prepended to its text.
    return Output(text: header(profile: capabilities.profile, date: date) + body, diagnostics: checked)
  }

  /// The comment lines at the top of an export: the platform profile and the date.
  public static func header(profile: String, date: Date) -> String {
    """
    # Exported by tsapply from a watch with the '\(profile)' platform profile on \(day(date)) (UTC).
    # It states everything the watch holds: 'tsapply plan' against that watch shows no changes.

    """
  }

  /// `YYYY-MM-DD` in UTC.
  static func day(_ date: Date) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
    let parts = calendar.dateComponents([.year, .month, .day], from: date)
    let pad = { (value: Int?) in value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
    return "\(parts.year ?? 0)-\(pad(parts.month))-\(pad(parts.day))"
  }
}
