import Foundation
import TSModel

/// Checks on the raw bytes before libyaml sees them, so that the common mistakes get a plain
/// message with a position instead of a parser error: a file over the size bound, bytes that
/// are not UTF-8, and tabs used as indentation. Also strips a UTF-8 byte-order mark.
enum YAMLSourceCheck {
  /// The UTF-8 byte-order mark, EF BB BF.
  static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

  /// `bytes` without a leading UTF-8 BOM (positions are then counted as an editor shows them).
  static func strippingBOM(_ bytes: [UInt8]) -> [UInt8] {
    bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(byteOrderMark.count)) : bytes
  }

  /// Size, encoding and indentation problems; empty when libyaml may read `bytes`.
  static func problems(in bytes: [UInt8], file: String, limits: YAMLLimits) -> [Diagnostic] {
    if bytes.count > limits.maxBytes {
      return [.error(at: SourcePosition(file: file, line: 1, column: 1), field: "",
                     "the file is \(bytes.count) bytes; a manifest may be at most \(limits.maxBytes) bytes")]
    }
    if let encoding = otherUnicodeEncoding(of: bytes) {
      return [.error(at: SourcePosition(file: file, line: 1, column: 1), field: "",
                     "the file is \(encoding) text (it begins with that encoding's byte-order mark: Windows Notepad saves \"Unicode\" so); "
                       + "save the manifest as UTF-8 text (in Notepad: Save As, Encoding UTF-8)")]
    }
    if let invalid = firstInvalidUTF8(in: bytes, file: file) { return [invalid] }
    return tabIndentation(in: bytes, file: file)
  }

  /// "UTF-16" or "UTF-32" when `bytes` begin with that encoding's byte-order mark (either byte
  /// order; UTF-32's little-endian mark is checked first, as it begins with UTF-16's).
  private static func otherUnicodeEncoding(of bytes: [UInt8]) -> String? {
    if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) || bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return "UTF-32" }
    if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) { return "UTF-16" }
    return nil
  }

  /// The first byte sequence that is not UTF-8, as an error at its line and column. ASCII bytes
  /// are skipped without decoding.
  private static func firstInvalidUTF8(in bytes: [UInt8], file: String) -> Diagnostic? {
    let invalid = bytes.withUnsafeBufferPointer { buffer -> Int? in
      var offset = 0
      let raw = UnsafeRawBufferPointer(buffer)
      while true {
        // ASCII is skipped eight bytes at a time, then byte by byte up to the next other byte.
        while offset + 8 <= raw.count, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
          offset += 8
        }
        while offset < buffer.count, buffer[offset] < 0x80 { offset += 1 }
        var decoder = UTF8()  // fresh for each scalar: a decoder buffers bytes it read ahead
        var iterator = buffer[offset...].makeIterator()
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): offset += UTF8.width(scalar)
        case .emptyInput: return nil
        case .error: return offset
        }
      }
    }
    guard let offset = invalid else { return nil }
    let byte = String(bytes[offset], radix: 16, uppercase: true)
    return .error(at: position(ofByte: offset, in: bytes, file: file), field: "",
                  "byte 0x\(byte.count == 1 ? "0" + byte : byte) is not valid UTF-8; save the manifest as UTF-8 text")
  }

  /// One error per line whose indentation (the whitespace before its first character) holds a
  /// tab. Blank lines and comment lines are ignored.
  private static func tabIndentation(in bytes: [UInt8], file: String) -> [Diagnostic] {
    let (space, tab, newline) = (UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"))
    var tabs: [(line: Int, column: Int)] = []
    // Most manifests hold no tab at all: one vectorised search decides it.
    let hasTab = bytes.withUnsafeBytes { raw in raw.baseAddress.map { memchr($0, Int32(tab), raw.count) != nil } ?? false }
    guard hasTab else { return [] }
    bytes.withUnsafeBufferPointer { bytes in
      var line = 1
      var index = 0
      while index < bytes.count {
        let lineStart = index
        var firstTab: Int?
        while index < bytes.count, bytes[index] == space || bytes[index] == tab {
          if firstTab == nil, bytes[index] == tab { firstTab = index }
          index += 1
        }
        let rest = index
        while index < bytes.count, bytes[index] != newline { index += 1 }
        if let firstTab {
          let text = bytes[rest..<index]
          let isBlankOrComment = text.allSatisfy { $0 == UInt8(ascii: "\r") } || text.first == UInt8(ascii: "#")
          if !isBlankOrComment { tabs.append((line, firstTab - lineStart + 1)) }
        }
        line += 1
        index += 1
      }
    }
    return tabs.map {
      .error(at: SourcePosition(file: file, line: $0.line, column: $0.column), field: "",
             "a tab is used for indentation; YAML indents with spaces only")
    }
  }

  /// The text of 1-based line `number` of `bytes`, without its line end (LF or CRLF); `nil`
  /// past the last line.
  static func line(_ number: Int, in bytes: [UInt8]) -> String? {
    var start = 0
    for _ in 1..<max(1, number) {
      guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
      start = end + 1
    }
    let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
    var line = bytes[start..<end]
    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
    return String(decoding: line, as: UTF8.self)
  }

  /// The 1-based line and column (in Unicode scalars) of byte `offset` in `bytes`.
  static func position(ofByte offset: Int, in bytes: [UInt8], file: String) -> SourcePosition {
    var line = 1
    var column = 1
    for byte in bytes.prefix(max(0, offset)) {
      if byte == UInt8(ascii: "\n") {
        line += 1
        column = 1
      } else if byte & 0xC0 != 0x80 {
        column += 1  // count lead bytes only: one per scalar
      }
    }
    return SourcePosition(file: file, line: line, column: column)
  }
}
