import Foundation
import Testing
import TSManifest
import TSModel
import TSTestSupport

/// The forms a manifest file arrives in: BOM, CRLF, examples/, and the invalid fixtures.
@Suite struct SourceFormTests {
  static let examples = TSApplyBinary.packageRoot.appendingPathComponent("examples")
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

  static func bytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }

  @Test(arguments: ["watch.yaml", "minimal.yaml", "family.yaml"])
  func crlfAndBOMGiveTheSameManifestAsLF(_ name: String) throws {
    let lf = try Self.bytes(Self.examples.appendingPathComponent(name))
    let crlf = Array(String(decoding: lf, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
    let plain = ManifestLoader.load(bytes: lf, file: name)
    #expect(plain.diagnostics == [])
    let manifest = try #require(plain.manifest)
    #expect(ManifestLoader.load(bytes: crlf, file: name).manifest == manifest)
    #expect(ManifestLoader.load(bytes: [0xEF, 0xBB, 0xBF] + crlf, file: name).manifest == manifest)
    #expect(ManifestLoader.load(bytes: [0xEF, 0xBB, 0xBF] + lf, file: name).manifest == manifest)
  }

  @Test func completeExampleUsesEveryFeature() throws {
    let manifest = try #require(ManifestLoader.load(path: Self.examples.appendingPathComponent("watch.yaml").path,
                                                     displayName: "examples/watch.yaml").manifest)
    let reminders = try #require(manifest.reminders)
    #expect(reminders.sedentary?.lunchBreak?.value.window != nil)
    #expect(reminders.medicine?.schedule?.value.timeType == .point)
    let custom = try #require(reminders.custom?.value)
    #expect(custom.count == 3)
    // "Stretch break" merges the drinking reminder's settings and overrides its period.
    #expect(custom[1].repeatDays?.value == .everyday)
    #expect(custom[1].schedule?.value == .period(start: MinuteOfDay(rawValue: 600)!, end: MinuteOfDay(rawValue: 960)!, interval: 90))
    let contacts = try #require(manifest.contacts?.value)
    #expect(contacts.map(\.shortName) == ["A", "L", "E", "J"])
    #expect(manifest.emergency?.isSosOn?.value == true)
  }

  @Test(arguments: ["bad-reminders", "bad-contacts", "bad-structure"])
  func invalidFixtureDiagnostics(_ name: String) throws {
    let path = Self.fixtures.appendingPathComponent("\(name).yaml").path
    let result = ManifestLoader.load(path: path, displayName: "\(name).yaml")
    #expect(result.manifest == nil)
    expectGolden(result.diagnostics.map(\.description).joined(separator: "\n") + "\n", "\(name).txt")
  }

  @Test func unreadableFileIsAnErrorDiagnostic() {
    let result = ManifestLoader.load(path: "/nonexistent/watch.yaml", displayName: "watch.yaml")
    #expect(result.manifest == nil)
    #expect(result.diagnostics == [.error(at: nil, field: "", "cannot read watch.yaml: no such file or directory")])
  }
}
