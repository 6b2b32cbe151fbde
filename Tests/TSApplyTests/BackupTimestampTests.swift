import Foundation
import Testing
@testable import TSApply

/// Backup timestamps are formatted without ICU and read as `DateFormatter` (en_US_POSIX, UTC)
/// writes them, for both styles.
@Suite struct BackupTimestampTests {
  static let dates: [Double] = [0, 0.999, 59.5, 951_782_400.001, 1_700_000_000.123, 1_798_761_599.9994, 4_102_444_800.5, -0.5]

  @Test(arguments: dates)
  func timestampsReadAsADateFormatterWritesThem(_ seconds: Double) {
    let date = Date(timeIntervalSince1970: seconds)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
    #expect(Backup.timestamp(date, style: .iso) == formatter.string(from: date))
    formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
    #expect(Backup.timestamp(date, style: .fileName) == formatter.string(from: date))
  }

  @Test(arguments: [1_764_458_321.0, 0.0, 2_000_000_000.25])
  func everyMillisecondOfASecondReadsAsADateFormatterWritesIt(_ base: Double) {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
    let disagreeing = (0..<1000).map { Date(timeIntervalSince1970: base + Double($0) / 1000) }
      .filter { Backup.timestamp($0, style: .fileName) != formatter.string(from: $0) }
    #expect(disagreeing.isEmpty)
  }

  @Test func fileNameTimestampsCarryMilliseconds() {
    #expect(Backup.timestamp(Date(timeIntervalSince1970: 1_764_458_321.123), style: .fileName) == "20251129T231841.123Z")
    #expect(Backup.timestamp(Date(timeIntervalSince1970: 1_764_458_321.123), style: .iso) == "2025-11-29T23:18:41Z")
  }
}
