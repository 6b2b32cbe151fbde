import Foundation
import TSManifest

/// `tsapply-bench load [--contacts N] [--iterations K]`: the per-item cost of loading a manifest
/// (`ManifestLoader.load`: libyaml, the contact-list fast path or the node tree, decoding and
/// every rule; and the same without the fast path, every list through the tree) beside a plain
/// libyaml event scan of the same bytes (`YAMLReader.countEvents`), in-process, for the contacts workload
/// (`ContactWorkload`, default N = 5000) and for one contact. Prints microseconds per contact
/// of each and their ratio, the in-process counterpart of the per-item target in
/// docs/performance.md (at most 2 × libyaml's cost per item).
enum LoadBenchmark {
  static func run(_ arguments: [String]) throws -> Int32 {
    let options = try BenchmarkOptions(arguments, allowed: ["--contacts", "--iterations"])
    let count = try options.integer("--contacts", default: 5000)
    let iterations = try options.integer("--iterations", default: 20)
    let full = Array(ContactWorkload(count: count).manifest.utf8)
    let minimal = Array(ContactWorkload(count: 1).manifest.utf8)
    print("manifest: \(full.count) bytes, \(count) contacts (and 1 contact, \(minimal.count) bytes); \(iterations) iterations")

    func median(_ bytes: [UInt8], _ body: ([UInt8]) -> Bool) -> Double? {
      var ok = true
      let times = BenchmarkClock.measure(iterations: iterations) { ok = body(bytes) && ok }
      return ok ? times.sorted()[times.count / 2] : nil
    }
    let load = { (bytes: [UInt8]) in ManifestLoader.load(bytes: bytes, file: "bench.yaml").manifest != nil }
    let loadTree = { (bytes: [UInt8]) in
      ManifestLoader.load(bytes: bytes, file: "bench.yaml", capturesContactLists: false).manifest != nil
    }
    let scan = { (bytes: [UInt8]) in YAMLReader.countEvents(bytes: bytes) != nil }
    guard let loadFull = median(full, load), let loadMinimal = median(minimal, load),
          let treeFull = median(full, loadTree), let treeMinimal = median(minimal, loadTree),
          let scanFull = median(full, scan), let scanMinimal = median(minimal, scan) else {
      print("error: the workload did not load or scan")
      return 1
    }
    let perItem = { (full: Double, minimal: Double) in (full - minimal) * 1000 / Double(count) }
    let loadPerItem = perItem(loadFull, loadMinimal), scanPerItem = perItem(scanFull, scanMinimal)
    print(String(format: "ManifestLoader.load: %.3f ms (1 contact: %.3f ms), %.2f µs per contact", loadFull, loadMinimal, loadPerItem))
    print(String(format: "  without the contact-list fast path: %.3f ms (1 contact: %.3f ms), %.2f µs per contact",
                 treeFull, treeMinimal, perItem(treeFull, treeMinimal)))
    print(String(format: "libyaml event scan:  %.3f ms (1 contact: %.3f ms), %.2f µs per contact", scanFull, scanMinimal, scanPerItem))
    print(String(format: "per contact, load / scan: %.2f× (target ≤ 2×)", loadPerItem / scanPerItem))
    print("peak RSS: \(BenchmarkClock.peakResidentKiB()) KiB")
    return 0
  }
}
