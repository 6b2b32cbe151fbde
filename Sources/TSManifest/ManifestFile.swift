import Foundation

/// Reading a manifest file's bytes with a size bound checked before reading.
enum ManifestFile {
  /// Why a file could not be read; `hasPosition` when the problem is about the content (size).
  struct Problem: Error {
    var message: String
    var hasPosition = false
  }

  /// The file's bytes, or the reason it cannot be read (missing, a directory, no permission,
  /// larger than `maxBytes`).
  static func contents(path: String, maxBytes: Int) -> Result<[UInt8], Problem> {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return .failure(Problem(message: String(cString: strerror(errno)).lowercased())) }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return .failure(Problem(message: String(cString: strerror(errno)).lowercased())) }
    if (info.st_mode & S_IFMT) == S_IFDIR { return .failure(Problem(message: "it is a directory, not a manifest file")) }
    if Int(info.st_size) > maxBytes {
      return .failure(Problem(message: "the file is \(info.st_size) bytes; a manifest may be at most \(maxBytes) bytes",
                              hasPosition: true))
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 { return .failure(Problem(message: String(cString: strerror(errno)).lowercased())) }
      if count == 0 { return .success(bytes) }
      bytes.append(contentsOf: chunk[0..<count])
      if bytes.count > maxBytes {
        return .failure(Problem(message: "the file is larger than \(maxBytes) bytes; a manifest may be at most \(maxBytes) bytes",
                                hasPosition: true))
      }
    }
  }
}
