import Foundation
import Testing
import TSManifest
import TSModel
import TSTestSupport

/// `tsapply fmt`'s formatter: canonical spellings and key order, comments and blank lines kept,
/// aliases never change meaning, idempotent, and the formatted manifest decodes the same.
@Suite struct FormatterTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var name: String
    var input: String
    var expected: String
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "times, phones, durations and repeat rules get their one spelling; a value whose warning asks what was meant (an integer time) stays as written; the built-in reminders keep the order they were written in", input: """
      reminders:
        sedentary:
          repeat: Workday
          period: {start: 9:00, end: '18:00', every: 60m}
          lunch_break: {start: 720, end: "14:00"}
        medicine:
          repeat: [Monday, wed, FRI]
          at: [8:00, 1200]
        drinking:
          repeat: [mon, tue, wed, thu, fri, sat, sun]
          period: {start: "08:00", end: "22:00", every: 90}
      contacts:
        - {name: Alex, phone: +15550100}
        - {name: Kim, phone: '0123456'}
      """, expected: """
      reminders:
        sedentary:
          repeat: workday
          period: {start: "09:00", end: "18:00", every: 1h}
          lunch_break: {start: 720, end: "14:00"}
        medicine:
          repeat: [mon, wed, fri]
          at: ["08:00", 1200]
        drinking:
          repeat: everyday
          period: {start: "08:00", end: "22:00", every: 1h30m}
      contacts:
        - {name: Alex, phone: "+15550100"}
        - {name: Kim, phone: "0123456"}
      """),
    Case(name: "comments above, beside and below keys and blank lines stay where they are", input: """
      # My watch
      version: 1

      reminders:
        # the sitting reminder
        sedentary:
          enabled: true   # on
          repeat: workday
          period: {start: 9:00, end: 18:00, every: 2h}  # office hours

          # below the period
      # trailing comment
      """, expected: """
      # My watch
      version: 1

      reminders:
        # the sitting reminder
        sedentary:
          enabled: true   # on
          repeat: workday
          period: {start: "09:00", end: "18:00", every: 2h} # office hours

          # below the period
      # trailing comment
      """),
    Case(name: "a warning the canonical spelling keeps (a phone used twice) does not stop its scalar being formatted", input: """
      contacts:
        - {name: Kim Li, phone: '112'}
        - {name: Lee, phone: 112}
      """, expected: """
      contacts:
        - {name: Kim Li, phone: "112"}
        - {name: Lee, phone: "112"}
      """),
    Case(name: "a beside comment keeps its column when the value grows (and keeps the keys' order)", input: """
      reminders:
        medicine:
          at: [9:00]           # nine o'clock
          repeat: everyday     # daily
      """, expected: """
      reminders:
        medicine:
          at: ["09:00"]        # nine o'clock
          repeat: everyday     # daily
      """),
    Case(name: "keys are reordered where no comment lies among them", input: """
      emergency:
        contacts:
          - {phone: "+15550101", name: Sam}
        sos: true
      contacts:
        - phone: "+15550100"
          name: Alex
      reminders:
        custom:
          - at: ["19:30"]
            notes: Take the dog
            name: Walk
      """, expected: """
      reminders:
        custom:
          - name: Walk
            at: ["19:30"]
            notes: Take the dog
      contacts:
        - name: Alex
          phone: "+15550100"
      emergency:
        sos: true
        contacts:
          - {name: Sam, phone: "+15550101"}
      """),
    Case(name: "a mapping with a comment or blank line among its keys keeps its order", input: """
      contacts:
        - phone: "+15550100"   # mobile
          name: Alex
        - phone: "+15550102"

          name: Kim
        - phone: "+15550103"
          # a friend
          name: Lee
      """, expected: """
      contacts:
        - phone: "+15550100"   # mobile
          name: Alex
        - phone: "+15550102"

          name: Kim
        - phone: "+15550103"
          # a friend
          name: Lee
      """),
    Case(name: "an anchored time used as a time twice is rewritten at the anchor", input: """
      reminders:
        sedentary:
          period: {start: &morning 9:00, end: "18:00", every: 1h}
        drinking:
          period: {start: *morning, end: "20:00", every: 1h}
      """, expected: """
      reminders:
        sedentary:
          period: {start: &morning "09:00", end: "18:00", every: 1h}
        drinking:
          period: {start: *morning, end: "20:00", every: 1h}
      """),
    Case(name: "an aliased scalar used as a time and as a name is left alone", input: """
      reminders:
        custom:
          - name: &t 9:00
            at: [*t]
      """, expected: """
      reminders:
        custom:
          - name: &t 9:00
            at: [*t]
      """),
    Case(name: "merge keys and aliases keep the mapping's order", input: """
      reminders:
        drinking: &day
          repeat: everyday
          enabled: true
        custom:
          - <<: *day
            name: Tea
      """, expected: """
      reminders:
        drinking: &day
          enabled: true
          repeat: everyday
        custom:
          - <<: *day
            name: Tea
      """),
    Case(name: "block lists keep their layout and get canonical items", input: """
      reminders:
        medicine:
          repeat:
            - Monday
            - thursday   # and Thursday
          at:
            - 8:00
            - "20:00"
      """, expected: """
      reminders:
        medicine:
          repeat:
            - mon
            - thu        # and Thursday
          at:
            - "08:00"
            - "20:00"
      """),
    Case(name: "block scalars are replaced without their trailing blank lines and comments", input: """
      contacts:
        - phone: >-
            +15550100
          name: Alex
        - name: Kim
          phone: |-
            0123456

          # after Kim
      reminders:
        medicine:
          at:
            - 8:00 # breakfast
            - !!str 9:00
          repeat: [
            mon,
            Tue ]
      """, expected: """
      contacts:
        - name: Alex
          phone: "+15550100"
        - name: Kim
          phone: "0123456"

          # after Kim
      reminders:
        medicine:
          at:
            - "08:00" # breakfast
            - !!str "09:00"
          repeat: [
            mon,
            tue ]
      """),
    Case(name: "comments between list items stay; a '#' inside a quoted value is no comment", input: """
      reminders:
        custom:
          # first
          - at: [7:30]
            name: "Walk #1"
          # second

          - at: ["19:30"]
            name: Walk 2
          # last
      """, expected: """
      reminders:
        custom:
          # first
          - name: "Walk #1"
            at: ["07:30"]
          # second

          - name: Walk 2
            at: ["19:30"]
          # last
      """),
    Case(name: "text, booleans and short names are written as the user wrote them", input: """
      reminders:
        custom:
          - {name: 'No', enabled: false, repeat: once, at: ["07:00"], notes: "say \\"hi\\""}
      contacts:
        - {name: 李明, phone: "+86 139 1234 5678", short_name: L}
      """, expected: """
      reminders:
        custom:
          - {name: 'No', enabled: false, repeat: once, at: ["07:00"], notes: "say \\"hi\\""}
      contacts:
        - {name: 李明, phone: "+86 139 1234 5678", short_name: L}
      """),
    Case(name: "a line break inside a quoted value does not stop a flow mapping's reorder; one between entries does", input: """
      contacts:
        - {short_name: K, phone: "+44\r 7700 900123", name: Kim}
        - {phone: "+15550100", name: "Anna
            Smith"}
        - {phone: "+15550101",
           name: Sam}
      """, expected: """
      contacts:
        - {name: Kim, phone: "+44 7700 900123", short_name: K}
        - {name: "Anna
            Smith", phone: "+15550100"}
        - {phone: "+15550101",
           name: Sam}
      """),
    Case(name: "YAML 1.2 booleans are written in lower case", input: """
      reminders:
        drinking: {enabled: True, lunch_break: FALSE}
      emergency:
        sos: TRUE
        contacts: [{name: Sam, phone: "+15550101"}]
      """, expected: """
      reminders:
        drinking: {enabled: true, lunch_break: false}
      emergency:
        sos: true
        contacts: [{name: Sam, phone: "+15550101"}]
      """),
  ]

  @Test(arguments: cases)
  func formats(_ test: Case) throws {
    let result = ManifestFormatter.format(bytes: Array(test.input.utf8), file: "watch.yaml")
    let formatted = try #require(result.formatted, "\(result.diagnostics)")
    #expect(String(decoding: formatted, as: UTF8.self) == test.expected)
    #expect(result.isChanged == (test.input != test.expected))
  }

  @Test(arguments: cases)
  func formattingTwiceChangesNothing(_ test: Case) throws {
    let once = try #require(ManifestFormatter.format(bytes: Array(test.input.utf8), file: "watch.yaml").formatted)
    let twice = ManifestFormatter.format(bytes: once, file: "watch.yaml")
    #expect(twice.formatted == once)
    #expect(!twice.isChanged)
  }

  @Test(arguments: cases)
  func formattedManifestDecodesTheSame(_ test: Case) throws {
    try expectSameManifest(Array(test.input.utf8))
  }

  @Test(arguments: ["watch.yaml", "minimal.yaml", "family.yaml"])
  func examples(_ name: String) throws {
    let bytes = Array(try Data(contentsOf: SourceFormTests.examples.appendingPathComponent(name)))
    let result = ManifestFormatter.format(bytes: bytes, file: name)
    let formatted = try #require(result.formatted)
    expectGolden(String(decoding: formatted, as: UTF8.self), "fmt-\(name)")
    // Users copy the examples under the pre-commit hook: they must pass `fmt --check`.
    #expect(result.isChanged == false, "examples/\(name) is not in canonical form")
    #expect(ManifestFormatter.format(bytes: formatted, file: name).isChanged == false)
    try expectSameManifest(bytes)
  }

  @Test(arguments: ["watch.yaml", "family.yaml"])
  func crlfAndBOMAreKept(_ name: String) throws {
    let lf = String(decoding: try Data(contentsOf: SourceFormTests.examples.appendingPathComponent(name)), as: UTF8.self)
    let expectedLF = try #require(ManifestFormatter.format(bytes: Array(lf.utf8), file: name).formatted)
    let crlf = [0xEF, 0xBB, 0xBF] + Array(lf.replacingOccurrences(of: "\n", with: "\r\n").utf8)
    let formatted = try #require(ManifestFormatter.format(bytes: crlf, file: name).formatted)
    let expected = [0xEF, 0xBB, 0xBF] + Array(String(decoding: expectedLF, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
    #expect(formatted == expected)
    try expectSameManifest(crlf)
  }

  @Test func keysAreReorderedInACRLFFile() throws {
    let input = "contacts:\r\n  - phone: +15550100\r\n    name: Alex\r\nversion: 1\r\n"
    let formatted = try #require(ManifestFormatter.format(bytes: Array(input.utf8), file: "watch.yaml").formatted)
    #expect(String(decoding: formatted, as: UTF8.self) == "version: 1\r\ncontacts:\r\n  - name: Alex\r\n    phone: \"+15550100\"\r\n")
  }

  @Test func manifestWithErrorsIsNotFormatted() {
    let result = ManifestFormatter.format(bytes: Array("reminders:\n  sedentary:\n    period: {start: 25:00, end: 9:00, every: 1h}\n".utf8),
                                          file: "watch.yaml")
    #expect(result.formatted == nil)
    #expect(result.diagnostics.contains { $0.severity == .error && $0.field == "reminders.sedentary.period.start" })
  }

  @Test func exportedManifestIsAlreadyFormatted() throws {
    let manifest = try #require(ManifestLoader.load(path: SourceFormTests.examples.appendingPathComponent("watch.yaml").path,
                                                     displayName: "watch.yaml").manifest)
    let text = try ManifestEncoder.encode(manifest)
    #expect(ManifestFormatter.format(bytes: Array(text.utf8), file: "watch.yaml").isChanged == false)
  }

  /// The original and formatted manifests decode to the same manifest apart from positions:
  /// compared through the canonical, position-free rendering of `ManifestEncoder`.
  private func expectSameManifest(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    let formatted = try #require(ManifestFormatter.format(bytes: bytes, file: "watch.yaml").formatted, sourceLocation: sourceLocation)
    let before = try #require(ManifestLoader.load(bytes: bytes, file: "watch.yaml").manifest, sourceLocation: sourceLocation)
    let after = try #require(ManifestLoader.load(bytes: formatted, file: "watch.yaml").manifest, sourceLocation: sourceLocation)
    #expect(try ManifestEncoder.encode(before) == ManifestEncoder.encode(after), sourceLocation: sourceLocation)
  }
}
