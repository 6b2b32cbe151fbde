import Foundation
import TSDevice
import TSModel
import TSPlan

/// What the applier reports while it works, for progress lines.
public enum ApplyProgress: Sendable {
  /// A step is about to run.
  case stepStarted(ApplyStep)
  /// One device call finished, `seconds` after the apply started.
  case deviceCall(name: String, seconds: Double)
  /// A step finished, `seconds` after the apply started.
  case stepFinished(ApplyStep, seconds: Double)
}

/// A failure part-way through an apply: which changes reached the watch and which did not.
public struct PartialApplyFailure: Error, Sendable, CustomStringConvertible {
  /// Resources fully changed before the failure.
  public var applied: [ResourceAddress]
  /// Resources of the step that failed (not changed: steps are atomic on the watch).
  public var failed: [ResourceAddress]
  /// Resources whose steps never ran.
  public var notApplied: [ResourceAddress]
  /// Why the step failed.
  public var cause: Cause

  /// Why a step failed.
  public enum Cause: Sendable, CustomStringConvertible {
    /// The device answered a call with an error.
    case device(DeviceError)
    /// Just before writing a whole list, reading it showed it had changed on the watch since
    /// the plan was made; writing would have silently undone that change, so nothing was written.
    case changedOnWatch(part: String)
    /// The user interrupted (Ctrl-C); the apply stopped between two steps.
    case interrupted

    public var description: String {
      switch self {
      case .device(let error): "\(error)"
      case .changedOnWatch(let part):
        "the watch's \(part) changed since the plan was made (a change on the watch itself, or another tsapply); "
          + "nothing was written over it"
      case .interrupted: "interrupted"
      }
    }
  }

  public var description: String { "apply stopped: \(cause)" }
}

/// Runs apply steps against a device, one at a time, stopping at the first failure.
///
/// Every write replaces a whole list (the reminder list or one reminder in it, the contacts,
/// the emergency contacts), so before the first write of each list the applier reads that list
/// and checks it is still what the plan was made from. A change made on the watch meanwhile (or
/// by another tsapply) stops the apply instead of being silently overwritten: one read per
/// written list buys that guarantee.
public struct Applier: Sendable {
  /// The watch.
  public var device: any Device
  /// Whether the platform accepts `repeatDays == 0` (checked before writing a new reminder).
  public var allowsOnce: Bool

  /// A runner for `device`; `allowsOnce` is the platform's `ReminderCapabilities.supportsOnce`.
  public init(device: any Device, allowsOnce: Bool = false) {
    self.device = device
    self.allowsOnce = allowsOnce
  }

  /// Executes `steps` in order against a watch expected to hold `expected`.
  ///
  /// - Parameters:
  ///   - expected: The state the plan was made from; each list is checked against it before its first write.
  ///   - shouldStop: Asked before each step; `true` (the user pressed Ctrl-C) stops the apply
  ///     there, so no step is left half-done.
  ///   - progress: Called before and after each step and after each device call.
  /// - Returns: The addresses changed, in order.
  /// - Throws: `PartialApplyFailure` with what was and was not applied.
  public func execute(_ steps: [ApplyStep], expected: DeviceState, shouldStop: @Sendable () -> Bool = { false },
                      progress: @Sendable (ApplyProgress) -> Void = { _ in }) async throws(PartialApplyFailure) -> [ResourceAddress] {
    let start = DispatchTime.now().uptimeNanoseconds
    let elapsed = { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
    var applied: [ResourceAddress] = []
    var checked: Set<StatePart> = []
    for (index, step) in steps.enumerated() {
      if shouldStop() {
        throw PartialApplyFailure(applied: applied, failed: [], notApplied: steps[index...].flatMap(\.addresses),
                                  cause: .interrupted)
      }
      progress(.stepStarted(step))
      let failure = { (cause: PartialApplyFailure.Cause) in
        PartialApplyFailure(applied: applied, failed: step.addresses,
                            notApplied: steps[(index + 1)...].flatMap(\.addresses), cause: cause)
      }
      do {
        let part = StatePart(step)
        if checked.insert(part).inserted, try await !part.matches(expected, on: device) {
          throw failure(.changedOnWatch(part: part.rawValue))
        }
        try await perform(step) { name in progress(.deviceCall(name: name, seconds: elapsed())) }
      } catch let error as PartialApplyFailure {
        throw error
      } catch let error as DeviceError {
        throw failure(.device(error))
      } catch {
        throw failure(.device(DeviceError(.simulator, .unknown, "\(error)")))
      }
      applied += step.addresses
      progress(.stepFinished(step, seconds: elapsed()))
    }
    return applied
  }

  /// The list a step writes, for the read-before-write check.
  enum StatePart: String, Hashable {
    case reminders, contacts, emergency = "emergency contacts"

    init(_ step: ApplyStep) {
      switch step {
      case .setAllContacts: self = .contacts
      case .setEmergencyContacts: self = .emergency
      default: self = .reminders
      }
    }

    /// Reads this part from the watch and compares it with `expected`.
    func matches(_ expected: DeviceState, on device: any Device) async throws(DeviceError) -> Bool {
      switch self {
      case .reminders: try await device.fetchAllReminders() == expected.reminders
      case .contacts: try await device.getAllContacts() == expected.contacts
      case .emergency: try await device.getEmergencyContacts() == expected.emergency
      }
    }
  }

  /// A new reminder (the manifest's fields on the platform's template) checked with the SDK's
  /// validator before it is written, as the SDK advises: some platforms (Fit) write without
  /// checking, and a template default the plan could not see (e.g. lunch-break times) must not
  /// put an invalid reminder on the watch.
  private func checked(_ reminder: Reminder) throws(DeviceError) -> Reminder {
    if let error = ReminderValidator.firstError(in: reminder, allowsOnce: allowsOnce) { throw error }
    return reminder
  }

  private func perform(_ step: ApplyStep, called: (String) -> Void) async throws(DeviceError) {
    switch step {
    case .replaceAllReminders(let reminders, _):
      try await device.replaceAllReminders(reminders)
      called("replaceAllReminders")
    case .setReminder(let reminder, _):
      try await device.setReminder(reminder)
      called("setReminder")
    case .deleteReminder(let id, _):
      try await device.deleteReminder(id: id)
      called("deleteReminder")
    case .createCustomReminder(let patch, _):
      let template = try await device.createCustomReminderTemplate()
      called("createCustomReminderTemplate")
      try await device.setReminder(try checked(patch.applying(to: template)))
      called("setReminder")
    case .replaceAllCreating(let base, let patch, _, _):
      let template = try await device.createCustomReminderTemplate()
      called("createCustomReminderTemplate")
      try await device.replaceAllReminders(base + [try checked(patch.applying(to: template))])
      called("replaceAllReminders")
    case .setAllContacts(let contacts):
      try await device.setAllContacts(contacts)
      called("setAllContacts")
    case .setEmergencyContacts(let emergency):
      try await device.setEmergencyContacts(emergency.contacts, sosOn: emergency.isSosOn)
      called("setEmergencyContacts")
    }
  }
}
