import Foundation
import TSModel

/// The id of a watch-side event as the device that reported it numbers its events: opaque to
/// callers, kept only to resume after it (`Device.listen(to:after:_:)`). The simulator's ids are
/// its journal's sequence numbers (`17`), a bridge's are its event ids (`BOOT-SEQUENCE`).
public struct DeviceEventID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
  /// The id as the device wrote it.
  public var rawValue: String
  /// The id `rawValue`.
  public init(rawValue: String) { self.rawValue = rawValue }
  /// The id `rawValue`.
  public init(_ rawValue: String) { self.rawValue = rawValue }
  public var description: String { rawValue }

  /// An id no device writes, so a listener resuming after it is given every event the device
  /// still keeps: the simulator its whole journal, a bridge every event its log holds (an id
  /// from no start of it, docs/bridge-protocol.md). What a monitor asks of a watch it waited for
  /// and never listened to before.
  public static let everything = DeviceEventID("everything")

  /// Whether this id and `other` are ids of two starts of a bridge (`BOOT-SEQUENCE` with
  /// different BOOTs, docs/bridge-protocol.md "Events"): the bridge was restarted between them.
  public func isOfAnotherStart(than other: DeviceEventID) -> Bool {
    let mine = rawValue.split(separator: "-", maxSplits: 1), theirs = other.rawValue.split(separator: "-", maxSplits: 1)
    guard mine.count == 2, theirs.count == 2, Int(mine[1]) != nil, Int(theirs[1]) != nil else { return false }
    return mine[0] != theirs[0]
  }
}

extension ListenerReport {
  /// Why the events between `after` and `before` of a `missed` report cannot be had again, in
  /// words: the bridge was restarted between them (what happened on the watch while none ran is
  /// kept nowhere: the SDK keeps no history) or the simulated watch reset, or the device no
  /// longer holds them, or something on the network dropped them each time. `restarted` tells
  /// the first, whose advice is not the network.
  public static func missedCause(after: DeviceEventID, before: DeviceEventID) -> (text: String, restarted: Bool) {
    after.isOfAnotherStart(than: before)
      ? ("the bridge in front of the watch was restarted — its app or the phone restarted — or the simulated watch was reset, and what happened on "
         + "the watch in between is kept nowhere", true)
      : ("the bridge (or the simulated watch) keeps only its newest events and no longer holds them, or something on the network dropped them each time", false)
  }
}

/// A watch-side event as a listener hears it (`Device.listen(to:after:_:)`).
public struct DeviceEvent: Hashable, Sendable {
  /// What happened on the watch; also names the listener (the SDK's registration) that hears it.
  public enum Kind: String, Hashable, Sendable, CaseIterable {
    /// `registerContactsDidChangedBlock:`: the regular contacts changed; `contacts` is the new list.
    case contactsChanged
    /// `registerEmergencyContactsDidChangedBlock:`: the emergency list changed; `contacts` is the new list.
    case emergencyContactsChanged
    /// `registerSOSRequestBlock:`: the wearer pressed SOS.
    case sosRequested
  }

  /// The device's id of the event; `nil` where the device does not number its events (it can
  /// then not resume after it).
  public var id: DeviceEventID?
  /// What happened.
  public var kind: Kind
  /// The new list, for the two contact kinds.
  public var contacts: [Contact]?
  /// When it happened, as the watch or the bridge in front of it recorded it (the simulator's
  /// journal entry, a bridge event's `time`); `nil` where the device does not say (the SDK's own
  /// listener blocks carry no time), and the hearer's clock is then the best there is. An event
  /// replayed after an outage keeps the time it happened, not the time it was heard.
  public var time: Date?

  /// An event of `kind` with `id`, that happened at `time` when known.
  public init(id: DeviceEventID?, kind: Kind, contacts: [Contact]? = nil, time: Date? = nil) {
    self.id = id
    self.kind = kind
    self.contacts = contacts
    self.time = time
  }
}

/// What a listener registered with `Device.listen(to:after:_:)` is told.
public enum ListenerReport: Hashable, Sendable {
  /// Where this listener starts: the newest event the device held when it registered without a
  /// resume point. A caller that keeps it and later listens `after:` it misses nothing that
  /// happened since, even if it is killed before it heard a single event. Sent only by devices
  /// that can resume: once, before any event, by a listener registered without a resume point;
  /// through a bridge also each time its stream is opened (again) with one — where the bridge's
  /// replay starts, after a `missed` when that is in another start of the bridge.
  case resumePoint(DeviceEventID)
  /// A watch-side event, in the order the watch reported them.
  case event(DeviceEvent)
  /// The listener for `kind` failed: 2004 where the platform never reports it (sent once), any
  /// other error when the device lost its way of hearing events (the caller reconnects).
  case failed(DeviceEvent.Kind, DeviceError)
  /// Events numbered after `after` and before `before` never arrived and cannot be had again:
  /// the device (a bridge) no longer holds them, or something on the way dropped them each time
  /// they were asked for. What they were is not known — an SOS among them was not heard — so a
  /// caller says so (docs/bridge-protocol.md "Events").
  case missed(after: DeviceEventID, before: DeviceEventID)
  /// The way events come (a bridge's event stream) keeps breaking — refused, cut or silent, time
  /// after time — so events are not being heard (an SOS among them not until it holds again);
  /// the device keeps reopening it. Sent once per trouble, with why, until `resumed`.
  case interrupted(String)
  /// After `interrupted`, a stream brings events again: they are heard from now (what was
  /// missed is replayed), but the trouble is not over until it holds (`resumed`); breaking
  /// before that, it is `interrupted` again.
  case reopened
  /// Events are heard again after `interrupted` (what was missed meanwhile is then replayed).
  case resumed
}

extension Device {
  /// Listens for the events of `kinds` with the SDK's three listeners (`listenThroughSDKListeners`).
  /// Devices that keep their events numbered (the simulator's journal, a bridge's event log)
  /// replace this with one that resumes.
  @discardableResult
  public func listen(to kinds: Set<DeviceEvent.Kind>, after lastHandled: DeviceEventID?,
                     _ handler: @escaping @Sendable (ListenerReport) -> Void) async -> Bool {
    await listenThroughSDKListeners(to: kinds, handler)
  }

  /// Listens for the events of `kinds` with the SDK's three listeners (`registerContactsDidChange`,
  /// `registerEmergencyContactsDidChange`, `registerSOSRequest`); events carry no id, as the SDK
  /// keeps no history. Always hears the watch (`true`).
  @discardableResult
  public func listenThroughSDKListeners(to kinds: Set<DeviceEvent.Kind>, _ handler: @escaping @Sendable (ListenerReport) -> Void) async -> Bool {
    if kinds.contains(.contactsChanged) {
      await registerContactsDidChange { result in
        switch result {
        case .success(let contacts): handler(.event(DeviceEvent(id: nil, kind: .contactsChanged, contacts: contacts)))
        case .failure(let error): handler(.failed(.contactsChanged, error))
        }
      }
    }
    if kinds.contains(.emergencyContactsChanged) {
      await registerEmergencyContactsDidChange { result in
        switch result {
        case .success(let contacts): handler(.event(DeviceEvent(id: nil, kind: .emergencyContactsChanged, contacts: contacts)))
        case .failure(let error): handler(.failed(.emergencyContactsChanged, error))
        }
      }
    }
    if kinds.contains(.sosRequested) {
      await registerSOSRequest { error in
        handler(error.map { .failed(.sosRequested, $0) } ?? .event(DeviceEvent(id: nil, kind: .sosRequested)))
      }
    }
    return true
  }
}
