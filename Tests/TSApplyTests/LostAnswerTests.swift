import Foundation
import Testing
@testable import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// A write whose answer was lost (a link or transmission error: 6001–6008, 9001–9702, and any
/// code that does not say the watch refused the call) may have happened: the applier reads that
/// list back and never repeats the write. When the watch holds it, the step is applied and the
/// apply goes on to the end; otherwise it stops and reports what the watch holds, and a rerun
/// converges. A refusal (2003 not connected, 3002, 4002, …) is a failure — unless the list read
/// back holds the write (a watch that took it and still answered a refusal).
@Suite struct LostAnswerTests {
  /// Forwards to a simulated watch; the first call of `method` loses its answer as `loss` says.
  final class LossyDevice: Device, @unchecked Sendable {
    /// `wearerChangesMeanwhile`: after writing, the wearer changes the same list on the watch
    /// (a contact added; the emergency list made one other contact, SOS off), then the answer is lost.
    enum Loss { case afterWriting, beforeWriting, andReadsFailToo, wearerChangesMeanwhile }
    let inner: SimulatedDevice
    let method: String
    let loss: Loss
    let code: TSErrorCode
    private let lock = NSLock()
    private var struck = false
    private(set) var writes: [String] = []

    init(_ inner: SimulatedDevice, method: String, loss: Loss, code: TSErrorCode) {
      self.inner = inner
      self.method = method
      self.loss = loss
      self.code = code
    }

    var identity: String { inner.identity }

    private func write(_ name: String, _ body: () async throws(DeviceError) -> Void) async throws(DeviceError) {
      let strike = lock.withLock { () -> Bool in
        writes.append(name)
        defer { if name == method { struck = true } }
        return name == method && !struck
      }
      guard strike else { return try await body() }
      if loss != .beforeWriting { try await body() }
      if loss == .wearerChangesMeanwhile {
        if name == "setEmergencyContacts" {
          try inner.simulateEmergencyChange(contacts: [Contact(name: "Zed Roe", phoneNum: "+15550199")], sosOn: false)
        } else {
          try inner.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199"))
        }
      }
      throw DeviceError(.bleConnect, code, "answer lost")
    }

    private func read<T>(_ body: () async throws(DeviceError) -> T) async throws(DeviceError) -> T {
      if loss == .andReadsFailToo, lock.withLock({ struck }) { throw DeviceError(.bleConnect, .unConnected, "Device not connected") }
      return try await body()
    }

    func capabilities() async throws(DeviceError) -> DeviceCapabilities { try await inner.capabilities() }
    func createCustomReminderTemplate() async throws(DeviceError) -> Reminder { try await read { () throws(DeviceError) in try await inner.createCustomReminderTemplate() } }
    func fetchAllReminders() async throws(DeviceError) -> [Reminder] { try await read { () throws(DeviceError) in try await inner.fetchAllReminders() } }
    func replaceAllReminders(_ reminders: [Reminder]) async throws(DeviceError) {
      try await write("replaceAllReminders") { () throws(DeviceError) in try await inner.replaceAllReminders(reminders) }
    }
    func setReminder(_ reminder: Reminder) async throws(DeviceError) {
      try await write("setReminder") { () throws(DeviceError) in try await inner.setReminder(reminder) }
    }
    func deleteReminder(id: String) async throws(DeviceError) {
      try await write("deleteReminder") { () throws(DeviceError) in try await inner.deleteReminder(id: id) }
    }
    func getAllContacts() async throws(DeviceError) -> [Contact] { try await read { () throws(DeviceError) in try await inner.getAllContacts() } }
    func setAllContacts(_ contacts: [Contact]) async throws(DeviceError) {
      try await write("setAllContacts") { () throws(DeviceError) in try await inner.setAllContacts(contacts) }
    }
    func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts { try await read { () throws(DeviceError) in try await inner.getEmergencyContacts() } }
    func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool) async throws(DeviceError) {
      try await write("setEmergencyContacts") { () throws(DeviceError) in try await inner.setEmergencyContacts(contacts, sosOn: sosOn) }
    }
    func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {}
    func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {}
    func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async {}
  }

  static let manifest: Manifest = {
    var manifest = FaultInjectionTests.scenario(.default).1
    manifest.contacts = Build.contacts([("Ann", "+15550100"), ("Bob", "+15550111")])
    return manifest
  }()

  /// (write that loses its answer, how, code, what the read-back should find)
  static let cases: [(String, LossyDevice.Loss, TSErrorCode, String)] = [
    ("setAllContacts", .afterWriting, .requestCancelledByDisconnect, "applied"),
    ("setAllContacts", .beforeWriting, .timeout, "notApplied"),
    ("setEmergencyContacts", .afterWriting, .timeout, "applied"),
    ("setEmergencyContacts", .beforeWriting, .connectionLost, "notApplied"),
    ("replaceAllReminders", .afterWriting, .timeout, "applied"),
    ("setAllContacts", .andReadsFailToo, .requestCancelledByDisconnect, "unreadable"),
    // Every link and transmission error, and codes that do not say the watch refused: a write
    // that landed before one of them is applied (fresh-eyes finding: a landed write answered
    // 6002 was "failed", "Nothing reached the watch", and then drift blamed the wearer).
    ("setAllContacts", .afterWriting, TSErrorCode(6002), "applied"),
    ("replaceAllReminders", .afterWriting, TSErrorCode(6008), "applied"),
    ("setEmergencyContacts", .afterWriting, TSErrorCode(9001), "applied"),
    ("replaceAllReminders", .afterWriting, TSErrorCode(7001), "applied"),
    ("setAllContacts", .afterWriting, TSErrorCode(1001), "applied"),
    ("setAllContacts", .beforeWriting, TSErrorCode(6004), "notApplied"),
  ]

  @Test(arguments: cases.indices)
  func reportsWhatTheWatchHolds(_ index: Int) async throws {
    let (method, loss, code, expected) = Self.cases[index]
    let (initial, _) = FaultInjectionTests.scenario(.default)
    let simulated = watch(.default, state: initial)
    let device = LossyDevice(simulated, method: method, loss: loss, code: code)
    let (failure, landed) = try await Self.applied(on: device)
    #expect(device.writes.filter { $0 == method }.count == 1, "the write was repeated")
    let holds = try simulated.snapshot().deviceState
    if expected == "applied" {
      // Landed: applied, said so, and the apply went on to the end (fresh-eyes finding: a heal
      // whose only write landed was reported failed, and the page said SOS at risk).
      #expect(failure == nil, "\(method) \(loss): stopped: \(failure.map { "\($0.cause)" } ?? "")")
      #expect(landed.map(\.code) == [code], "\(landed)")
      #expect(try await currentPlan(Self.manifest, on: simulated).plan?.isEmpty == true, "the apply did not finish")
      return
    }
    let partial = try #require(failure, "\(method) \(loss): the apply did not stop")
    guard case .outcomeUnknown(let error, let found) = partial.cause else {
      Issue.record("\(partial.cause)")
      return
    }
    #expect(error.code == code && landed.isEmpty)
    let part: (DeviceState?) -> String = { state in
      switch method {
      case "setAllContacts": "\(state?.contacts as Any)"
      case "setEmergencyContacts": "\(state?.emergency as Any)"
      default: "\(state?.reminders as Any)"
      }
    }
    switch (expected, found) {
    case ("notApplied", .notApplied):
      #expect(!partial.failed.isEmpty && part(partial.readBack) == part(holds))
    case ("unreadable", .unreadable):
      #expect(!partial.failed.isEmpty && partial.readBack == nil)
    default:
      Issue.record("\(method) \(loss): expected \(expected), found \(found)")
    }
    #expect(Set(partial.applied).isDisjoint(with: Set(partial.failed + partial.notApplied)))
    let rerun = watch(.default, state: holds)
    _ = try await planAndApply(Self.manifest, on: rerun, backups: try backupDirectory())
    #expect(try await currentPlan(Self.manifest, on: rerun).plan?.isEmpty == true, "the rerun did not converge")
  }

  /// A write that took effect and was still answered with a refusal code: the list read back
  /// holds it, so it is applied and the apply goes on (fresh-eyes finding: listed as failed,
  /// then reported as the wearer's drift, 22 of 22 runs); a refusal whose list cannot be read
  /// back is unknown, not "nothing reached the watch" (fresh-eyes finding: said so of a watch
  /// holding the write, 102 runs).
  @Test(arguments: [(LossyDevice.Loss.afterWriting, true), (.andReadsFailToo, false)])
  func aRefusedWriteTheWatchHoldsIsApplied(loss: LossyDevice.Loss, readBack: Bool) async throws {
    let (initial, _) = FaultInjectionTests.scenario(.default)
    let simulated = watch(.default, state: initial)
    let device = LossyDevice(simulated, method: "setAllContacts", loss: loss, code: .dataSetFailed)
    let (failure, landed) = try await Self.applied(on: device)
    if readBack {
      #expect(failure == nil, "\(failure.map { "\($0.cause)" } ?? "")")
      #expect(landed.map(\.code) == [.dataSetFailed] && !landed[0].mayHaveTakenEffect, "said as the refusal it was: \(landed)")
      #expect(try await currentPlan(Self.manifest, on: simulated).plan?.isEmpty == true)
    } else {
      let partial = try #require(failure, "the apply did not stop")
      guard case .outcomeUnknown(let error, .unreadable) = partial.cause else { Issue.record("\(partial.cause)"); return }
      #expect(error.code == .dataSetFailed && partial.failed == [.contacts] && partial.unconfirmed != nil)
      #expect(partial.cause.description.hasPrefix("the watch refused a write (") && partial.cause.description.hasSuffix(
        "so whether it holds the write is unknown"), "\(partial.cause)")
    }
    #expect(device.writes.filter { $0 == "setAllContacts" }.count == 1, "the write was repeated")
  }

  /// A write whose answer was lost while the wearer changed the same list on the watch: it
  /// reads back as neither what was sent nor what was there. What the watch holds is the
  /// wearer's doing, never taken in as this apply's: `reached` (what the record is written
  /// from) keeps the list as it was before the write, the write only `unconfirmed` — so `drift`
  /// reports the change (fresh-eyes finding: the record took SOS switched off and the emergency
  /// list cleared on the watch as what the apply left, and `drift` said "No drift").
  @Test(arguments: ["setAllContacts", "setEmergencyContacts"])
  func aListTheWearerChangedAsTheAnswerWasLostIsNotTakenAsTheApplys(method: String) async throws {
    let (initial, _) = FaultInjectionTests.scenario(.default)
    let simulated = watch(.default, state: initial)
    let device = LossyDevice(simulated, method: method, loss: .wearerChangesMeanwhile, code: .timeout)
    let partial = try #require(try await Self.stopped(on: device), "the apply did not stop")
    guard case .outcomeUnknown(_, .other) = partial.cause else { Issue.record("\(partial.cause)"); return }
    let holds = try simulated.snapshot().deviceState
    let list: (DeviceState?) -> String = { state in
      method == "setAllContacts" ? "\(state?.contacts as Any)" : "\(state?.emergency as Any)"
    }
    #expect(list(partial.readBack) == list(holds))
    #expect(list(partial.reached) == list(initial), "the wearer's list taken as what the apply left: \(list(partial.reached))")
    #expect(partial.unconfirmed != nil && list(partial.unconfirmed) != list(holds) && list(partial.unconfirmed) != list(initial),
            "the write, unconfirmed: \(list(partial.unconfirmed))")
  }

  /// How applying `manifest` on `device` stopped part-way (`nil`: it did not).
  static func stopped(on device: any Device) async throws -> PartialApplyFailure? {
    try await applied(on: device).failure
  }

  /// Applies `manifest` on `device`: how it stopped part-way (`nil`: it did not), and the
  /// errors of the writes that landed without an answer (`ApplyProgress.landedWithoutAnswer`).
  static func applied(on device: any Device) async throws -> (failure: PartialApplyFailure?, landed: [DeviceError]) {
    let landed = Locked<[DeviceError]>([])
    do {
      _ = try await planAndApply(manifest, on: device, backups: try backupDirectory()) { event in
        if case .apply(.landedWithoutAnswer(_, let error)) = event { landed.mutate { $0.append(error) } }
      }
    } catch ApplyError.partial(let partial, _) {
      return (partial, landed.value)
    }
    return (nil, landed.value)
  }

  /// A code that says the watch refused the call, or that it was never sent, is the write's
  /// failure: the list read back holds what it held.
  @Test(arguments: [TSErrorCode.unConnected, .isBusy, .paramError, .paramSizeError, .dataSetFailed, .fitCloudContactLimit])
  func aRefusalIsAFailureNotReadBack(_ code: TSErrorCode) async throws {
    let (initial, _) = FaultInjectionTests.scenario(.default)
    let device = LossyDevice(watch(.default, state: initial), method: "setAllContacts", loss: .beforeWriting, code: code)
    let failure = try await Self.stopped(on: device)
    let partial = try #require(failure, "the apply did not stop")
    guard case .device(let error) = partial.cause else {
      Issue.record("\(partial.cause)")
      return
    }
    #expect(error.code == code && partial.failed == [.contacts] && partial.readBack == nil)
  }
}
