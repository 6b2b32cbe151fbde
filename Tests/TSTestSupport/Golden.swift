import Foundation
import Testing

/// Compares `actual` with the golden file `Golden/<name>` next to the calling test file.
///
/// With `TSAPPLY_RECORD_GOLDENS=1` the file is (re)written and the test fails, so a regenerated
/// golden is never silently accepted. A missing golden file is an error, not a recording.
public func expectGolden(_ actual: String, _ name: String, filePath: String = #filePath,
                         sourceLocation: SourceLocation = #_sourceLocation) {
  let directory = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Golden")
  let url = directory.appendingPathComponent(name)
  if ProcessInfo.processInfo.environment["TSAPPLY_RECORD_GOLDENS"] != nil {
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try? actual.write(to: url, atomically: true, encoding: .utf8)
    Issue.record("Recorded golden \(name); run again without TSAPPLY_RECORD_GOLDENS", sourceLocation: sourceLocation)
    return
  }
  guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
    Issue.record("Missing golden file \(url.path); record it with TSAPPLY_RECORD_GOLDENS=1", sourceLocation: sourceLocation)
    return
  }
  #expect(actual == expected, "golden \(name) differs", sourceLocation: sourceLocation)
}
