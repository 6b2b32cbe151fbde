import Foundation
import TSManifest

/// `tsapply-bench validate [--iterations N] [--only load|scan]`: validating a manifest with 200
/// contacts and 10 custom reminders (`ManifestLoader.load`) beside a plain libyaml event scan of
/// the same bytes (`YAMLReader.countEvents`). `--only` runs one side, so each side's peak memory
/// can be read from a separate process (`/usr/bin/time -v`).
enum ValidateBenchmark {
  static func run(_ arguments: [String]) -> Int32 {
    var iterations = 200
    var only: String?
    var index = 0
    while index < arguments.count {
      switch arguments[index] {
      case "--iterations" where index + 1 < arguments.count: iterations = Int(arguments[index + 1]) ?? iterations; index += 1
      case "--only" where index + 1 < arguments.count: only = arguments[index + 1]; index += 1
      default: print("unknown argument \(arguments[index])"); return 64
      }
      index += 1
    }
    let bytes = Array(manifest(contacts: 200, customReminders: 10).utf8)
    print("manifest: \(bytes.count) bytes, 200 contacts, 10 custom reminders; \(iterations) iterations")
    if only == nil || only == "scan" {
      var events = 0
      let times = BenchmarkClock.measure(iterations: iterations) { events = YAMLReader.countEvents(bytes: bytes) ?? -1 }
      print("libyaml event scan (\(events) events): \(BenchmarkClock.summary(times))")
    }
    if only == nil || only == "load" {
      var result: ManifestLoadResult?
      let times = BenchmarkClock.measure(iterations: iterations) { result = ManifestLoader.load(bytes: bytes, file: "bench.yaml") }
      let valid = result?.manifest != nil
      print("ManifestLoader.load (valid: \(valid), \(result?.diagnostics.count ?? 0) diagnostics): \(BenchmarkClock.summary(times))")
      if !valid { return 1 }
    }
    print("peak RSS: \(BenchmarkClock.peakResidentKiB()) KiB")
    return 0
  }

  /// A valid manifest: the three built-ins, `customReminders` custom reminders, `contacts`
  /// contacts with distinct names and phones, and one emergency contact.
  static func manifest(contacts: Int, customReminders: Int) -> String {
    var text = """
      version: 1
      reminders:
        sedentary: {enabled: true, repeat: workday, period: {start: "09:00", end: "18:00", every: 60m}, lunch_break: {start: "12:00", end: "13:30"}}
        drinking: {enabled: true, repeat: everyday, period: {start: "08:00", end: "22:00", every: 2h}}
        medicine: {enabled: true, repeat: [mon, wed, fri], at: ["08:00", "20:00"]}
        custom:

      """
    for index in 0..<customReminders {
      text += "    - {name: \"Reminder \(index)\", repeat: [mon, thu], at: [\"0\(index % 10):15\", \"2\(index % 4):45\"], notes: \"Note \(index)\"}\n"
    }
    text += "contacts:\n"
    for index in 0..<contacts {
      text += "  - {name: \"Contact number \(index) 李\", phone: \"+1 (555) \(String(format: "%03d", index / 10))-\(String(format: "%04d", index))\"}\n"
    }
    text += "emergency:\n  sos: true\n  contacts:\n    - {name: Sam Roe, phone: \"+15550101\"}\n"
    return text
  }
}
