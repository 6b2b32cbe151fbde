/// `--name value` options of a benchmark, checked against the names it takes.
struct BenchmarkOptions {
  /// An option the benchmark does not take, one without a value, or a value that is not a number.
  struct Problem: Error, CustomStringConvertible {
    var description: String
  }

  private var values: [String: String] = [:]

  /// Reads `arguments` as pairs `--name value`; every name must be in `allowed`.
  init(_ arguments: [String], allowed: Set<String>) throws(Problem) {
    var index = 0
    while index < arguments.count {
      let name = arguments[index]
      guard allowed.contains(name) else { throw Problem(description: "unknown option \(name) (options: \(allowed.sorted().joined(separator: ", ")))") }
      guard index + 1 < arguments.count else { throw Problem(description: "\(name) needs a value") }
      values[name] = arguments[index + 1]
      index += 2
    }
  }

  /// The text given for `name`, if any.
  subscript(name: String) -> String? { values[name] }

  /// The positive integer given for `name`, or `defaultValue` when it is not given.
  func integer(_ name: String, default defaultValue: Int) throws(Problem) -> Int {
    guard let text = values[name] else { return defaultValue }
    guard let value = Int(text), value > 0 else { throw Problem(description: "\(name) takes a positive integer, not \(text)") }
    return value
  }
}
