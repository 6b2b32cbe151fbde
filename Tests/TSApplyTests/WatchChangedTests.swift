import Foundation
import Testing
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// A change made on the watch between planning and writing is never silently overwritten: the
/// apply stops before writing that list, and says so.
@Suite struct WatchChangedTests {
  struct Case: Sendable, CustomTestStringConvertible {
    let id: String
    let change: @Sendable (SimulatedDevice) throws -> Void
    let part: String
    var testDescription: String { id }
  }

  static let cases: [Case] = [
    Case(id: "contact added on the watch", change: { try $0.simulateContactAdd(Contact(name: "Grandma", phoneNum: "+15550177")) },
         part: "contacts"),
    Case(id: "reminder toggled on the watch", change: { _ = try $0.simulateReminderToggle(id: "2") }, part: "reminders"),
    Case(id: "SOS contact changed on the watch",
         change: { try $0.simulateEmergencyChange(contacts: [Contact(name: "Kim", phoneNum: "+15550188")], sosOn: true) },
         part: "emergency contacts"),
  ]

  @Test(arguments: cases)
  func stopsBeforeOverwriting(_ c: Case) async throws {
    let device = SimulatedDevice(profile: .default)
    let manifest = Build.manifest(
      reminders: Build.reminders(drinking: Build.reminder(.drinking, line: 3, enabled: true)),
      contacts: Build.contacts([("Ann", "+15550100")]),
      emergency: Build.emergency(sos: true, contacts: [("Sam", "+15550101")]))
    let reconciler = try await Reconciler.connect(device)
    let (state, result) = try await reconciler.plan(manifest)
    let plan = try #require(result.plan)
    try c.change(device)
    let changed = try device.snapshot().deviceState
    do {
      _ = try await reconciler.apply(plan, manifest: manifest, state: state, backupDirectory: try backupDirectory(), now: Date())
      Issue.record("the apply overwrote a change made on the watch")
    } catch ApplyError.partial(let failure, _) {
      guard case .changedOnWatch(let part) = failure.cause else {
        Issue.record("unexpected cause \(failure.cause)")
        return
      }
      #expect(part == c.part)
      let now = try device.snapshot().deviceState
      switch c.part {
      case "contacts": #expect(now.contacts == changed.contacts)
      case "reminders": #expect(now.reminders == changed.reminders)
      default: #expect(now.emergency == changed.emergency)
      }
    }
  }
}
