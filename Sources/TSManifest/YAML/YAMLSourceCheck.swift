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
    if let invalid = firstInvalidUTF8(in: bytes, file: file) { return [invalid] }
    return tabIndentation(in: bytes, file: file)
  }

  /// The first byte sequence that is not UTF-8, as an error at its line and column.
  private static func firstInvalidUTF8(in bytes: [UInt8], file: String) -> Diagnostic? {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var offset = 0
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue(let scalar):
        offset += UTF8.width(scalar)
      case .emptyInput:
        return nil
      case .error:
        let byte = String(bytes[offset], radix: 16, uppercase: true)
        return .error(at: position(ofByte: offset, in: bytes, file: file), field: "",
                      "byte 0x\(byte.count == 1 ? "0" + byte : byte) is not valid UTF-8; save the manifest as UTF-8 text")
      }
    }
  }

  /// One error per line whose indentation (the whitespace before its first character) holds a
  /// tab. Blank lines and comment lines are ignored.
  private static func tabIndentation(in bytes: [UInt8], file: String) -> [Diagnostic] {
    var diagnostics: [Diagnostic] = []
    var line = 1
    var lineStart = 0
    while lineStart < bytes.count {
      var end = lineStart
      while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
      let indentation = bytes[lineStart..<end].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
      let rest = bytes[(lineStart + indentation.count)..<end]
      let isBlankOrComment = rest.allSatisfy { $0 == UInt8(ascii: "\r") } || rest.first == UInt8(ascii: "#")
      if !isBlankOrComment, let tab = indentation.firstIndex(of: UInt8(ascii: "\t")) {
        diagnostics.append(.error(at: SourcePosition(file: file, line: line, column: tab - lineStart + 1), field: "",
                                  "a tab is used for indentation; YAML indents with spaces only"))
      }
      line += 1
      lineStart = end + 1
    }
    return diagnostics
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
