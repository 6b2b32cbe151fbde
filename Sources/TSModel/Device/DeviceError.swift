/// An error from a watch call, carrying the SDK's error domain and code (docs/platforms.md "Errors").
///
/// Messages are the SDK's English texts where the SDK has one (e.g. 3002 "Start time must be
/// earlier than end time"). Storage problems of the simulated watch use the `simulator` domain.
public struct DeviceError: Error, Hashable, Codable, Sendable, CustomStringConvertible {
  /// The SDK's `NSError` domain.
  public var domain: Domain
  /// The SDK's `TSErrorCode` (or a vendor code such as FitCloud's 70001).
  public var code: TSErrorCode
  /// Readable message (the SDK's `NSLocalizedDescriptionKey` text).
  public var message: String

  /// An error in `domain` with SDK `code` and readable `message`.
  public init(_ domain: Domain, _ code: TSErrorCode, _ message: String) {
    self.domain = domain
    self.code = code
    self.message = message
  }

  /// `message (domain code)`, e.g. `Custom reminders exceed limit (com.topstepcomkit.reminder 3004)`.
  public var description: String { "\(message) (\(domain.rawValue) \(code.rawValue))" }

  /// SDK error domains (TSError.h strings, read from the binary; docs/platforms.md "Errors").
  public struct Domain: RawRepresentable, Hashable, Codable, Sendable {
    /// The domain string, e.g. `com.topstepcomkit.reminder`.
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `com.topstepcomkit.reminder`: reminder calls.
    public static let reminder = Domain(rawValue: "com.topstepcomkit.reminder")
    /// `com.topstepcomkit.contact`: contact and emergency-contact calls.
    public static let contact = Domain(rawValue: "com.topstepcomkit.contact")
    /// `com.topstepcomkit.setting`: Npk emergency-contact and SOS paths (docs/platforms.md "Contacts").
    public static let setting = Domain(rawValue: "com.topstepcomkit.setting")
    /// `com.topstepcomkit.bleConnect`: link errors (not connected, request cancelled by disconnect).
    public static let bleConnect = Domain(rawValue: "com.topstepcomkit.bleConnect")
    /// tsapply's own domain for the simulated watch's storage (unreadable or corrupted state file, lock).
    public static let simulator = Domain(rawValue: "tsapply.simulator")
    /// The bridge protocol's own refusals (the HTTP status as code, docs/bridge-protocol.md
    /// "Status codes"): each means nothing reached the watch.
    public static let bridge = Domain(rawValue: "tsapply.bridge")
  }
}

/// The SDK's `TSErrorCode` values used on reminder and contact paths (TSErrorEnum.h; docs/platforms.md "Errors").
public struct TSErrorCode: RawRepresentable, Hashable, Codable, Sendable {
  /// The numeric code, e.g. 2004.
  public var rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  /// The code `rawValue` (unlabelled form of `init(rawValue:)`).
  public init(_ rawValue: Int) { self.rawValue = rawValue }

  /// 1001 `eTSErrorUnknown`; tsapply also wraps non-device errors during apply with it.
  public static let unknown = TSErrorCode(1001)
  /// SDK configuration error; the simulated watch uses it for bad simulation settings
  /// (`TSAPPLY_DEVICE`, `TSAPPLY_SIM_LATENCY`, `TSAPPLY_SIM_FAULT`).
  public static let sdkConfigError = TSErrorCode(1004)
  /// 2001 `eTSErrorNotReady` (Fw: "Reminder module released").
  public static let notReady = TSErrorCode(2001)
  /// 2003 `eTSErrorUnConnected`: device not connected (the simulated watch after a disconnect).
  public static let unConnected = TSErrorCode(2003)
  /// "暂不支持此功能": the platform does not implement the operation.
  public static let notSupport = TSErrorCode(2004)
  /// 2005 `eTSErrorNoSpace`: not enough space on the device.
  public static let noSpace = TSErrorCode(2005)
  /// 2006 `eTSErrorIsBusy`: device busy; the simulated watch uses it when its lock file fails.
  public static let isBusy = TSErrorCode(2006)
  /// Empty or nil parameter ("参数不存在"); also Fit's "custom reminders full".
  public static let invalidParam = TSErrorCode(3001)
  /// Reminder validation failure.
  public static let paramError = TSErrorCode(3002)
  /// Size error: custom limit exceeded, no free reminder ID, contact too long.
  public static let paramSizeError = TSErrorCode(3004)
  /// Data get failed; Npk "Reminder with ID %@ not found".
  public static let dataGetFailed = TSErrorCode(4001)
  /// The device rejected a set.
  public static let dataSetFailed = TSErrorCode(4002)
  /// 4003 `eTSErrorDataFormatError`; the simulated watch uses it for a corrupted or foreign state file.
  public static let dataFormatError = TSErrorCode(4003)
  /// Fw "reminder not found".
  public static let dataIsEmpty = TSErrorCode(4004)
  /// Command timeout.
  public static let timeout = TSErrorCode(6001)
  /// 9309 `ConnectionLost` (`TSBleConnectionError`).
  public static let connectionLost = TSErrorCode(9309)
  /// "连接已断开，请求被取消": pending requests fail with this on disconnect.
  public static let requestCancelledByDisconnect = TSErrorCode(9310)
  /// FitCloud: more favourite contacts than the watch holds.
  public static let fitCloudContactLimit = TSErrorCode(70001)
}

extension DeviceError {
  /// Codes that say the watch could not be reached or was busy, not that it refused what was
  /// asked: 2001 not ready, 2003 not connected, 2006 busy, and the link's errors — 6001 timeout,
  /// 6002–6008 transmission (interrupted, interference, packet loss, protocol mismatch, reset,
  /// overflow, channel busy), 9001–9702 Bluetooth connection (9309 connection lost, 9310
  /// request cancelled by a disconnect) (docs/platforms.md "Errors"). Trying again later can
  /// succeed.
  public static func isTransient(_ code: TSErrorCode) -> Bool {
    switch code.rawValue {
    case 2001, 2003, 2006, 6001...6008, 9001...9702: true
    default: false
    }
  }

  /// Whether trying the same call again later can succeed (`isTransient(_:)`, outside the
  /// simulator's storage domain: a corrupted state file stays corrupted, a lock file that cannot
  /// be opened stays so). In that domain only 2003 is: the simulated watch's state file was there
  /// when it was opened and is gone now (moved away), the simulator's watch out of reach, which
  /// may come back. Every other error — 2004 unsupported, 300x validation, 4002 rejected, 3004
  /// limits, 1004 configuration — is final: the same call gets the same answer.
  public var isTransient: Bool {
    Self.isTransient(code) && (domain != .simulator || code == .unConnected)
  }

  /// Whether a code says the watch refused the call or that it was never sent: 1002–1004 (SDK
  /// set-up), 2001–2006 (not ready, battery, not connected, unsupported, no space, busy),
  /// 3001–3004 (a parameter), 4001–4004 (the watch's data: refused, not found), 70001 (a limit).
  /// docs/platforms.md "Errors".
  public static func isRefusal(_ code: TSErrorCode) -> Bool {
    switch code.rawValue {
    case 1002...1004, 2001...2006, 3001...3004, 4001...4004, 70001: true
    default: false
    }
  }

  /// Whether a write answered with this error may still have reached the watch: every code
  /// that is not a refusal (`isRefusal`) — the link and transmission errors (6001 timeout,
  /// 6002–6008, 9001–9702 such as 9309 and 9310), 7001 cancelled, 1001 unknown, and any code
  /// tsapply does not know — outside the simulator's storage domain and the bridge protocol's
  /// refusals. Such a write is read back, never repeated (docs/apply.md "When a write's answer
  /// is lost").
  public var mayHaveTakenEffect: Bool {
    domain != .simulator && domain != .bridge && !Self.isRefusal(code)
  }
}
