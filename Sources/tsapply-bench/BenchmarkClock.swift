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

extension BenchmarkClock {
  /// Resident set size of this process now, in KiB (`VmRSS` in /proc/self/status; 0 where
  /// there is no /proc).
  static func residentKiB() -> Int { procStatus("VmRSS:") }

  /// Starts a new peak: the kernel's high-water mark of resident memory is set to what is
  /// resident now (`5` written to /proc/self/clear_refs, Linux), so that
  /// `peakResidentSinceResetKiB()` measures only what follows (e.g. without a set-up's peak).
  static func resetPeakResident() {
    let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = write(fd, "5", 1)
    close(fd)
  }

  /// Peak resident set size since `resetPeakResident()` (or since the start), in KiB (`VmHWM`
  /// in /proc/self/status); `peakResidentKiB()` where there is no /proc.
  static func peakResidentSinceResetKiB() -> Int {
    let peak = procStatus("VmHWM:")
    return peak > 0 ? peak : peakResidentKiB()
  }

  /// The KiB figure of the line starting with `field` in /proc/self/status; 0 without one.
  private static func procStatus(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field) {
      return Int(line.dropFirst(field.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
    }
    return 0
  }
}
