import Foundation
import Testing
import TSModel

/// `InternetTime`: what it writes reads back to the millisecond, its own form is read without a
/// formatter and agrees with `ISO8601DateFormatter`, other ISO 8601 forms still read, and text
/// that is no time (or an impossible date) is `nil`.
@Suite struct InternetTimeTests {
  static func formatter() -> ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }

  static let texts: [(String, Double?)] = [
    ("2026-12-04T22:50:10.250Z", 1_796_424_610.25),
    ("1970-01-01T00:00:00.000Z", 0),
    ("2000-02-29T23:59:59.999Z", 951_868_799.999),
    ("2026-12-04T22:50:10Z", 1_796_424_610),
    ("2026-12-04T23:50:10.250+01:00", 1_796_424_610.25),
    ("2026-02-29T00:00:00.000Z", nil),
    ("2026-13-01T00:00:00.000Z", nil),
    ("2026-12-04T24:00:00.000Z", nil),
    ("2026-12-04 22:50:10.250Z", nil),
    ("2026-12-04T22:50:1x.250Z", nil),
    ("yesterday", nil),
    ("", nil),
  ]

  @Test(arguments: texts)
  func readsWhatIsATimeAndNothingElse(text: String, seconds: Double?) {
    let date = InternetTime.date(text)
    #expect(date.map { ($0.timeIntervalSince1970 * 1000).rounded() } == seconds.map { ($0 * 1000).rounded() }, "\(text)")
    if let seconds, text.hasSuffix("Z") {
      #expect(Self.formatter().date(from: text).map { ($0.timeIntervalSince1970 * 1000).rounded() } == (seconds * 1000).rounded()
              || !text.contains("."), "agrees with ISO8601DateFormatter")
    }
  }

  @Test(arguments: [0.0, 1_796_424_610.25, 951_868_799.999, 4_102_444_800.5, 86_399.001])
  func whatItWritesReadsBackToTheMillisecond(seconds: Double) throws {
    let text = InternetTime.text(Date(timeIntervalSince1970: seconds))
    #expect(text.utf8.count == 24 && text.hasSuffix("Z"))
    let read = try #require(InternetTime.date(text))
    #expect((read.timeIntervalSince1970 * 1000).rounded() == (seconds * 1000).rounded(), "\(text)")
    #expect(Self.formatter().string(from: read) == text, "the formatter writes the same text")
  }
}
