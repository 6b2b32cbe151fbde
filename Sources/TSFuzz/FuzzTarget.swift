import Dispatch
import Foundation

/// One fuzz target: a name, where its seeds and dictionary are, and the properties every input
/// must have (`check`).
///
/// The properties are ordinary functions, shared by two callers: the libFuzzer driver
/// `tsapply-fuzz` (declared only when `TSAPPLY_FUZZ=1`, built with `-sanitize=fuzzer,address`
/// by `script/fuzz`) and the replay tests in `Tests/TSFuzzTests`, which run every seed and every
/// saved reproducer through them on each `swift test`. docs/fuzzing.md describes both.
public struct FuzzTarget: Sendable {
  /// The target's name on the command line: `script/fuzz manifest`.
  public var name: String
  /// One line on what the target feeds and what it checks.
  public var summary: String
  /// Where the seed inputs are, relative to the package root.
  public var seeds: [SeedSource]
  /// The libFuzzer dictionary, relative to the package root; `nil` for none.
  public var dictionary: String?
  /// Largest input libFuzzer generates (`-max_len`).
  public var maxLength: Int
  /// Checks one input: returns when every property holds, throws the first one that does not.
  /// A crash inside is a crash of the product code it calls.
  public var check: @Sendable ([UInt8]) async throws(PropertyFailure) -> Void

  /// A target; see the properties for what each part means.
  public init(name: String, summary: String, seeds: [SeedSource], dictionary: String?, maxLength: Int,
              check: @escaping @Sendable ([UInt8]) async throws(PropertyFailure) -> Void) {
    self.name = name
    self.summary = summary
    self.seeds = seeds
    self.dictionary = dictionary
    self.maxLength = maxLength
    self.check = check
  }

  /// The libFuzzer options `script/fuzz` passes for this target: the length limit, the
  /// dictionary, `-len_control=0` (libFuzzer otherwise grows inputs slowly from short ones and
  /// rarely tries long manifests within a short run; docs/fuzzing.md "Input length") and
  /// `-detect_leaks=0` (the check runs in a task that frees its memory after the callback
  /// returns, so every input looked like a leak and cost a scan of the whole heap).
  public var libFuzzerOptions: [String] {
    ["-max_len=\(maxLength)", "-len_control=0", "-detect_leaks=0"] + (dictionary.map { ["-dict=\($0)"] } ?? [])
  }

  /// `check` for a caller that cannot await (libFuzzer's C callback): runs it on the
  /// concurrency pool and blocks the calling thread until it finishes. Never call it from a
  /// task on the pool itself.
  public func checkBlocking(_ bytes: [UInt8]) -> PropertyFailure? {
    let box = FailureBox()
    let done = DispatchSemaphore(value: 0)
    let check = self.check
    Task.detached {
      do throws(PropertyFailure) { try await check(bytes) } catch { box.failure = error }
      done.signal()
    }
    done.wait()
    return box.failure
  }
}

/// Carries a failure out of the detached task of `checkBlocking` (written before the semaphore
/// is signalled, read after it is waited for).
private final class FailureBox: @unchecked Sendable {
  var failure: PropertyFailure?
}

/// A set of seed files: the files in `directory` (relative to the package root, not its
/// subfolders) whose names end with `suffix`.
public struct SeedSource: Hashable, Sendable {
  /// A folder relative to the package root, e.g. `examples`.
  public var directory: String
  /// The end of the file names taken, e.g. `.yaml`; empty for every file.
  public var suffix: String

  /// The files in `directory` whose names end with `suffix`.
  public init(_ directory: String, suffix: String = "") {
    self.directory = directory
    self.suffix = suffix
  }
}

/// A property that an input broke: which one, and what was seen.
public struct PropertyFailure: Error, Hashable, Sendable, CustomStringConvertible {
  /// The property, e.g. `fmt is idempotent`.
  public var property: String
  /// What was seen instead, with enough of the input's handling to debug it.
  public var detail: String

  /// A failure of `property`, showing `detail`.
  public init(_ property: String, _ detail: String) {
    self.property = property
    self.detail = detail
  }

  /// `property failed: PROPERTY`, then the detail on the lines after it.
  public var description: String { "property failed: \(property)\n\(detail)" }
}

/// Every fuzz target, in the order `script/fuzz all` runs them.
public enum FuzzTargets {
  /// The targets. A new one is a file defining a `FuzzTarget` and one entry here (docs/fuzzing.md
  /// "Adding a target").
  public static let all: [FuzzTarget] = [ManifestTarget.target, RecordsTarget.target, BridgeTarget.target]

  /// The target called `name`, if there is one.
  public static func named(_ name: String) -> FuzzTarget? {
    all.first { $0.name == name }
  }

  /// Where saved reproducers of `target` live, relative to the package root; the replay tests
  /// run every file in it.
  public static func reproducerDirectory(_ target: String) -> String {
    "Tests/TSFuzzTests/Reproducers/\(target)"
  }
}

/// Throws `PropertyFailure(property, detail())` unless `condition` holds.
func require(_ condition: Bool, _ property: String, _ detail: @autoclosure () -> String) throws(PropertyFailure) {
  if !condition { throw PropertyFailure(property, detail()) }
}

/// The seed and reproducer files of a target, found on disk.
public enum SeedFiles {
  /// The seed files of `target` under the package root `root`, as package-relative paths,
  /// sorted; hidden files are left out.
  public static func paths(_ target: FuzzTarget, root: String) -> [String] {
    target.seeds.flatMap { source in
      files(in: source.directory, root: root).filter { $0.hasSuffix(source.suffix) }
    }
  }

  /// The files directly in `directory` (package-relative) under `root`, as package-relative
  /// paths, sorted; hidden files and folders are left out. None when it does not exist.
  public static func files(in directory: String, root: String) -> [String] {
    let base = (root as NSString).appendingPathComponent(directory)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
    return names.sorted().filter { name in
      var isDirectory: ObjCBool = false
      return !name.hasPrefix(".")
        && FileManager.default.fileExists(atPath: (base as NSString).appendingPathComponent(name), isDirectory: &isDirectory)
        && !isDirectory.boolValue
    }.map { (directory as NSString).appendingPathComponent($0) }
  }
}
