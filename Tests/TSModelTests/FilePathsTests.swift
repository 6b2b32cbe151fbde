import Foundation
import Testing
import TSModel
import TSTestSupport

/// `FilePaths`: every spelling of one file resolves to one path (the last component's link
/// included, a dangling link too), and a file where a directory is wanted is named.
@Suite struct FilePathsTests {
  /// A directory holding `real/w.json`, `real/sub/`, links `l.json -> real/w.json`,
  /// `dir -> real`, `chain -> l.json`, `dangling.json -> real/new.json`, `loop -> loop`, and the
  /// file `plain`.
  static func tree() throws -> String {
    let base = try TestFolders.make("filepaths")
    let files = FileManager.default
    try files.createDirectory(atPath: base + "/real/sub", withIntermediateDirectories: true)
    try "{}".write(toFile: base + "/real/w.json", atomically: true, encoding: .utf8)
    try "x".write(toFile: base + "/plain", atomically: true, encoding: .utf8)
    try files.createSymbolicLink(atPath: base + "/l.json", withDestinationPath: "real/w.json")
    try files.createSymbolicLink(atPath: base + "/dir", withDestinationPath: base + "/real")
    try files.createSymbolicLink(atPath: base + "/chain", withDestinationPath: "l.json")
    try files.createSymbolicLink(atPath: base + "/dangling.json", withDestinationPath: "real/new.json")
    try files.createSymbolicLink(atPath: base + "/loop", withDestinationPath: "loop")
    return base
  }

  static let spellings: [(String, String)] = [
    ("real/w.json", "real/w.json"),
    ("./real/w.json", "real/w.json"),
    ("real/sub/../w.json", "real/w.json"),
    ("real//./w.json", "real/w.json"),
    ("l.json", "real/w.json"),
    ("chain", "real/w.json"),
    ("dir/w.json", "real/w.json"),
    ("dir/sub/../w.json", "real/w.json"),
    ("dangling.json", "real/new.json"),
    ("dir/missing/../x.json", "real/x.json"),
    ("missing/./a/../b.json", "missing/b.json"),
  ]

  @Test(arguments: spellings)
  func everySpellingOfOneFileResolvesToOnePath(_ written: String, _ expected: String) throws {
    let base = try Self.tree()
    #expect(FilePaths.resolved(base + "/" + written) == base + "/" + expected)
  }

  @Test func aLoopOfLinksEndsWithoutHanging() throws {
    let base = try Self.tree()
    #expect(FilePaths.resolved(base + "/loop").hasPrefix(base + "/loop"))
  }

  @Test func insideComparesResolvedPaths() throws {
    let base = try Self.tree()
    #expect(FilePaths.isInside(base + "/dir/sub/x", directory: base + "/real"))
    #expect(FilePaths.isInside(base + "/real", directory: base + "/dir"))
    #expect(!FilePaths.isInside(base + "/realm", directory: base + "/real"))
    #expect(!FilePaths.isInside(base + "/plain", directory: base + "/real"))
  }

  static let directories: [(String, String?, String?)] = [
    ("real/sub", nil, nil),
    ("real/new/deeper", nil, nil),
    ("plain", "plain", "it is a file, not a directory"),
    ("plain/watches/abc", "plain", "its parent <BASE>/plain is a file, not a directory"),
    ("l.json/x", "l.json", "its parent <BASE>/l.json is a file, not a directory"),
  ]

  @Test(arguments: directories)
  func aFileWhereADirectoryIsWantedIsNamed(_ written: String, _ blocker: String?, _ reason: String?) throws {
    let base = try Self.tree()
    let found = FilePaths.nonDirectory(in: base + "/" + written)
    #expect(found == blocker.map { base + "/" + $0 })
    if let found {
      #expect(FilePaths.notADirectory(base + "/" + written, blocker: found) == reason?.replacingOccurrences(of: "<BASE>", with: base))
    }
  }
}
