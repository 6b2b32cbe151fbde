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
  /// The step's write was answered with `error` — lost, or a refusal — yet reading its list
  /// back shows the watch holds exactly what was sent: the step is applied (never written
  /// again) and the apply goes on; `stepFinished` follows.
  case landedWithoutAnswer(ApplyStep, DeviceError)
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
  /// After a write whose answer was lost (`Cause.outcomeUnknown`): the watch's state as read
  /// back then (the list the step wrote as the watch holds it, the others as this apply left
  /// them); `nil` otherwise.
  public var readBack: DeviceState?
  /// What the watch holds as far as this apply knows: the state the plan was made from with
  /// every applied step's write in it (and, after a lost answer, the list as read back when it
  /// is what was sent or what was there — otherwise as it was before the write); `nil`
  /// when no write was sent, so the apply changed nothing. The last-applied record is written
  /// from it, so `drift` never reports this apply's own writes.
  public var reached: DeviceState?
  /// When a write's answer was lost and the list could not be read back, or read back as
  /// neither what was sent nor what was there: the state if that write landed (`reached` is
  /// the state if it did not). `nil` otherwise.
  public var unconfirmed: DeviceState?

  /// Why a step failed.
  public enum Cause: Sendable, CustomStringConvertible {
    /// The device answered a call with an error.
    case device(DeviceError)
    /// Just before writing a whole list, reading it showed it had changed on the watch since
    /// the plan was made; writing would have silently undone that change, so nothing was written.
    case changedOnWatch(part: String)
    /// The user interrupted (Ctrl-C); the apply stopped between two steps.
    case interrupted
    /// A write's answer was lost (`DeviceError.mayHaveTakenEffect`: a timeout, a dropped
    /// connection, any error that does not say the watch refused), so it may or may not have
    /// reached the watch. The write was not repeated:
    /// the list was read back, and `found` says what the watch holds.
    case outcomeUnknown(DeviceError, found: ReadBack)

    /// What reading a list back after a lost answer showed.
    public enum ReadBack: Sendable, Hashable {
      /// The watch holds exactly what the write sent: it was applied (the apply goes on with
      /// the step applied, `ApplyProgress.landedWithoutAnswer`: no failure carries this).
      case applied
      /// The watch holds what it held before: it was not applied.
      case notApplied
      /// The watch holds neither (changed meanwhile, or stored differently than sent).
      case other
      /// The list could not be read back either; what the watch holds is unknown.
      case unreadable(DeviceError)
    }

    public var description: String {
      switch self {
      case .device(let error): "\(error)"
      case .outcomeUnknown(let error, .unreadable(let readError)) where !error.mayHaveTakenEffect:
        "the watch refused a write (\(error)), and reading the list back failed (\(readError)), so whether it holds the write is unknown"
      case .outcomeUnknown(let error, let found) where !error.mayHaveTakenEffect:
        "the watch refused a write (\(error)), yet reading it back shows " + found.description
      case .outcomeUnknown(let error, .unreadable(let readError)):
        // Not "reading the watch back shows nothing" (fresh-eyes fe96 #9).
        "the answer to a write was lost (\(error)), so it was not repeated; reading the list back failed too (\(readError)), "
          + "so whether the watch holds the write is unknown"
      case .outcomeUnknown(let error, let found):
        "the answer to a write was lost (\(error)), so it was not repeated; reading the watch back shows "
          + found.description

      case .changedOnWatch(let part):
        "the watch's \(part) changed since the plan was made (a change on the watch itself, or another tsapply); "
          + "nothing was written over it"
      case .interrupted: "interrupted"
      }
    }
  }

  /// A failure of the step at `index` of `steps`, after `applied`.
  init(applied: [ResourceAddress], steps: [ApplyStep], index: Int, cause: Cause, readBack: DeviceState? = nil) {
    self.applied = applied
    failed = steps[index].addresses
    notApplied = steps[(index + 1)...].flatMap(\.addresses)
    self.cause = cause
    self.readBack = readBack
  }

  /// A failure with the lists given.
  public init(applied: [ResourceAddress], failed: [ResourceAddress], notApplied: [ResourceAddress], cause: Cause) {
    self.applied = applied
    self.failed = failed
    self.notApplied = notApplied
    self.cause = cause
  }

  public var description: String { "apply stopped: \(cause)" }
}

extension PartialApplyFailure.Cause.ReadBack: CustomStringConvertible {
  public var description: String {
    switch self {
    case .applied: "it was applied"
    case .notApplied: "it was not applied"
    case .other: "the list changed, but not to what was sent"
    case .unreadable(let error): "nothing: reading it back failed too (\(error)), so what the watch holds is unknown"
    }
  }
}

/// Runs apply steps against a device, one at a time, stopping at the first failure.
///
/// Every write replaces a whole list (the reminder list or one reminder in it, the contacts,
/// the emergency contacts), so before the first write of each list the applier reads that list
/// and checks it is still what the plan was made from. A change made on the watch meanwhile (or
/// by another tsapply) stops the apply instead of being silently overwritten: one read per
/// written list buys that guarantee.
///
/// A write whose answer was lost (a timeout, a dropped connection, any error that does not say
/// the watch refused: `DeviceError.mayHaveTakenEffect`) may have happened. It is never repeated:
/// the applier reads that list back. When the watch holds exactly what was sent, the write is
/// applied like any other (`ApplyProgress.landedWithoutAnswer`) and the apply goes on — the read
/// showed the link works, and stopping would leave a complete apply reported as failed (a heal
/// said "failed" while the watch held it). When it holds what it held before, or neither
/// (`Cause.outcomeUnknown`), the apply stops; the next run plans from what the watch really
/// holds (docs/apply.md "When a write's answer is lost").
public struct Applier: Sendable {
  /// The watch.
  public var device: any Device
  /// Whether the platform accepts `repeatDays == 0` (checked before writing a new reminder).
  public var allowsOnce: Bool
  /// The platform's reminder capabilities, to tell what a lost write would read back as
  /// (`ReminderCapabilities.storedForm`); `nil` compares reminders as sent.
  public var storedForm: ReminderCapabilities?

  /// A runner for `device`; `allowsOnce` is the platform's `ReminderCapabilities.supportsOnce`,
  /// `storedForm` its reminder capabilities.
  public init(device: any Device, allowsOnce: Bool = false, storedForm: ReminderCapabilities? = nil) {
    self.device = device
    self.allowsOnce = allowsOnce
    self.storedForm = storedForm
  }

  /// Executes `steps` in order against a watch expected to hold `expected`.
  ///
  /// - Parameters:
  ///   - expected: The state the plan was made from; each list is checked against it before its first
  ///     write (the reminders before each later write too, against the read before: `untouchedAlike`).
  ///   - shouldStop: Asked before each step; `true` (the user pressed Ctrl-C) stops the apply
  ///     there, so no step is left half-done.
  ///   - willWrite: Called just before each write call with the state as the earlier writes left
  ///     it and the state once this write lands (`Sent.applied`), so a record written there
  ///     stays true if the process dies before the answer comes.
  ///   - progress: Called before and after each step and after each device call.
  /// - Returns: The addresses changed, in order, and the state the writes left (`expected` with
  ///   every write in it, reminders in their stored form).
  /// - Throws: `PartialApplyFailure` with what was and was not applied, and what was reached.
  public func execute(_ steps: [ApplyStep], expected: DeviceState, shouldStop: @Sendable () -> Bool = { false },
                      willWrite: @Sendable (_ reached: DeviceState, _ ifLanded: DeviceState) -> Void = { _, _ in },
                      progress: @Sendable (ApplyProgress) -> Void = { _ in }) async throws(PartialApplyFailure) -> (applied: [ResourceAddress], reached: DeviceState) {
    let start = DispatchTime.now().uptimeNanoseconds
    let elapsed = { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
    var applied: [ResourceAddress] = []
    var checked: Set<StatePart> = []
    // The reminders as read before the last reminder write, the IDs that write touched (`nil`:
    // the whole list) and whether it created one.
    var lastReminders: (held: [Reminder], touched: Set<String>?, created: Bool)?
    // The watch as the writes so far left it, and whether any write was sent.
    var current = expected
    var wrote = false
    for (index, step) in steps.enumerated() {
      if shouldStop() {
        var failure = PartialApplyFailure(applied: applied, failed: [], notApplied: steps[index...].flatMap(\.addresses),
                                          cause: .interrupted)
        failure.reached = wrote ? current : nil
        throw failure
      }
      progress(.stepStarted(step))
      let failure = { (cause: PartialApplyFailure.Cause) in
        var failure = PartialApplyFailure(applied: applied, steps: steps, index: index, cause: cause)
        failure.reached = wrote ? current : nil
        return failure
      }
      let part = StatePart(step)
      var sent: Sent?
      do {
        // A custom reminder's template is fetched before the check, so the check is the last
        // call before the write: the window in which a change made on the watch is written over
        // stays one call wide (fresh-eyes finding: two, with the template call in it).
        var template: Reminder?
        if step.createsCustomReminder {
          template = try await device.createCustomReminderTemplate()
          progress(.deviceCall(name: "createCustomReminderTemplate", seconds: elapsed()))
        }
        // Before the first write of each list, the list is read and compared with the plan's
        // state. The reminders, which a platform may write one at a time (fit), are read before
        // each later write too: every reminder the writes before did not touch must be as that
        // read found it — a reminder the wearer changed between two such writes was written over,
        // silently (fresh-eyes fe93: four calls wide). The reminders a write touched are not
        // compared: the watch keeps them in its own stored form. The window stays the one call
        // between the last read and the write.
        let first = checked.insert(part).inserted
        if part == .reminders {
          let held = try await device.fetchAllReminders()
          guard lastReminders.map({ Self.untouchedAlike(held, since: $0) }) ?? (held == expected.reminders) else {
            throw failure(.changedOnWatch(part: part.rawValue))
          }
          lastReminders = (held, step.touchedReminders(template: template), step.createsCustomReminder)
        } else if first, try await !part.matches(expected, on: device) {
          throw failure(.changedOnWatch(part: part.rawValue))
        }
        try await perform(step, template: template, sent: &sent, willWrite: { write in
          wrote = true
          willWrite(current, write.applied(to: current, storing: storedForm))
        }) { name in progress(.deviceCall(name: name, seconds: elapsed())) }
      } catch let error as PartialApplyFailure {
        throw error
      } catch let error as DeviceError {
        guard let write = sent, error.domain != .simulator, error.domain != .bridge else { throw failure(.device(error)) }
        let judged = await unknownOutcome(of: write, part: part, error: error, before: current, applied: applied, steps: steps, index: index)
        // The watch holds exactly what was sent: applied, whatever the answer was.
        if case .outcomeUnknown(_, found: .applied) = judged.cause {
          progress(.landedWithoutAnswer(step, error))
          current = write.applied(to: current, storing: storedForm)
          applied += step.addresses
          progress(.stepFinished(step, seconds: elapsed()))
          continue
        }
        // A refusal is taken at its word when the list reads back as before. Changed otherwise,
        // or unreadable, what the watch holds is not known — a watch that took the write and
        // still answered a refusal was seen (fresh-eyes findings: the write listed as failed and
        // then reported as the wearer's drift; with the read failing too, "Nothing reached the
        // watch" while it held the write).
        if !error.mayHaveTakenEffect, case .outcomeUnknown(_, found: .notApplied) = judged.cause { throw failure(.device(error)) }
        throw judged
      } catch {
        throw failure(.device(DeviceError(.simulator, .unknown, "\(error)")))
      }
      if let sent { current = sent.applied(to: current, storing: storedForm) }
      applied += step.addresses
      progress(.stepFinished(step, seconds: elapsed()))
    }
    return (applied, current)
  }

  /// The failure after the write `sent` lost its answer: the list is read back (never written
  /// again) and compared with what it held just before this write (`before`: the plan's state
  /// with the earlier writes of this apply in it) and with what was sent.
  private func unknownOutcome(of sent: Sent, part: StatePart, error: DeviceError, before: DeviceState,
                              applied: [ResourceAddress], steps: [ApplyStep], index: Int) async -> PartialApplyFailure {
    let ifLanded = sent.applied(to: before, storing: storedForm)
    let current: DeviceState
    do {
      current = try await part.read(into: before, on: device)
    } catch let readError {
      var failure = PartialApplyFailure(applied: applied, steps: steps, index: index,
                                        cause: .outcomeUnknown(error, found: .unreadable(readError)))
      failure.reached = before
      failure.unconfirmed = ifLanded
      return failure
    }
    let found: PartialApplyFailure.Cause.ReadBack = current == ifLanded ? .applied : current == before ? .notApplied : .other
    var failure = PartialApplyFailure(applied: applied, steps: steps, index: index,
                                      cause: .outcomeUnknown(error, found: found), readBack: current)
    failure.reached = current
    if found == .other {
      // Neither what was sent nor what was there: changed on the watch itself (before or after
      // the write landed, if it did). What this apply knows is the list before the write, and
      // the write unconfirmed; the list read back is the wearer's doing, never recorded as this
      // apply's (fresh-eyes finding: SOS switched off on the watch was recorded as left by the
      // apply, and `drift` said "No drift").
      failure.reached = before
      failure.unconfirmed = ifLanded
    }
    return failure
  }

  /// Whether `held` (the reminders read before a write) holds every reminder `last` (the read
  /// before the write before it) held that the write between did not touch, unchanged, and no
  /// other but the one that write created: nothing was changed on the watch in between. A write
  /// of the whole list (`touched == nil`) leaves nothing to compare.
  static func untouchedAlike(_ held: [Reminder], since last: (held: [Reminder], touched: Set<String>?, created: Bool)) -> Bool {
    guard let touched = last.touched else { return true }
    let before = Dictionary(last.held.filter { !touched.contains($0.reminderId) }.map { ($0.reminderId, $0) }) { first, _ in first }
    let now = Dictionary(held.filter { !touched.contains($0.reminderId) }.map { ($0.reminderId, $0) }) { first, _ in first }
    let added = now.keys.filter { before[$0] == nil }.count
    return before.allSatisfy { now[$0.key] == $0.value } && added <= (last.created ? 1 : 0)
  }

  /// What a write call sent, to tell after a lost answer whether it took effect.
  enum Sent {
    case reminders([Reminder]), upsert(Reminder), delete(String), contacts([Contact]), emergency(EmergencyContacts)

    /// `state` as it is once this write took effect (the SDK's rules: replace-all sets the list,
    /// set upserts by exact ID, delete removes the ID), reminders in the stored form of
    /// `capabilities` when given.
    func applied(to state: DeviceState, storing capabilities: ReminderCapabilities?) -> DeviceState {
      let stored = { (reminder: Reminder) in (try? capabilities?.storedForm(of: reminder, id: reminder.reminderId)) ?? reminder }
      var after = state
      switch self {
      case .reminders(let list): after.reminders = list.map(stored)
      case .upsert(let unstored):
        let reminder = stored(unstored)
        if let index = after.reminders.firstIndex(where: { $0.reminderId == reminder.reminderId }) {
          after.reminders[index] = reminder
        } else {
          after.reminders.append(reminder)
        }
      case .delete(let id): after.reminders.removeAll { $0.reminderId == id }
      case .contacts(let contacts): after.contacts = contacts
      case .emergency(let emergency): after.emergency = emergency
      }
      return after
    }
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

    /// `state` with this part replaced by what the watch holds now.
    func read(into state: DeviceState, on device: any Device) async throws(DeviceError) -> DeviceState {
      var current = state
      switch self {
      case .reminders: current.reminders = try await device.fetchAllReminders()
      case .contacts: current.contacts = try await device.getAllContacts()
      case .emergency: current.emergency = try await device.getEmergencyContacts()
      }
      return current
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

  /// Makes the step's calls; `sent` is set just before each write call to what it writes, and
  /// `willWrite` is told it.
  /// Runs `step`'s write; a step that creates a custom reminder builds it on `template` (fetched
  /// by the caller before its read-before-write check).
  private func perform(_ step: ApplyStep, template: Reminder?, sent: inout Sent?, willWrite: (Sent) -> Void,
                       called: (String) -> Void) async throws(DeviceError) {
    func fetched() async throws(DeviceError) -> Reminder {
      if let template { return template }
      let made = try await device.createCustomReminderTemplate()
      called("createCustomReminderTemplate")
      return made
    }
    func sending(_ write: Sent) {
      sent = write
      willWrite(write)
    }
    switch step {
    case .replaceAllReminders(let reminders, _):
      sending(.reminders(reminders))
      try await device.replaceAllReminders(reminders)
      called("replaceAllReminders")
    case .setReminder(let reminder, _):
      sending(.upsert(reminder))
      try await device.setReminder(reminder)
      called("setReminder")
    case .deleteReminder(let id, _):
      sending(.delete(id))
      try await device.deleteReminder(id: id)
      called("deleteReminder")
    case .createCustomReminder(let patch, _):
      let reminder = try checked(patch.applying(to: try await fetched()))
      sending(.upsert(reminder))
      try await device.setReminder(reminder)
      called("setReminder")
    case .replaceAllCreating(let base, let patch, _, _):
      let list = base + [try checked(patch.applying(to: try await fetched()))]
      sending(.reminders(list))
      try await device.replaceAllReminders(list)
      called("replaceAllReminders")
    case .setAllContacts(let planned):
      // No short name goes out as none, as the watch's own contacts have it, not as the empty
      // one (plans compare the two as the same).
      let contacts = planned.map { $0.shortName == "" ? Contact(name: $0.name, phoneNum: $0.phoneNum, shortName: nil) : $0 }
      sending(.contacts(contacts))
      try await device.setAllContacts(contacts)
      called("setAllContacts")
    case .setEmergencyContacts(let emergency):
      sending(.emergency(emergency))
      try await device.setEmergencyContacts(emergency.contacts, sosOn: emergency.isSosOn)
      called("setEmergencyContacts")
    }
  }
}
