// The libFuzzer driver for the TSFuzz targets; declared in Package.swift only when TSAPPLY_FUZZ=1
// and built by script/fuzz with -sanitize=fuzzer,address (docs/fuzzing.md).
//
//   tsapply-fuzz TARGET [libFuzzer options and corpus folders...]   fuzz, or replay files
//   tsapply-fuzz --list                                              the targets, one a line
//   tsapply-fuzz --seeds TARGET                                      its seed files (package-relative)
//   tsapply-fuzz --options TARGET                                    its libFuzzer options, one a line
//
// SwiftPM links an executable target with `--defsym main=tsapply_fuzz_main`. This module is
// compiled with -parse-as-library (no top-level code, so no generated entry point), and libFuzzer
// brings its own `main`; the symbol SwiftPM names is therefore defined here with @_cdecl, and it
// hands control to libFuzzer through LLVMFuzzerRunDriver with the target's callback.
import Foundation
import TSFuzz

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// The target chosen on the command line; set once before libFuzzer starts.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("tsapply_fuzz_main")
func tsapplyFuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
  let arguments = (0..<Int(argc)).map { argv[$0].map { String(cString: $0) } ?? "" }
  let names = FuzzTargets.all.map(\.name).joined(separator: ", ")
  func fail(_ message: String) -> Int32 {
    FileHandle.standardError.write(Data("tsapply-fuzz: \(message)\n".utf8))
    return 64
  }
  func target(_ name: String?) -> FuzzTarget? { name.flatMap(FuzzTargets.named) }
  switch arguments.count > 1 ? arguments[1] : "" {
  case "--list":
    print(FuzzTargets.all.map { "\($0.name)\t\($0.summary)" }.joined(separator: "\n"))
    return 0
  case "--seeds":
    guard let chosen = target(arguments.count > 2 ? arguments[2] : nil) else { return fail("--seeds TARGET, one of: \(names)") }
    for path in SeedFiles.paths(chosen, root: FileManager.default.currentDirectoryPath) { print(path) }
    return 0
  case "--options":
    guard let chosen = target(arguments.count > 2 ? arguments[2] : nil) else { return fail("--options TARGET, one of: \(names)") }
    print(chosen.libFuzzerOptions.joined(separator: "\n"))
    return 0
  default:
    guard let chosen = target(arguments.count > 1 ? arguments[1] : nil) else {
      return fail("usage: tsapply-fuzz TARGET [libFuzzer options] [corpus folders or files]; targets: \(names)")
    }
    selected = chosen
  }
  // libFuzzer sees the program name and everything after the target's name.
  var count = argc - 1
  var rest: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv + 1
  rest?[0] = argv[0]
  return LLVMFuzzerRunDriver(&count, &rest) { data, size in
    guard let target = selected else { return 0 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = target.checkBlocking(bytes) {
      // A broken property is a finding: abort, so libFuzzer saves the input as crash-….
      FileHandle.standardError.write(Data("tsapply-fuzz \(target.name): \(failure)\n".utf8))
      abort()
    }
    return 0
  }
}
