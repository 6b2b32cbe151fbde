import Foundation
import Testing
@testable import TSDevice
import TSEngine
import TSModel

/// `ApplyOptions.keepsDriftInRecord` (an agent's applies, docs/fleet.md "What an agent does"):
/// the last-applied record describes only what tsapply wrote and verified, so a change the
/// wearer made that the apply did not write over stays drift — after a refresh (nothing to
/// change) and after an apply that wrote something else. Without it (a person's apply, who saw
/// the drift in the plan) the apply starts from what the watch holds (docs/plan.md "Drift").
@Suite struct DriftKeptOutOfRecordTests {
  static let first = "reminders:\n  drinking: {enabled: false}\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n"

  /// (keeps drift out of the record, the second apply writes something, the drift expected after it)
  static let cases: [(Bool, Bool, [String])] = [
    (true, false, ["reminder.custom[\"Lunch\"]"]),
    (true, true, ["reminder.custom[\"Lunch\"]"]),
    (false, false, []),
    (false, true, []),
  ]

  /// The wearer switches Lunch off (the manifest gives its time, not whether it is on).
  @Test(arguments: cases)
  func aWearersChangeTheApplyDidNotWriteOverStaysDriftOnlyWhenAsked(keeps: Bool, writes: Bool, expected: [String]) async throws {
    let workspace = try Workspace()
    _ = try await workspace.open().apply(try workspace.document(Self.first), options: Workspace.automatic())
    let lunch = try #require(try await workspace.state().reminders.first { $0.reminderName == "Lunch" })
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    #expect(try device.simulateReminderToggle(id: lunch.reminderId) == false)
    let second = try workspace.document(writes ? Self.first.replacingOccurrences(of: "{enabled: false}", with: "{enabled: true}") : Self.first)
    var options = Workspace.automatic()
    options.keepsDriftInRecord = keeps
    let outcome = try await workspace.open().apply(second, options: options)
    if case .applied = outcome { #expect(writes) } else { #expect(!writes) }
    let drift = try await workspace.open().drift(second).drift.map(\.address.rawValue)
    #expect(drift == expected, "keeps \(keeps), writes \(writes): \(drift)")
  }

  /// The wearer switches Lunch off and the next revision changes Lunch's time: the apply writes
  /// Lunch (its time) and leaves it off — the wearer's change is still on the watch, so it stays
  /// drift; the record holds Lunch as the apply would have left it (on, at the new time)
  /// (fresh-eyes finding: the record took Lunch off as the apply's: "in sync", drift 0).
  @Test func aWearersChangeToAReminderTheApplyChangesOtherwiseStaysDrift() async throws {
    let workspace = try Workspace()
    _ = try await workspace.open().apply(try workspace.document(Self.first), options: Workspace.automatic())
    let lunch = try #require(try await workspace.state().reminders.first { $0.reminderName == "Lunch" })
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    #expect(try device.simulateReminderToggle(id: lunch.reminderId) == false)
    let second = try workspace.document(Self.first.replacingOccurrences(of: "12:00", with: "13:00"))
    var options = Workspace.automatic()
    options.keepsDriftInRecord = true
    guard case .applied = try await workspace.open().apply(second, options: options) else {
      Issue.record("nothing was written")
      return
    }
    let now = try #require(try await workspace.state().reminders.first { $0.reminderName == "Lunch" })
    #expect(!now.isEnabled, "the apply turned Lunch back on: \(now)")
    let drift = try await workspace.open().drift(second).drift
    #expect(drift.map(\.address.rawValue) == ["reminder.custom[\"Lunch\"]"], "\(drift)")
    #expect(drift.first?.fields.map(\.field) == ["isEnabled"], "only the wearer's change: \(drift.first?.fields.map(\.field) ?? [])")
  }

  /// A refused plan's words say what applying would undo and what it would leave as the wearer
  /// left it: Lunch switched off (the manifest does not set it) stays off when its time moves
  /// (fresh-eyes finding: "reminder.custom["Lunch"] (turned off), which applying would undo").
  @Test func theAttributionOfAPlanSaysWhatItUndoesAndWhatItLeaves() async throws {
    let workspace = try Workspace()
    let first = Self.first + "contacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n"
    _ = try await workspace.open().apply(try workspace.document(first), options: Workspace.automatic())
    let lunch = try #require(try await workspace.state().reminders.first { $0.reminderName == "Lunch" })
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    #expect(try device.simulateReminderToggle(id: lunch.reminderId) == false)
    try device.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199"))
    let plan = try await workspace.open().plan(try workspace.document(first.replacingOccurrences(of: "12:00", with: "13:00"))).plan
    let words = try #require(Reconcile.attribution(plan, pending: [], subject: "the revision"))
    #expect(words == "the revision's own change is safe; changed on the watch since the last apply: contacts (1 added), which applying would undo; "
            + "and reminder.custom[\"Lunch\"] (turned off), which applying would leave as it is", "\(words)")
  }

  /// A drifted resource the watch now holds as the manifest itself changes it (the wearer turned
  /// the drinking reminder on, and so does the new manifest) is what tsapply would have written:
  /// the refresh records it, and it is not drift.
  @Test func aWearersChangeThatIsTheManifestsOwnChangeIsRecorded() async throws {
    let workspace = try Workspace()
    _ = try await workspace.open().apply(try workspace.document(Self.first), options: Workspace.automatic())
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    #expect(try device.simulateReminderToggle(id: try #require(ReminderKind.drinking.builtInID)) == true)
    let second = try workspace.document(Self.first.replacingOccurrences(of: "{enabled: false}", with: "{enabled: true}"))
    var options = Workspace.automatic()
    options.keepsDriftInRecord = true
    guard case .noChanges = try await workspace.open().apply(second, options: options) else {
      Issue.record("the watch did not match the manifest already")
      return
    }
    #expect(try await workspace.open().drift(second).drift.isEmpty)
  }

  /// The wearer adds a contact on the watch (no short name, as the watch's own editor leaves it),
  /// then the next revision declares it too and changes the list otherwise (another contact
  /// removed on the watch is put back): the apply writes the list with the wearer's contact as
  /// the watch holds it, which the manifest accepts — its record holds it so, not with the
  /// short name a contact the manifest added would get, which no apply writes and so stayed
  /// drift for good (fresh-eyes fe103 #1: `short_name = "N" -> ""` after every apply).
  @Test func aContactTheWearerAddedThatTheRevisionDeclaresIsRecordedAsWritten() async throws {
    let workspace = try Workspace()
    let first = "contacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n  - {name: Bo Ray, phone: \"+15550101\"}\n"
    _ = try await workspace.open().apply(try workspace.document(first), options: Workspace.automatic())
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    _ = try device.simulateContactRemove(name: "Bo Ray")
    try device.simulateContactAdd(Contact(name: "Nephew", phoneNum: "+15550177"))
    let second = try workspace.document(first + "  - {name: Nephew, phone: \"+1 555 0177\"}\n")
    var options = Workspace.automatic()
    options.keepsDriftInRecord = true
    guard case .applied = try await workspace.open().apply(second, options: options) else {
      Issue.record("nothing was written")
      return
    }
    let nephew = try #require(try await workspace.state().contacts.first { $0.name == "Nephew" })
    #expect(nephew.shortName?.isEmpty ?? true, "the apply wrote a short name: \(nephew)")
    let drift = try await workspace.open().drift(second).drift
    #expect(drift.isEmpty, "\(drift.map { "\($0.address.rawValue) \($0.fields.map(\.field))" })")
  }

  /// A person's apply of a manifest that leaves a section out (reminders only) did not look at
  /// the emergency list: SOS switched off on the watch before it stays drift for the manifest
  /// that states the list, whether the apply wrote something or found nothing to change
  /// (fresh-eyes finding: "No drift" for good, and `monitor --once` exited 0, with SOS off).
  @Test(arguments: [true, false])
  func aSectionAManifestLeavesOutStaysDriftAfterItsApply(writes: Bool) async throws {
    let workspace = try Workspace()
    let family = "contacts:\n  - {name: Anna, phone: \"+15550101\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Anna, phone: \"+15550101\"}\n"
      + "reminders:\n  medicine: {enabled: false}\n"
    _ = try await workspace.open().apply(try workspace.document(family), options: Workspace.automatic())
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    try device.simulateEmergencyChange(contacts: [], sosOn: false)
    let remindersOnly = try workspace.document("reminders:\n  medicine: {enabled: \(writes)}\n")
    let outcome = try await workspace.open().apply(remindersOnly, options: Workspace.automatic())
    if case .applied = outcome { #expect(writes) } else { #expect(!writes) }
    let drift = try await workspace.open().drift(try workspace.document(family)).drift.map(\.address.rawValue)
    #expect(drift == ["emergency"], "\(drift)")
  }

  /// A watch set up again with another profile after an apply: its record was made for the
  /// other platform, so what changed cannot be told — an error naming the record, not "no
  /// record" with exit 0 (fresh-eyes finding: a cron check would say "no drift" for good).
  @Test func aRecordOfAnotherPlatformIsAnErrorForDrift() async throws {
    let workspace = try Workspace()
    let document = try workspace.document(Self.first)
    _ = try await workspace.open().apply(document, options: Workspace.automatic())
    _ = try SimulatedDevice.create(path: workspace.directory + "/watch.json", profile: try PlatformProfile.named("fit"), force: true)
    let watch = try await workspace.open()
    do throws(EngineError) {
      let report = try await watch.drift(document)
      Issue.record("no error: has record \(report.hasRecord)")
    } catch {
      guard case .lastApplied(let problem) = error else { Issue.record("\(error)"); return }
      #expect(problem.reason.contains("recorded while the watch was of platform default, and it is of fit now"), "\(problem)")
    }
  }
}
