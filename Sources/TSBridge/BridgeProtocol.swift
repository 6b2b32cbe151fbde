import Foundation
import TSModel

/// Constants of bridge protocol v1 (docs/bridge-protocol.md).
public enum BridgeProtocol {
  /// The major version this build speaks; paths start with `/v1/`.
  public static let major = 1
  /// The full version sent in the `TSApply-Protocol` header of every request and response.
  /// 1.1: a request without the header is refused (400), null results are `{"result": null}`,
  /// 414/431/503 and the connection limits; 1.2: a call's number under its lease
  /// (`CallRequest.sequence`); 1.3: a 409 for a live lease says when it expires
  /// (`Answer.expiresIn`); 1.4: a stream opened with `Last-Event-ID` starts with a `replayFrom`
  /// event; 1.5: a sealed `heartbeat` every 15 s says the newest event; 1.6: a lease request's
  /// `attempt`, and a new lease lives 15 s until used (docs/bridge-protocol.md "Versioning").
  public static let version = "1.6"

  /// The minor version of a `MAJOR.MINOR` text, or `nil` when it is not one.
  public static func minor(of version: String) -> Int? {
    guard major(of: version) != nil else { return nil }
    return version.split(separator: ".").last.flatMap { Int($0) }
  }
  /// Header carrying the protocol version, `MAJOR.MINOR`.
  public static let versionHeader = "TSApply-Protocol"
  /// Header carrying a GET request's seal (base64 of a sealed empty plaintext).
  public static let sealHeader = "TSApply-Seal"
  /// Media type of a sealed body.
  public static let sealedType = "application/vnd.tsapply.sealed"
  /// Media type of a plain (unsealed) error body: only 400 for a bad version, 401, 404 before
  /// authentication, and 413 are sent unsealed, and they carry no watch data.
  public static let plainType = "application/json"
  /// Media type of the events stream.
  public static let eventStreamType = "text/event-stream"
  /// Largest request body a bridge accepts, in bytes (sealed); more is 413.
  public static let maxBodyBytes = 1 << 20
  /// How far a request's timestamp may be from the bridge's clock, in seconds.
  public static let timeWindowSeconds = 30
  /// Most event streams a bridge keeps open at once (over all watches); one more is refused
  /// with 503, so streams never take the connections calls need.
  public static let maxEventStreams = 32
  /// Longest lease a bridge grants, in seconds; `timeToLive` must be 1…this.
  public static let maxLeaseSeconds = 3600
  /// Error domain of the protocol's own errors; their codes are the HTTP statuses (400, 401, …).
  public static let errorDomain = DeviceError.Domain.bridge

  /// The major version of a `MAJOR.MINOR` text, or `nil` when it is not one.
  public static func major(of version: String) -> Int? {
    let parts = version.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 2, let major = Int(parts[0]), Int(parts[1]) != nil, major >= 0 else { return nil }
    return major
  }
}

/// A watch as `GET /v1/watches` lists it.
public struct WatchInfo: Codable, Hashable, Sendable {
  /// Its Bluetooth MAC, `AA:BB:CC:DD:EE:FF` (upper-case hex): stable, never a phone-local UUID.
  public var id: String
  /// Its platform: `npk`, `fit`, `fit-basic`, `fw` (or `default` for a simulated watch).
  public var platform: String
  /// `connected` or `disconnected`.
  public var connection: ConnectionState
  /// What the platform stores and supports (the engine's capability table shape).
  public var capabilities: DeviceCapabilities

  /// A listing entry.
  public init(id: String, platform: String, connection: ConnectionState, capabilities: DeviceCapabilities) {
    self.id = id
    self.platform = platform
    self.connection = connection
    self.capabilities = capabilities
  }
}

/// Whether the phone is connected to the watch.
public enum ConnectionState: String, Codable, Hashable, Sendable {
  /// Calls reach the watch.
  case connected
  /// Calls fail with 2003 until it reconnects.
  case disconnected
}

/// The body of `GET /v1/watches`.
public struct WatchList: Codable, Hashable, Sendable {
  /// The bridge's id (as in the pairing string).
  public var bridge: String
  /// The protocol version the bridge speaks (`1.0`).
  public var protocolVersion: String
  /// Every watch the bridge knows.
  public var watches: [WatchInfo]

  /// A listing.
  public init(bridge: String, protocolVersion: String = BridgeProtocol.version, watches: [WatchInfo]) {
    self.bridge = bridge
    self.protocolVersion = protocolVersion
    self.watches = watches
  }
}

/// An error on the wire: `{"domain": …, "code": …, "message": …}`; the SDK's domains and codes
/// pass through unchanged, the protocol's own use `tsapply.bridge` with the HTTP status.
public struct WireError: Codable, Hashable, Sendable {
  /// NSError domain, e.g. `com.topstepcomkit.reminder`, or `tsapply.bridge`.
  public var domain: String
  /// The code, e.g. 2004.
  public var code: Int
  /// Readable message.
  public var message: String

  /// The wire form of `error`.
  public init(_ error: DeviceError) {
    domain = error.domain.rawValue
    code = error.code.rawValue
    message = error.message
  }

  /// A protocol error with HTTP `status` and `message`.
  public init(status: Int, _ message: String) {
    domain = BridgeProtocol.errorDomain.rawValue
    code = status
    self.message = message
  }

  /// The device error it carries.
  public var deviceError: DeviceError { DeviceError(.init(rawValue: domain), TSErrorCode(code), message) }
}

/// The body of an answer: `{"result": …}` or `{"error": {…}}` (with `holder` and `expiresIn`
/// for a lease refused).
public struct Answer<Result: Codable & Sendable>: Codable, Sendable {
  /// The method's result (`null` for the set calls).
  public var result: Result?
  /// The error, when the call or request failed.
  public var error: WireError?
  /// Who holds the lease, on 409.
  public var holder: LockHolder?
  /// Seconds (rounded up) the lease of `holder` lives unless renewed, on 409 (protocol 1.3;
  /// `nil` from an earlier bridge).
  public var expiresIn: Int?

  /// A success carrying `result`.
  public init(result: Result?) {
    self.result = result
  }

  /// A failure carrying `error` (and the lease's `holder` and the seconds it `expiresIn` on 409).
  public init(error: WireError, holder: LockHolder? = nil, expiresIn: Int? = nil) {
    self.error = error
    self.holder = holder
    self.expiresIn = expiresIn
  }

  enum CodingKeys: String, CodingKey { case result, error, holder, expiresIn }

  /// `{"result": …}` — with `"result": null` for a success without one — or `{"error": …}`
  /// (and `"holder"`, `"expiresIn"` on 409).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    if let error {
      try container.encode(error, forKey: .error)
      try container.encodeIfPresent(holder, forKey: .holder)
      try container.encodeIfPresent(expiresIn, forKey: .expiresIn)
    } else {
      try container.encode(result, forKey: .result)
    }
  }
}

/// Nothing: the result of a set call (`null` on the wire).
public struct Empty: Codable, Hashable, Sendable {
  /// Nothing.
  public init() {}
}

/// The body of `POST /v1/watches/{id}/lease`: take (no `token`) or renew (`token`) a lease.
public struct LeaseRequest: Codable, Hashable, Sendable {
  /// Who asks, shown to whoever is refused.
  public var holder: LockHolder
  /// Seconds the lease lives from now, 1…`BridgeProtocol.maxLeaseSeconds`.
  public var timeToLive: Int
  /// The token of the lease to renew; `nil` to take a new one.
  public var token: String?
  /// Which of its holder's requests for one new lease this is, from 1 (protocol 1.6): a later
  /// attempt of the same holder and `requestID` takes over the lease an earlier one was
  /// granted, whose answer it never got (docs/bridge-protocol.md "Leases"); `nil` from a 1.5 client.
  public var attempt: Int?
  /// An id the client draws for one new lease it asks for, the same on each of its attempts
  /// (protocol 1.6): once that lease is released or given up, a request of this id arriving
  /// late (held back on the way) is refused, not granted to nobody.
  public var requestID: String?

  /// A lease request.
  public init(holder: LockHolder, timeToLive: Int, token: String? = nil, attempt: Int? = nil, requestID: String? = nil) {
    self.holder = holder
    self.timeToLive = timeToLive
    self.token = token
    self.attempt = attempt
    self.requestID = requestID
  }
}

/// The body of `DELETE /v1/watches/{id}/lease`: `{"token"}` gives a lease back; `{"requestID"}`
/// (protocol 1.6) gives up a lease asked for under that id whose answer never came: the lease
/// it may have been granted ends, and its requests arriving later are refused.
public struct LeaseRelease: Codable, Hashable, Sendable {
  /// The token of the lease to give back.
  public var token: String?
  /// The `LeaseRequest.requestID` of a lease given up without its token.
  public var requestID: String?
  /// A release of `token`.
  public init(token: String) { self.token = token }
  /// Giving up the lease asked for under `requestID`.
  public init(givingUp requestID: String) { self.requestID = requestID }
}

/// One entry of the events stream (the plaintext of a sealed event).
public struct BridgeEvent: Codable, Hashable, Sendable {
  /// What happened.
  public enum Kind: String, Codable, Hashable, Sendable {
    /// The regular contacts changed on the watch; `contacts` holds the new list.
    case contactsChanged
    /// The emergency contacts changed on the watch; `contacts` holds the new list.
    case emergencyContactsChanged
    /// The wearer triggered SOS.
    case sosRequested
    /// The phone's link to the watch changed; `connection` holds the new state.
    case connectionState
    /// A listener the platform refused; `refusal` says which and the SDK's error (sent without
    /// an id at the start of every stream).
    case listenerRefused
    /// Where a stream opened without `Last-Event-ID` starts: its id is the newest event the
    /// bridge held then (`BOOT-0` when none), so a client that keeps it can resume from there
    /// and miss nothing that happened since; no fields.
    case resumePoint
    /// First on a stream opened with `Last-Event-ID` (1.4): its id is the event just before the
    /// first one sent (`BOOT-0` when the bridge holds every event of its start, the newest when
    /// there is nothing to send), so a client can tell an event missing at the very start —
    /// after a first start's `everything`, or a bridge's restart — from none; no fields.
    case replayFrom
    /// Sent without an id every `every` seconds on each stream (1.5): `newest` is the id of the
    /// newest event the bridge holds (`BOOT-0` when none), every event up to it already sent on
    /// this stream. A client that has not heard `newest` lost events on the way, even when no
    /// later event comes to show the gap; one that hears no sealed message for three `every`
    /// takes the stream for silenced (keep-alive comments are not sealed).
    case heartbeat
  }

  /// What happened.
  public var type: Kind
  /// The new list, for the two contact kinds.
  public var contacts: [Contact]?
  /// The new state, for `connectionState`.
  public var connection: ConnectionState?
  /// Which listener was refused and why, for `listenerRefused`.
  public var refusal: ListenerRefusal?
  /// When the bridge heard the event from the watch (or when the watch says it happened, where
  /// it says), ISO 8601 UTC with milliseconds (`InternetTime`), so an event replayed after an
  /// outage keeps when it happened. Optional (protocol 1.1 bridges before it send none): a client
  /// takes an absent or unreadable `time` as unknown and never drops the event for it.
  public var time: String?
  /// For `heartbeat`: the id of the newest event the bridge holds (`BOOT-SEQUENCE`).
  public var newest: String?
  /// For `heartbeat`: seconds until the next one.
  public var every: Double?

  /// An event.
  public init(type: Kind, contacts: [Contact]? = nil, connection: ConnectionState? = nil, refusal: ListenerRefusal? = nil,
              time: String? = nil, newest: String? = nil, every: Double? = nil) {
    self.type = type
    self.contacts = contacts
    self.connection = connection
    self.refusal = refusal
    self.time = time
    self.newest = newest
    self.every = every
  }

  enum CodingKeys: String, CodingKey { case type, contacts, connection, refusal, time, newest, every }

  /// Reads an event; a `time` that is not a string is taken as absent (an SOS is never lost to
  /// an optional field).
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    type = try container.decode(Kind.self, forKey: .type)
    contacts = try container.decodeIfPresent([Contact].self, forKey: .contacts)
    connection = try container.decodeIfPresent(ConnectionState.self, forKey: .connection)
    refusal = try container.decodeIfPresent(ListenerRefusal.self, forKey: .refusal)
    time = try? container.decodeIfPresent(String.self, forKey: .time)
    newest = try? container.decodeIfPresent(String.self, forKey: .newest)
    every = try? container.decodeIfPresent(Double.self, forKey: .every)
  }

  /// When it happened, from `time`; `nil` when absent or not a time.
  public var date: Date? { time.flatMap(InternetTime.date) }
}
