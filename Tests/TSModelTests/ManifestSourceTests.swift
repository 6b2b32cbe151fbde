import Foundation
import Testing
@testable import TSModel
import TSTestSupport

/// The one bounded reader every command uses: what it refuses, how it names it, and that it
/// never reads more than the bound.
@Suite struct ManifestSourceTests {
  static func directory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tsapply-source-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  static func reason(_ path: String, maxBytes: Int = ManifestSource.maxBytes) -> ManifestReadError.Reason? {
    guard case .failure(let error) = ManifestSource.file(path: path, displayName: "w.yaml").read(maxBytes: maxBytes) else { return nil }
    return error.reason
  }

  @Test func eachKindOfPathIsNamed() throws {
    let base = try Self.directory()
    let fm = FileManager.default
    func path(_ name: String) -> String { base.appendingPathComponent(name).path }
    try fm.createDirectory(atPath: path("dir"), withIntermediateDirectories: false)
    try fm.createSymbolicLink(atPath: path("loop"), withDestinationPath: "loop")
    try fm.createSymbolicLink(atPath: path("dangling"), withDestinationPath: "gone.yaml")
    try "x".write(toFile: path("file"), atomically: true, encoding: .utf8)
    #expect(mkfifo(path("fifo"), 0o600) == 0)
    #expect(Self.reason(path("missing")) == .notFound)
    #expect(Self.reason(path("dir")) == .directory)
    #expect(Self.reason(path("loop")) == .symlinkLoop)
    #expect(Self.reason(path("dangling")) == .danglingSymlink(target: "gone.yaml"))
    #expect(Self.reason(path("file") + "/w.yaml") == .notADirectory)
    #expect(Self.reason(path("fifo")) == .fifoWithoutWriter)
    #expect(Self.reason("/dev/zero") == .characterDevice)
    #expect(Self.reason("/dev/null") == .characterDevice)
    #expect(ManifestReadError.Reason(openError: EACCES, path: path("file")) == .permissionDenied)
    #expect(ManifestReadError("w.yaml", .permissionDenied).description == "cannot read w.yaml: permission denied (this user may not read it)")
  }

  @Test func aSocketIsNamed() throws {
    let path = try Self.directory().appendingPathComponent("s.sock").path
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #expect(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    #expect(bound == 0)
    #expect(Self.reason(path) == .socket)
  }

  /// A regular file over the bound is refused by its size: a 1 GiB sparse file at once.
  @Test func aLargeFileIsRefusedByItsSize() throws {
    let path = try Self.directory().appendingPathComponent("huge.yaml").path
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    #expect(truncate(path, 1 << 30) == 0)
    let started = Date()
    #expect(Self.reason(path) == .tooLarge(size: 1 << 30, limit: ManifestSource.maxBytes))
    #expect(Date().timeIntervalSince(started) < 1)
    let error = ManifestReadError("huge.yaml", .tooLarge(size: 1 << 30, limit: 1 << 20))
    #expect(error.diagnostic == .error(at: SourcePosition(file: "huge.yaml", line: 1, column: 1), field: "",
                                       "the file is 1073741824 bytes; a manifest may be at most 1048576 bytes"))
  }

  /// A stream is read up to one byte past the bound and no further: what it held beyond that is
  /// still in the pipe.
  @Test func aStreamIsReadAtMostOneBytePastTheBound() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]) }
    let written = [UInt8](repeating: UInt8(ascii: "a"), count: 100)
    #expect(write(ends[1], written, written.count) == 100)
    close(ends[1])
    let result = ManifestSource.descriptor(ends[0], displayName: "-").read(maxBytes: 10)
    #expect(throws: ManifestReadError("-", .tooLarge(size: nil, limit: 10))) { try result.get() }
    var rest = [UInt8](repeating: 0, count: 200)
    #expect(read(ends[0], &rest, rest.count) == 89)
    #expect(ManifestReadError("-", .tooLarge(size: nil, limit: 10)).description
            == "cannot read -: standard input holds more than 10 bytes; a manifest may be at most 10 bytes")
  }

  @Test(arguments: [(0, true), (10, true), (11, false)])
  func bytesInMemoryHaveTheSameBound(_ count: Int, _ fits: Bool) {
    let result = ManifestSource.bytes([UInt8](repeating: 0x20, count: count), displayName: "m.yaml").read(maxBytes: 10)
    #expect(((try? result.get()) != nil) == fits)
  }
}
