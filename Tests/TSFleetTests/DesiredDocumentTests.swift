import Foundation
import Testing
import TSFleet
import TSManifest
import TSModel

/// Desired documents: the merged manifest as canonical JSON, read back with every manifest rule.
@Suite struct DesiredDocumentTests {
  static let yaml = """
    reminders:
      sedentary: {enabled: true, repeat: workday, period: {start: "09:00", end: "18:00", every: 90m}, lunch_break: {start: "12:00", end: "13:00"}}
      medicine: {enabled: false, repeat: [mon, fri], at: ["08:00", "20:00"], notes: "Take \\"two\\" \\\\ with water"}
      custom:
        - {name: "Visit: family", repeat: once, at: ["14:00"], lunch_break: false}
    contacts:
      - {name: 李明, phone: "+86 139 1234 5678"}
      - {name: "Zoë 👩‍👩‍👧", phone: "0123456", short_name: Z}
    emergency:
      sos: true
      contacts:
        - {name: Sam Roe, phone: "+15550101"}

    """

  @Test func aManifestRoundTripsThroughItsCanonicalJSON() throws {
    let original = try manifest(Self.yaml, file: "room.yaml")
    let document = DesiredDocument(manifest: original, allowDestroy: false, watch: "room-12")
    let decoded = try DesiredDocument.decode(document.encoded(), topic: "t").get()
    #expect(try ManifestEncoder.encode(decoded.manifest) == ManifestEncoder.encode(original))
    #expect(decoded.revision == document.revision)
    #expect(decoded.allowDestroy == false)
    #expect(decoded.watch == "room-12")
    #expect(decoded.watchID == nil)
    let addressed = DesiredDocument(manifest: original, allowDestroy: false, watch: "room-12", watchID: "AA:BB:CC:DD:EE:12")
    let read = try DesiredDocument.decode(addressed.encoded(), topic: "tsapply/v1/ward-a/AA:BB:CC:DD:EE:12/desired").get()
    #expect(read.watchID == "AA:BB:CC:DD:EE:12")
    #expect(read.revision == document.revision, "the watch ID is not part of the revision")
    #expect(read.publication == nil)
    #expect(!String(decoding: document.encoded(), as: UTF8.self).contains("publication"), "no key for an agent that does not read it")
  }

  /// The publication travels with the document and back, and is no part of the revision: the
  /// same manifests published by two runs are one revision in two publications.
  @Test func thePublicationRoundTripsAndIsNoPartOfTheRevision() throws {
    let original = try manifest(Self.yaml, file: "room.yaml")
    let first = DesiredDocument.newPublication(), second = DesiredDocument.newPublication()
    #expect(first.count == 16 && first.allSatisfy(\.isHexDigit))
    #expect(first != second)
    let plain = DesiredDocument(manifest: original, allowDestroy: false, watch: "room-12")
    let published = DesiredDocument(manifest: original, allowDestroy: false, watch: "room-12", publication: first)
    #expect(published.revision == plain.revision)
    let read = try DesiredDocument.decode(published.encoded(), topic: "t").get()
    #expect(read.publication == first)
    #expect(read.revision == plain.revision)
    #expect(read.contentRevision == plain.contentRevision)
  }

  @Test func theContentRevisionIsTheRevisionTheContentGivesWhateverThePublisherChose() throws {
    let payload = #"{"manifest":{"contacts":[{"name":"A","phone":"+15550100"}]},"revision":"release-7"}"#
    let decoded = try DesiredDocument.decode(Array(payload.utf8), topic: "t").get()
    #expect(decoded.revision == "release-7")
    #expect(decoded.contentRevision == DesiredDocument(manifest: decoded.manifest, allowDestroy: false, watch: nil).revision)
    let changed = try DesiredDocument.decode(Array(payload.replacingOccurrences(of: "\"A\"", with: "\"B\"").utf8), topic: "t").get()
    #expect(changed.revision == "release-7")
    #expect(changed.contentRevision != decoded.contentRevision)
  }

  @Test func theCanonicalTextIsWhatJSONEncoderWritesWithSortedKeys() throws {
    let value = ManifestJSON.value(try manifest(Self.yaml, file: "room.yaml"))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    #expect(ManifestJSON.encoded(value) == String(decoding: try encoder.encode(value), as: UTF8.self))
  }

  @Test func theRevisionFollowsTheContentAndTheSafetyGate() throws {
    let first = try manifest(Self.yaml, file: "a.yaml")
    let again = try manifest("# the same, elsewhere\n" + Self.yaml, file: "b.yaml")
    let other = try manifest(Self.yaml.replacingOccurrences(of: "Sam Roe", with: "Sam Rowe"), file: "a.yaml")
    let revision = DesiredDocument(manifest: first, allowDestroy: false, watch: nil).revision
    #expect(revision.count == 16)
    #expect(DesiredDocument(manifest: again, allowDestroy: false, watch: "x").revision == revision)
    #expect(DesiredDocument(manifest: first, allowDestroy: true, watch: nil).revision != revision)
    #expect(DesiredDocument(manifest: other, allowDestroy: false, watch: nil).revision != revision)
  }

  struct Bad: Sendable, CustomTestStringConvertible {
    var name: String
    var payload: String
    var errors: [String]
    var topic = "d"
    var testDescription: String { name }
  }

  static let bad: [Bad] = [
    Bad(name: "not JSON", payload: "revision: r1\nmanifest: {contacts: []}\n", errors: ["error: the desired document is not a JSON object"]),
    Bad(name: "no revision, no manifest", payload: #"{"format_version":"1"}"#,
        errors: ["d:1:1: error: manifest: the desired document has no manifest", "d:1:1: error: revision: the desired document has no revision"]),
    Bad(name: "allow_destroy as text", payload: #"{"allow_destroy":"yes","manifest":{"contacts":[]},"revision":"r"}"#,
        errors: ["d:1:18: error: allow_destroy: expected true or false"]),
    Bad(name: "an unknown key", payload: #"{"manifest":{"contacts":[]},"revison":"r","revision":"r"}"#,
        errors: ["d:1:29: error: revison: unknown key \"revison\"; did you mean \"revision\"?"]),
    Bad(name: "a manifest rule", payload: #"{"manifest":{"emergency":{"sos":true}},"revision":"r"}"#,
        errors: ["d:1:33: error: emergency.sos: is true but no emergency contacts are given; add at least one under emergency.contacts, or set sos: false"]),
    Bad(name: "a JSON syntax error", payload: #"{"manifest":{"contacts":[]]},"revision":"r"}"#,
        errors: ["d:1:27: error: invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at line 1, column 13)"]),
    Bad(name: "a document cut short", payload: #"{"manifest":{"contacts":[]},"revision":"r""#,
        errors: ["d:1:1: error: invalid YAML: this flow mapping is never closed: libyaml did not find expected ',' or '}' at line 2, column 1"]),
    Bad(name: "another watch's document", payload: #"{"manifest":{"contacts":[]},"revision":"r","watch":"room-14","watch_id":"room-14"}"#,
        errors: ["tsapply/v1/ward-a/room-16/desired:1:73: error: watch_id: this document is for the watch ID room-14, but it was published on the topic of room-16"],
        topic: "tsapply/v1/ward-a/room-16/desired"),
    Bad(name: "an empty publication", payload: #"{"manifest":{"contacts":[]},"publication":"","revision":"r"}"#,
        errors: ["d:1:43: error: publication: a publication is one line of 1 to 128 characters"]),
    Bad(name: "a publication of two lines", payload: #"{"manifest":{"contacts":[]},"publication":"p\nq","revision":"r"}"#,
        errors: ["d:1:43: error: publication: a publication is one line of 1 to 128 characters"]),
    Bad(name: "a quoted boolean", payload: #"{"manifest":{"reminders":{"drinking":{"enabled":"true"}}},"revision":"r"}"#,
        errors: ["d:1:49: error: reminders.drinking.enabled: \"true\" is quoted, so it is text; write true without quotes"]),
  ]

  @Test(arguments: bad)
  func aBadDocumentIsRefusedWithPositions(_ row: Bad) throws {
    guard case .failure(let problem) = DesiredDocument.decode(Array(row.payload.utf8), topic: row.topic) else {
      Issue.record("accepted")
      return
    }
    #expect(problem.diagnostics.filter { $0.severity == .error }.map(\.description) == row.errors)
  }
}
