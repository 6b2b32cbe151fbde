import Foundation
import TSModel

/// How realistic a simulated watch is: link latency and injected faults.
///
/// Read from the environment by `SimulationOptions.init(environment:)`:
/// `TSAPPLY_SIM_NO_EMERGENCY_CONTACTS=1`, `TSAPPLY_SIM_LATENCY=CALL_MS,PACKET_MS` and
/// `TSAPPLY_SIM_FAULT=fail@N[:CODE]|lands-then-fails@N[:CODE]|disconnect@N|reconnect@N[,…]` (docs/device.md).
public struct SimulationOptions: Hashable, Sendable {
  /// Time one link call costs: a fixed part plus a part per 20-byte packet.
  public struct Latency: Hashable, Sendable {
    /// Milliseconds per call (request/response round trip).
    public var perCallMilliseconds: Int
    /// Milliseconds per packet moved (either direction).
    public var perPacketMilliseconds: Int

    /// A latency of `perCallMilliseconds` per call plus `perPacketMilliseconds` per packet.
    public init(perCallMilliseconds: Int, perPacketMilliseconds: Int) {
      self.perCallMilliseconds = perCallMilliseconds
      self.perPacketMilliseconds = perPacketMilliseconds
    }

    /// Nanoseconds a call moving `packets` packets takes: CALL_MS + PACKET_MS × packets, in
    /// milliseconds, times 1 000 000. Never traps: negative parts count as 0 and the total
    /// saturates at `UInt64.max` nanoseconds (values set in code are not range-checked).
    public func nanoseconds(packets: Int) -> UInt64 {
      let (perPackets, packetOverflow) = max(0, perPacketMilliseconds).multipliedReportingOverflow(by: max(0, packets))
      let (total, sumOverflow) = max(0, perCallMilliseconds).addingReportingOverflow(perPackets)
      guard !packetOverflow, !sumOverflow else { return .max }
      let (nanoseconds, overflow) = UInt64(total).multipliedReportingOverflow(by: 1_000_000)
      return overflow ? .max : nanoseconds
    }
  }

  /// A failure injected at the `call`-th link call (1-based) of one device instance; that call
  /// fails and has no effect, except `landsThenFails`, whose call takes effect first.
  public struct Fault: Hashable, Sendable {
    /// How the call fails.
    public enum Kind: Hashable, Sendable {
      /// The call fails with this code (default 6001 timeout) in the operation's domain.
      case fail(TSErrorCode)
      /// The connection drops: the call fails with 9310 and every later call with 2003.
      case disconnect
      /// The call takes effect on the watch, then its answer is lost: it fails with this code
      /// (default 6001 timeout), as a write whose answer a timeout or a dropped link cut off.
      case landsThenFails(TSErrorCode)
      /// The link drops and comes back at once: the call fails with 9310 and has no effect,
      /// later calls work, and every listener registered before is gone (the SDK's listeners
      /// die with the connection): the SDK-style handlers fall silent, `listen(to:after:_:)`
      /// listeners are told 9309 so their caller registers again.
      case reconnect
    }
    /// How the call fails.
    public var kind: Kind
    /// The 1-based number of the failing link call.
    public var call: Int

    /// A fault of `kind` at link call `call` (1-based).
    public init(_ kind: Kind, atCall call: Int) {
      self.kind = kind
      self.call = call
    }
  }

  /// The latency model; `nil` answers at once.
  public var latency: Latency?
  /// Injected faults, by call number.
  public var faults: [Fault]
  /// `false`: the watch does not support emergency contacts whatever its profile
  /// (`PlatformProfile.withoutEmergencyContacts()`).
  public var supportsEmergencyContacts: Bool

  /// Options with the given latency and faults (none by default).
  public init(latency: Latency? = nil, faults: [Fault] = [], supportsEmergencyContacts: Bool = true) {
    self.latency = latency
    self.faults = faults
    self.supportsEmergencyContacts = supportsEmergencyContacts
  }

  /// Environment variable for the latency model, `CALL_MS,PACKET_MS` (e.g. `40,8`).
  public static let latencyVariable = "TSAPPLY_SIM_LATENCY"
  /// Environment variable for fault injection, e.g. `fail@3`, `fail@2:4002`, `disconnect@5`,
  /// `lands-then-fails@4:9309`, `reconnect@2`.
  public static let faultVariable = "TSAPPLY_SIM_FAULT"
  /// Environment variable making the watch one without emergency-contact support: `1` (or `0`,
  /// empty: as its profile).
  public static let noEmergencyContactsVariable = "TSAPPLY_SIM_NO_EMERGENCY_CONTACTS"
  /// Accepted milliseconds for each part of `TSAPPLY_SIM_LATENCY` (up to one minute).
  public static let latencyRange = 0...60_000
  /// Accepted call numbers N in `TSAPPLY_SIM_FAULT` (1-based link calls of one process).
  public static let faultCallRange = 1...1_000_000
  /// Accepted error codes in `fail@N:CODE` (the SDK's codes are 1001–70001, docs/platforms.md "Errors").
  public static let faultCodeRange = 1...999_999

  /// Options from `TSAPPLY_SIM_LATENCY` and `TSAPPLY_SIM_FAULT`; unset or empty means none.
  /// - Throws: `DeviceError` (simulator domain, 1004) for a malformed value, quoting it.
  public init(environment: [String: String]) throws(DeviceError) {
    self.init()
    if let text = environment[Self.latencyVariable], !text.isEmpty {
      let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingSpaces) }
      let range = Self.latencyRange
      guard parts.count == 2, let call = parts[0], let packet = parts[1], range.contains(call), range.contains(packet) else {
        throw .simulator(.sdkConfigError, "\(Self.latencyVariable)='\(text)' is not CALL_MS,PACKET_MS (two whole numbers of milliseconds, \(range.lowerBound)–\(range.upperBound), e.g. 40,8)")
      }
      latency = Latency(perCallMilliseconds: call, perPacketMilliseconds: packet)
    }
    if let text = environment[Self.faultVariable], !text.isEmpty {
      for item in text.split(separator: ",") { faults.append(try Self.fault(item.trimmingSpaces, in: text)) }
    }
    switch environment[Self.noEmergencyContactsVariable] ?? "" {
    case "", "0": break
    case "1": supportsEmergencyContacts = false
    case let text:
      throw .simulator(.sdkConfigError, "\(Self.noEmergencyContactsVariable)='\(text)' is not 1 (a watch without emergency contacts) or 0")
    }
  }

  private static func fault(_ item: String, in text: String) throws(DeviceError) -> Fault {
    let bad = DeviceError.simulator(.sdkConfigError,
      "\(faultVariable)='\(text)': '\(item)' is not fail@N[:CODE], lands-then-fails@N[:CODE], disconnect@N or reconnect@N "
        + "(N a call number \(faultCallRange.lowerBound)–\(faultCallRange.upperBound), CODE \(faultCodeRange.lowerBound)–\(faultCodeRange.upperBound))")
    let halves = item.split(separator: "@", maxSplits: 1).map(String.init)
    guard halves.count == 2 else { throw bad }
    let target = halves[1].split(separator: ":", maxSplits: 1).map(String.init)
    guard let call = Int(target[0]), faultCallRange.contains(call) else { throw bad }
    switch (halves[0], target.count) {
    case ("disconnect", 1): return Fault(.disconnect, atCall: call)
    case ("reconnect", 1): return Fault(.reconnect, atCall: call)
    case ("fail", 1): return Fault(.fail(.timeout), atCall: call)
    case ("lands-then-fails", 1): return Fault(.landsThenFails(.timeout), atCall: call)
    case ("fail", 2), ("lands-then-fails", 2):
      guard let code = Int(target[1]), faultCodeRange.contains(code) else { throw bad }
      return Fault(halves[0] == "fail" ? .fail(TSErrorCode(code)) : .landsThenFails(TSErrorCode(code)), atCall: call)
    default: throw bad
    }
  }
}

extension Substring {
  var trimmingSpaces: String { trimmingCharacters(in: .whitespaces) }
}
