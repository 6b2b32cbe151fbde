import Foundation
import TSEngine
import TSManifest
import TSModel

/// Runs one operation over many watches through the engine, at most `parallelism` at once
/// (Terraform's `-parallelism`, default 10). Each watch is opened with `Engine.open`, given to
/// the operation with its merged manifest, and closed; one watch's failure (its manifest, its
/// device, its apply) never stops the others. Policy — locks, the safety gate, backups,
/// records — is the engine's, per watch.
///
/// ```swift
/// let runner = FleetRunner(engine: engine, parallelism: 10)
/// let results = await runner.run(loaded.members) { member, document, watch throws(EngineError) in
///   try await watch.plan(document)
/// }
/// ```
public struct FleetRunner: Sendable {
  /// Terraform's default number of operations at once.
  public static let defaultParallelism = 10

  /// The engine every watch is opened through.
  public var engine: Engine
  /// Most watches handled at once (at least 1).
  public var parallelism: Int
  /// Asked before each watch starts: once a stop is requested (Ctrl-C), no other watch starts.
  public var stop: any StopRequest
  /// Whether each watch's merged manifest, read as the watch starts, is kept as its member's
  /// `document` (`FleetMember.keep`): for a run whose plans are applied later from the same
  /// manifests (an interactive `apply --fleet`). Otherwise only a failed watch's is kept (for
  /// its report's source lines), so a run holds the manifests of the watches under way only.
  public var keepsManifests = false

  /// A runner opening watches through `engine`.
  public init(engine: Engine, parallelism: Int = FleetRunner.defaultParallelism, stop: any StopRequest = NoStopRequest(),
              keepsManifests: Bool = false) {
    self.engine = engine
    self.parallelism = max(1, parallelism)
    self.stop = stop
    self.keepsManifests = keepsManifests
  }

  /// Runs `operation` on every member, returning one result per member in their order.
  /// `progress` is told whenever a watch starts or finishes; `finished` gets each result as it
  /// comes (from the task that produced it).
  public func run<Outcome: Sendable>(
    _ members: [FleetMember],
    progress: @escaping @Sendable (FleetProgress) -> Void = { _ in },
    finished: @escaping @Sendable (Int, FleetResult<Outcome>) -> Void = { _, _ in },
    _ operation: @escaping @Sendable (FleetMember, ManifestDocument, Watch) async throws(EngineError) -> Outcome
  ) async -> [FleetResult<Outcome>] {
    let tracker = ProgressTracker(total: members.count, report: progress)
    var results: [FleetResult<Outcome>?] = Array(repeating: nil, count: members.count)
    await withTaskGroup(of: (Int, FleetResult<Outcome>).self) { group in
      var next = 0
      func start(_ index: Int) {
        let member = members[index]
        group.addTask { [engine, stop, keepsManifests] in
          (index, await Self.one(member, engine: engine, stop: stop, keeps: keepsManifests, tracker: tracker, operation))
        }
      }
      while next < min(parallelism, members.count) {
        start(next)
        next += 1
      }
      while let (index, result) = await group.next() {
        results[index] = result
        finished(index, result)
        if next < members.count {
          start(next)
          next += 1
        }
      }
    }
    return results.map { $0! }
  }

  private static func one<Outcome: Sendable>(
    _ member: FleetMember, engine: Engine, stop: any StopRequest, keeps: Bool, tracker: ProgressTracker,
    _ operation: @Sendable (FleetMember, ManifestDocument, Watch) async throws(EngineError) -> Outcome
  ) async -> FleetResult<Outcome> {
    let clock = ContinuousClock()
    let start = clock.now
    guard !stop.isRequested else { return FleetResult(member: member, outcome: .failure(.interrupted), elapsed: .zero) }
    tracker.started(member.name)
    defer { tracker.finished(member.name) }
    let outcome: Result<Outcome, FleetFailure>
    // Its manifests are read now and dropped when it is done (unless `keepsManifests`; a failed
    // watch's are kept for its report).
    let read = member.read()
    switch read.document {
    case .failure(let problem):
      outcome = .failure(.input(problem))
    case .success(let document):
      do throws(EngineError) {
        let watch = try await engine.open(member.device, mayCreate: false)
        // Its layers were chosen by the profile the fleet file declares: another platform's watch
        // gets nothing planned for it (a plan of the wrong layers would not be this watch's).
        if let problem = Self.profileMismatch(member, watch.capabilities.profile) {
          await watch.close()
          return FleetResult(member: member, outcome: .failure(.input(problem)), elapsed: clock.now - start)
        }
        do throws(EngineError) {
          let value = try await operation(member, document, watch)
          await watch.close()
          outcome = .success(value)
        } catch {
          await watch.close()
          throw error
        }
      } catch {
        outcome = .failure(.engine(error))
      }
    }
    if case .failure = outcome { member.keep(read) } else if keeps { member.keep(read) }
    return FleetResult(member: member, outcome: outcome, elapsed: clock.now - start)
  }
}

extension FleetRunner {
  /// The error when `member` declares a profile other than `actual`, the opened watch's.
  static func profileMismatch(_ member: FleetMember, _ actual: String) -> FleetInputProblem? {
    guard let declared = member.watch.profile, declared.value != actual else { return nil }
    return FleetInputProblem(diagnostics: [.error(at: declared.position, field: "watches.\(member.name).profile",
      "the fleet file declares profile \(declared.value), but the watch is \(actual); its layers are chosen by profile, so nothing was planned or written; write profile: \(actual)")],
      subject: declared.position.file)
  }
}

/// What one watch of a fleet run came to.
public struct FleetResult<Outcome: Sendable>: Sendable {
  /// The watch.
  public var member: FleetMember
  /// The operation's outcome, or why the watch failed.
  public var outcome: Result<Outcome, FleetFailure>
  /// How long the watch took, opening and closing included.
  public var elapsed: Duration
}

/// Why one watch of a fleet run failed.
public enum FleetFailure: Error, Sendable, CustomStringConvertible {
  /// Its own manifest has errors; nothing was read from the watch.
  case input(FleetInputProblem)
  /// The engine refused or failed (the device, the lock, the safety gate, the apply).
  case engine(EngineError)
  /// A stop was requested (Ctrl-C) before this watch started; it was not touched.
  case interrupted

  public var description: String {
    switch self {
    case .input(let problem): problem.description
    case .engine(let error): error.description
    case .interrupted: "not started: the run was interrupted; the watch was not touched"
    }
  }
}

/// How far a fleet run is: watches done out of the total, and the ones running now.
public struct FleetProgress: Sendable, Equatable {
  /// Watches finished.
  public var done: Int
  /// Watches in the run.
  public var total: Int
  /// Names of the watches running now, in the order they started.
  public var running: [String]
  /// What holds them up, when something does (over MQTT: `agent a01 is offline (serving w01,
  /// w02)`), for the progress line.
  public var note: String?

  public init(done: Int, total: Int, running: [String], note: String? = nil) {
    self.done = done
    self.total = total
    self.running = running
    self.note = note
  }
}

/// Counts watches started and finished for `FleetProgress` (thread-safe).
final class ProgressTracker: @unchecked Sendable {
  private let lock = NSLock()
  private var done = 0
  private var running: [String] = []
  private let total: Int
  private let report: @Sendable (FleetProgress) -> Void

  init(total: Int, report: @escaping @Sendable (FleetProgress) -> Void) {
    self.total = total
    self.report = report
  }

  func started(_ name: String) {
    lock.lock()
    running.append(name)
    let snapshot = FleetProgress(done: done, total: total, running: running)
    lock.unlock()
    report(snapshot)
  }

  func finished(_ name: String) {
    lock.lock()
    running.removeAll { $0 == name }
    done += 1
    let snapshot = FleetProgress(done: done, total: total, running: running)
    lock.unlock()
    report(snapshot)
  }
}

/// A stop request shared by the watches of one fleet run: each watch's apply begins and ends
/// it (the engine does so around its writes), and the wrapped request (the process's signal
/// handlers) is begun by the first and ended by the last, so concurrent applies never undo
/// each other's handlers.
public final class SharedStop: StopRequest, @unchecked Sendable {
  private let inner: any StopRequest
  private let lock = NSLock()
  private var users = 0

  /// Shares `inner` (e.g. `StopSignals`).
  public init(_ inner: any StopRequest) { self.inner = inner }

  /// Begins `inner` for the first user.
  public func begin() {
    lock.lock()
    defer { lock.unlock() }
    users += 1
    if users == 1 { inner.begin() }
  }

  /// Whether `inner` was asked to stop.
  public var isRequested: Bool { inner.isRequested }

  /// Ends `inner` when the last user ends.
  public func end() {
    lock.lock()
    defer { lock.unlock() }
    users -= 1
    if users == 0 { inner.end() }
  }
}
