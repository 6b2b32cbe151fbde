import TSModel

extension DeviceError.Domain {
  /// FitCloudKit's own errors (e.g. 70001, "at most 10 favorite contacts"), which the Fit SDK
  /// passes through unchanged (docs/platforms.md "Contacts"). The real domain string lives in the
  /// closed FitCloudKit binary; this one is tsapply's stand-in.
  public static let fitCloud = DeviceError.Domain(rawValue: "com.fitcloud.kit")
}

extension DeviceError {
  /// 2004 "not supported" for `operation` in `domain` (docs/platforms.md "Errors", eTSErrorNotSupport).
  static func notSupported(_ domain: Domain, _ operation: String) -> DeviceError {
    DeviceError(domain, .notSupport, "\(operation) is not supported on this platform")
  }

  /// An error in the reminder domain, `com.topstepcomkit.reminder`.
  static func reminder(_ code: TSErrorCode, _ message: String) -> DeviceError {
    DeviceError(.reminder, code, message)
  }

  /// An error of the simulated watch's storage or settings (`tsapply.simulator`).
  static func simulator(_ code: TSErrorCode, _ message: String) -> DeviceError {
    DeviceError(.simulator, code, message)
  }
}
