import Foundation
import TSDevice
import TSModel

/// What a bridge hears from one watch (contact changes, emergency-contact changes, SOS), fed
/// into that watch's `EventLog`, kept alive across the watch's reconnects.
///
/// The SDK's listeners die with the Bluetooth connection (docs/platforms.md "Listeners"). Two
/// layers keep a bridge hearing the watch after a reconnect, each once:
/// - over the vendor SDK, `SDKDevice`'s `SDKListeners` registers the SDK's blocks again on every
///   connection, once; the device's listeners never report the drop;
/// - a device that reports the drop (a listener failing with anything but 2004: the simulator's
///   `reconnect@N`, docs/device.md) is listened to again here, resuming after the last event
///   logged, so an SOS pressed meanwhile is logged too. One drop registers once, however many
///   listeners report it (only the current registration's reports count), and the event log
///   gets each event once.
///
/// A 2004 is the platform refusing the listener for good: logged once per listener (sent at the
/// start of every stream), never registered again.
final class WatchListening: @unchecked Sendable {
  let device: any Device
  let log: EventLog
  /// The current registration (its reports count, the others' are ignored), the id of the last
  /// event logged (to resume after), the listeners refused, and the waits between registrations.
  private let state: Locked<State>

  private struct State: Sendable {
    var registration = 0
    var lastEvent: DeviceEventID?
    var refused: Set<DeviceEvent.Kind> = []
    var backoff = Backoff(WatchListening.again)
  }

  /// Waits before registering again after a drop: at once the first time (jitter aside), growing
  /// only while drops come with no event between them (a watch that cannot be read at all).
  static let again = Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(2))

  /// The bridge's clock: when an event was heard, for one whose device gives no time.
  let now: @Sendable () -> Date

  init(device: any Device, log: EventLog, now: @escaping @Sendable () -> Date = { Date() }) {
    self.device = device
    self.log = log
    self.now = now
    state = Locked(State())
  }

  /// Registers for every kind, as registration 1.
  func start() async {
    let registration = state.update { state -> Int in
      state.registration += 1
      return state.registration
    }
    await listen(as: registration)
  }

  private func listen(as registration: Int) async {
    let after = state.value.lastEvent
    await device.listen(to: Set(DeviceEvent.Kind.allCases), after: after) { [self] report in
      heard(report, registration: registration)
    }
  }

  private func heard(_ report: ListenerReport, registration: Int) {
    switch report {
    case .resumePoint(let id):
      state.mutate { state in
        if state.registration == registration, state.lastEvent == nil { state.lastEvent = id }
      }
    case .event(let event):
      let current = state.update { state -> Bool in
        guard state.registration == registration else { return false }
        if let id = event.id { state.lastEvent = id }
        state.backoff.reset()
        return true
      }
      guard current else { return }
      // When the watch says it happened, else now: heard from the watch this moment.
      let time = InternetTime.text(event.time ?? now())
      switch event.kind {
      case .contactsChanged: log.append(BridgeEvent(type: .contactsChanged, contacts: event.contacts ?? [], time: time))
      case .emergencyContactsChanged: log.append(BridgeEvent(type: .emergencyContactsChanged, contacts: event.contacts ?? [], time: time))
      case .sosRequested: log.append(BridgeEvent(type: .sosRequested, time: time))
      }
    case .missed, .interrupted, .reopened, .resumed:
      // A watch's own device resumes from its journal, which holds every event: nothing to pass on.
      break
    case .failed(let kind, let error) where error.code == .notSupport:
      guard state.update({ $0.refused.insert(kind).inserted }) else { return }
      log.refuse(ListenerRefusal(listener: ListenerRefusal.Listener(kind), error: WireError(error)))
    case .failed:
      // The listeners were dropped: the first report of this registration registers again.
      let next = state.update { state -> (Int, Duration)? in
        guard state.registration == registration else { return nil }
        state.registration += 1
        return (state.registration, state.backoff.next())
      }
      guard let (registration, wait) = next else { return }
      Task {
        try? await Task.sleep(for: wait)
        await listen(as: registration)
      }
    }
  }
}

extension ListenerRefusal.Listener {
  /// The listener that hears events of `kind`.
  public init(_ kind: DeviceEvent.Kind) {
    switch kind {
    case .contactsChanged: self = .contacts
    case .emergencyContactsChanged: self = .emergencyContacts
    case .sosRequested: self = .sos
    }
  }

  /// The kind of event this listener hears.
  public var eventKind: DeviceEvent.Kind {
    switch self {
    case .contacts: .contactsChanged
    case .emergencyContacts: .emergencyContactsChanged
    case .sos: .sosRequested
    }
  }
}
