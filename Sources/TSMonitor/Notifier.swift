import Foundation
import TSHTTPClient
import TSModel

/// Something that tells a person about an SOS: runs a command, posts to a webhook. Each
/// notifier gets every SOS event and is retried with backoff until it succeeds (`Delivery`).
public protocol Notifier: Sendable {
  /// Names this notifier stably across restarts, so the outbox can record that it succeeded
  /// (no secret in it: it is written to disk).
  var key: String { get }
  /// How it is named to people (no secret in it either).
  var name: String { get }
  /// Attempt number `attempt` (1 for the first, counted across restarts) to deliver the event
  /// whose JSON is `body`; `nil` on success, else why not. Every attempt sends the same `body`.
  func deliver(id: String, body: String, attempt: Int) async -> String?
}

/// `--on-sos COMMAND`: runs the program directly, without a shell, with the event in its
/// environment and never on its command line (`CommandWords`, `ChildProcess`). Success is exit
/// status 0; a command that runs longer than `timeout` is killed and counts as a failure.
///
/// Environment: the monitor's own, plus `TSAPPLY_EVENT_JSON` (the whole event) and
/// `TSAPPLY_EVENT_<FIELD>` for each top-level field (`TSAPPLY_EVENT_ID`, `_KIND`, `_TIME`,
/// `_WATCH`, `_MESSAGE`, `_SEQUENCE`, …; text as it is, other values as JSON), and
/// `TSAPPLY_DELIVERY_ATTEMPT` (1 for the first attempt).
public struct CommandNotifier: Notifier {
  /// The words as split, the program first.
  public let words: [String]
  /// The program's absolute path, found when the notifier was made.
  public let path: String
  /// The environment every run starts from (the monitor's).
  public let baseEnvironment: [String: String]
  /// How long one run may take.
  public let timeout: Duration

  /// The notifier for `command` (split by `CommandWords`), its program looked up on `PATH` of
  /// `environment` (or relative to `currentDirectory` when it holds a `/`); `option` names it in errors.
  /// - Throws: `NotifierError` when the command cannot be split or its program is not found.
  public init(command: String, environment: [String: String], currentDirectory: String,
              timeout: Duration = .seconds(60), option: String = "--on-sos") throws(NotifierError) {
    do { words = try CommandWords.split(command) } catch { throw NotifierError("\(option): cannot split the command: \(error)") }
    guard let found = ChildProcess.resolve(words[0], searchPath: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
                                           currentDirectory: currentDirectory) else {
      throw NotifierError("\(option): no executable program '\(words[0])'"
        + (words[0].contains("/") ? "" : " on PATH") + " (the command runs without a shell; see docs/monitor.md)")
    }
    path = found
    baseEnvironment = environment
    self.timeout = timeout
  }

  public var key: String { "command " + SHA256Digest.hex(of: Array(words.joined(separator: "\0").utf8)).prefix(16) }
  public var name: String { "command \(words[0])" }

  /// The event's variables: `TSAPPLY_EVENT_JSON` and one per top-level field of `body`.
  public static func eventVariables(body: String) -> [String: String] {
    var variables = ["TSAPPLY_EVENT_JSON": body]
    guard case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)) else { return variables }
    for (key, value) in fields {
      let name = "TSAPPLY_EVENT_" + String(key.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
      if case .string(let text) = value { variables[name] = text } else { variables[name] = MonitorEvent.compact(value) }
    }
    return variables
  }

  /// The variable holding the attempt number.
  public static let attemptVariable = "TSAPPLY_DELIVERY_ATTEMPT"

  public func deliver(id: String, body: String, attempt: Int) async -> String? {
    var environment = baseEnvironment.merging(Self.eventVariables(body: body)) { _, event in event }
    environment[Self.attemptVariable] = String(attempt)
    switch await ChildProcess.run(path: path, arguments: words, environment: environment, timeout: timeout) {
    case .exited(0): return nil
    case .exited(let status): return "\(words[0]) exited with status \(status)"
    case .signalled(let signal): return "\(words[0]) was ended by signal \(signal)"
    case .timedOut: return "\(words[0]) ran longer than \(timeout) and was killed"
    case .notStarted(let reason): return "\(words[0]) could not be started: \(reason)"
    case .cancelled: return "the monitor is stopping"
    }
  }
}

/// `--webhook URL`: POSTs the event's JSON with `Content-Type: application/json`,
/// `X-Tsapply-Event-Id`, `X-Tsapply-Attempt` (1 for the first attempt; not signed) and
/// `X-Tsapply-Signature: sha256=<HMAC-SHA256 of the body>` (`WebhookSignature`), through the
/// project's HTTP client (`HTTPClient`, libcurl: no CPU while a slow receiver is awaited).
/// Success is a 2xx answer; redirects are not followed (the body would not reach where it was
/// signed for), so a 3xx is a failure like any other.
public struct WebhookNotifier: Notifier {
  /// Where to post.
  public let url: URL
  private let secret: [UInt8]
  /// How long one attempt may take.
  public let timeout: TimeInterval

  /// The notifier posting to `url` (http or https), signing with `secret`.
  /// - Throws: `NotifierError` for a URL that is not http(s) with a host, or an empty secret.
  public init(url text: String, secret: [UInt8], timeout: TimeInterval = 10) throws(NotifierError) {
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
          let host = url.host, !host.isEmpty else {
      throw NotifierError("--webhook expects an http:// or https:// URL with a host, got '\(text)'")
    }
    guard !secret.isEmpty else { throw NotifierError("the webhook secret is empty") }
    self.url = url
    self.secret = secret
    self.timeout = timeout
  }

  public var key: String { "webhook " + SHA256Digest.hex(of: Array(url.absoluteString.utf8)).prefix(16) }

  /// The URL without credentials, query or fragment (they may hold tokens).
  public var name: String {
    var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
    components?.user = nil
    components?.password = nil
    components?.query = nil
    components?.fragment = nil
    return "webhook " + (components?.string ?? url.host ?? "?")
  }

  /// The header carrying the attempt number.
  public static let attemptHeader = "X-Tsapply-Attempt"

  /// The most bytes of a receiver's answer read (its body is not used; a longer one is a failure).
  public static let maxAnswerBytes = 1 << 20

  public func deliver(id: String, body: String, attempt: Int) async -> String? {
    let request = HTTPClientRequest(method: "POST", url: url.absoluteString, headers: [
      ("Content-Type", "application/json"),
      ("X-Tsapply-Event-Id", id),
      (Self.attemptHeader, String(attempt)),
      (WebhookSignature.header, WebhookSignature.value(body: Array(body.utf8), secret: secret)),
      ("User-Agent", "tsapply-monitor"),
    ], body: Array(body.utf8), timeout: timeout, maxBodyBytes: Self.maxAnswerBytes, schemes: .httpAndHTTPS)
    do {
      let answer = try await HTTPClient.shared.send(request)
      return (200..<300).contains(answer.status) ? nil : "HTTP \(answer.status)"
    } catch {
      return error.description
    }
  }
}

/// A notifier cannot be set up (bad command, URL or secret).
public struct NotifierError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What is wrong, in one line.
  public var message: String
  /// An error saying `message`.
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}

extension WebhookNotifier {
  /// The secret in the file at `path` (`--webhook-secret-file`): `SecretFile.read`.
  /// - Throws: `NotifierError` when the file cannot be read, is over 4 KiB or holds no secret.
  public static func readSecret(path: String) throws(NotifierError) -> (secret: [UInt8], readableByOthers: Bool) {
    try SecretFile.read(path: path, what: "the webhook secret file")
  }
}

/// A secret kept in a file (`--webhook-secret-file`, `--serve-token-file`).
public enum SecretFile {
  /// The secret in the file at `path`: its bytes without one trailing line end, so
  /// `echo "$SECRET" > file` works; and whether people other than the owner may read the file
  /// (worth a warning: anyone who has it can forge events or read the page). `what` names the
  /// file in errors (`the webhook secret file`).
  /// - Throws: `NotifierError` when the file cannot be read, is over 4 KiB or holds no secret.
  public static func read(path: String, what: String) throws(NotifierError) -> (secret: [UInt8], readableByOthers: Bool) {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      throw NotifierError("cannot read \(what) \(path): no such file, or it is not a regular file")
    }
    guard info.st_size <= 4096, let data = FileManager.default.contents(atPath: path) else {
      throw NotifierError("cannot read \(what) \(path): unreadable, or larger than 4 KiB")
    }
    var bytes = Array(data)
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard !bytes.isEmpty else { throw NotifierError("\(what) \(path) is empty") }
    return (bytes, (info.st_mode & 0o077) != 0)
  }
}
