import Foundation
import Testing
import TSApply
import TSDevice
import TSEngine
import TSModel
import TSPlan

/// The safety gate: each kind of unsafe change × each way of approving, asserting what reached
/// the watch. Unattended approval (`--auto-approve`) refuses an unsafe plan unless destruction is
/// allowed; a person's 'yes' and a saved plan (reviewed when it was made) apply it.
@Suite struct SafetyGateTests {
  static let start = """
    version: 1
    reminders:
      custom:
        - {name: Walk, repeat: weekend, at: ["19:30"]}
    contacts:
      - {name: Alex Doe, phone: "+15550100"}
      - {name: Sam Roe, phone: "+15550101"}
      - {name: Kim Li, phone: "+15550102"}
    emergency:
      sos: true
      contacts:
        - {name: Mom, phone: "+15550110"}
        - {name: Dad, phone: "+15550111"}

    """

  /// A change of `start` and whether the gate calls it unsafe.
  struct Change: Sendable, CustomTestStringConvertible {
    var name: String
    var edit: @Sendable (String) -> String
    var unsafe: Bool
    var testDescription: String { name }
  }

  static let changes: [Change] = [
    Change(name: "clears the contact list", edit: { replacing($0, contactLines, with: "contacts: []\n") }, unsafe: true),
    Change(name: "removes more than a third of the contacts", edit: {
      $0.replacingOccurrences(of: "  - {name: Sam Roe, phone: \"+15550101\"}\n  - {name: Kim Li, phone: \"+15550102\"}\n", with: "")
    }, unsafe: true),
    Change(name: "removes a third of the contacts (safe)", edit: {
      $0.replacingOccurrences(of: "  - {name: Kim Li, phone: \"+15550102\"}\n", with: "")
    }, unsafe: false),
    Change(name: "removes an emergency contact", edit: {
      $0.replacingOccurrences(of: "    - {name: Dad, phone: \"+15550111\"}\n", with: "")
    }, unsafe: true),
    Change(name: "changes an emergency contact's name", edit: {
      $0.replacingOccurrences(of: "{name: Dad, phone", with: "{name: Father, phone")
    }, unsafe: true),
    Change(name: "changes an emergency contact's number", edit: {
      $0.replacingOccurrences(of: "\"+15550111\"", with: "\"+15550199\"")
    }, unsafe: true),
    Change(name: "turns SOS off", edit: { $0.replacingOccurrences(of: "sos: true", with: "sos: false") }, unsafe: true),
    Change(name: "clears the emergency list", edit: {
      replacing($0, "  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n    - {name: Dad, phone: \"+15550111\"}\n",
                with: "  sos: false\n  contacts: []\n")
    }, unsafe: true),
    Change(name: "deletes a custom reminder", edit: {
      $0.replacingOccurrences(of: "  custom:\n    - {name: Walk, repeat: weekend, at: [\"19:30\"]}\n", with: "  custom: []\n")
    }, unsafe: true),
    Change(name: "adds a contact (safe)", edit: {
      $0.replacingOccurrences(of: "contacts:\n  - {name: Alex", with: "contacts:\n  - {name: Zed, phone: \"+15550199\"}\n  - {name: Alex")
    }, unsafe: false),
  ]

  static let contactLines = "contacts:\n  - {name: Alex Doe, phone: \"+15550100\"}\n  - {name: Sam Roe, phone: \"+15550101\"}\n  - {name: Kim Li, phone: \"+15550102\"}\n"

  static func replacing(_ text: String, _ old: String, with new: String) -> String {
    precondition(text.contains(old), "the edit does not apply")
    return text.replacingOccurrences(of: old, with: new)
  }

  /// How the plan is approved.
  enum Mode: String, Sendable, CaseIterable {
    case yes, no, autoApprove, autoApproveAllowDestroy, savedPlan
  }

  @Test(arguments: changes, Mode.allCases)
  func gate(_ change: Change, _ mode: Mode) async throws {
    let space = try Workspace()
    _ = try await space.open().apply(try space.document(Self.start), options: Workspace.automatic(true))
    let before = try await space.state()
    let document = try space.document(change.edit(Self.start))
    let watch = try await space.open()
    let planned = try await watch.plan(document)
    #expect(!planned.plan.isEmpty, "the edit changes nothing")
    #expect(planned.plan.unsafeFindings.isEmpty == !change.unsafe, "\(safetyFindings(for: planned.plan))")

    let applies: Bool
    var outcome: Result<ApplyOutcome, EngineError>
    switch mode {
    case .yes, .no:
      let options = ApplyOptions(approval: .ask { _ in mode == .yes }, command: "test")
      outcome = await Result { () async throws(EngineError) in try await watch.apply(document, options: options) }
      applies = mode == .yes
    case .autoApprove:
      outcome = await Result { () async throws(EngineError) in try await watch.apply(document, options: Workspace.automatic(false)) }
      applies = !change.unsafe
    case .autoApproveAllowDestroy:
      outcome = await Result { () async throws(EngineError) in try await watch.apply(document, options: Workspace.automatic(true)) }
      applies = true
    case .savedPlan:
      let path = space.directory + "/changes.tfplan"
      let saved = try watch.save(planned, document: document, to: path)
      let file = SavedPlanFile(saved: saved, path: path)
      outcome = await Result { () async throws(EngineError) in try await watch.apply(saved: file, options: Workspace.automatic(false)) }
      applies = true
    }
    let after = try await space.state()
    if applies {
      if case .failure(let error) = outcome { Issue.record("\(change.name), \(mode): \(error)") }
      #expect(try await watch.plan(document).plan.isEmpty, "\(change.name), \(mode): the watch does not match")
    } else {
      #expect(after == before, "\(change.name), \(mode): the watch was written")
      switch (mode, outcome) {
      case (.autoApprove, .failure(.unsafe(_, let findings))):
        #expect(findings == planned.plan.unsafeFindings)
      case (.no, .failure(.declined)):
        break
      default:
        Issue.record("\(change.name), \(mode): expected a refusal, got \(outcome)")
      }
    }
  }
}

extension Result where Failure == EngineError {
  /// The result of `body`.
  init(_ body: () async throws(EngineError) -> Success) async {
    do { self = .success(try await body()) } catch { self = .failure(error) }
  }
}
