import Foundation
import Testing
import TSApply
import TSDevice
import TSEngine
import TSModel

/// The unattended reconcile step the monitor and the agent share: each way an apply can end is
/// classified once, the way both report and retry it.
@Suite struct ReconcileOutcomeTests {
  static let start = """
    version: 1
    contacts:
      - {name: Ann, phone: "+15550100"}
    emergency:
      sos: true
      contacts:
        - {name: Mom, phone: "+15550110"}
        - {name: Dad, phone: "+15550111"}

    """

  /// (case, the manifest given, fault, whether another apply holds the lock, allowDestroy, word)
  static let cases: [(String, String, String?, Bool, Bool, String)] = [
    ("the watch matches", start, nil, false, false, "no_changes"),
    ("a contact to add", start.replacingOccurrences(of: "+15550100\"}\n", with: "+15550100\"}\n  - {name: Bob, phone: \"+15550111\"}\n"),
     nil, false, false, "applied"),
    ("the manifest removes an emergency contact", start.replacingOccurrences(of: "    - {name: Dad, phone: \"+15550111\"}\n", with: ""),
     nil, false, false, "refused_unsafe"),
    ("the same, destruction allowed", start.replacingOccurrences(of: "    - {name: Dad, phone: \"+15550111\"}\n", with: ""),
     nil, false, true, "applied"),
    ("another apply holds the watch", start, nil, true, false, "locked"),
    ("a timeout reading the watch", start, "fail@1", false, false, "retrying"),
    ("a refused write", start.replacingOccurrences(of: "sos: true", with: "sos: false"), "fail@5:4002", false, true, "failed"),
    // Not a refusal by its code, so read back: it did not land, and is as final as its error.
    ("a write failed with an unknown error", start.replacingOccurrences(of: "sos: true", with: "sos: false"), "fail@5:1001", false, true, "failed"),
    ("a write whose answer was lost, not landed", start.replacingOccurrences(of: "sos: true", with: "sos: false"), "fail@5:6002", false, true,
     "retrying"),
  ]

  @Test(arguments: cases.indices)
  func classifies(_ index: Int) async throws {
    let (name, yaml, fault, locked, allowDestroy, word) = Self.cases[index]
    let space = try Workspace()
    _ = try await space.open().apply(try space.document(Self.start), options: Workspace.automatic(true))
    let watch = if let fault { try await space.open(fault: fault) } else { try await space.open() }
    let held = locked ? try await WatchLock.acquire(at: watch.home.lockPath, holder: WatchLock.currentHolder(command: "other", now: Date()),
                                                    timeout: .zero) : nil
    defer { held?.release() }
    let outcome = await Reconcile.apply(try space.document(yaml), to: watch, allowDestroy: allowDestroy,
                                        options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    let error = outcome.error.map { String(describing: $0) } ?? ""
    #expect(outcome.word == word, "\(name): \(outcome.word) \(error)")
    if case .refusedUnsafe(_, let findings, let pending) = outcome {
      // The unsafe part is the manifest's own change, not undoing one made on the watch.
      #expect(!findings.isEmpty && pending == findings, "\(name)")
    }
  }
}
