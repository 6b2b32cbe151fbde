import Foundation

/// Wall-clock timing and peak-memory readings for benchmarks.
enum BenchmarkClock {
  /// Runs `body` `iterations` times and returns the per-iteration wall times in milliseconds.
  static func measure(iterations: Int, _ body: () throws -> Void) rethrows -> [Double] {
    var times: [Double] = []
    for _ in 0..<iterations {
      let start = DispatchTime.now().uptimeNanoseconds
      try body()
      times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
    }
    return times
  }

  /// Async variant of `measure`.
  static func measureAsync(iterations: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
    var times: [Double] = []
    for _ in 0..<iterations {
      let start = DispatchTime.now().uptimeNanoseconds
      try await body()
      times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
    }
    return times
  }

  /// "median X ms (min Y, max Z, n=N)".
  static func summary(_ times: [Double]) -> String {
    let sorted = times.sorted()
    guard let first = sorted.first, let last = sorted.last else { return "no samples" }
    let median = sorted[sorted.count / 2]
    return String(format: "median %.3f ms (min %.3f, max %.3f, n=%d)", median, first, last, sorted.count)
  }

  /// Peak resident set size of this process so far, in KiB (getrusage ru_maxrss).
  static func peakResidentKiB() -> Int {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage.ru_maxrss
  }
}
