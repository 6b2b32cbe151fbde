import Foundation

/// What the monitor's tests share: a manifest with contacts and emergency contacts, and an
/// `--on-sos` program that records exactly what it was given.
public enum MonitorFixtures {
  /// Two contacts and two emergency contacts with SOS on: removing one contact is safe (a
  /// third of three), removing an emergency contact is not.
  public static let manifest = """
    version: 1
    contacts:
      - {name: Alex Doe, phone: "+15550100"}
      - {name: Kim Li, phone: "+15550102"}
    emergency:
      sos: true
      contacts:
        - {name: Mom, phone: "+15550110"}
        - {name: Dad, phone: "+15550111"}

    """

  /// A folder inside `directory` whose name holds quotes, `$()`, backquotes and a newline, with
  /// a script `record.sh` that writes its arguments (`argv`) and environment (`env`),
  /// NUL-separated, beside itself and appends `$TSAPPLY_EVENT_ID` to `deliveries`; it exits
  /// `$RECORD_STATUS` (default 0), and 1 without recording while a file `down` is there.
  public static func recorder(in directory: String) throws -> (folder: String, script: String) {
    let folder = directory + "/it's \"$(touch pwned)\"\n`touch pwned2`"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let script = folder + "/record.sh"
    try """
      #!/bin/sh
      here=$(dirname "$0")
      [ -e "$here/down" ] && exit 1
      for word in "$0" "$@"; do printf '%s\\0' "$word"; done > "$here/argv"
      env -0 > "$here/env"
      printf '%s\\n' "$TSAPPLY_EVENT_ID" >> "$here/deliveries"
      exit ${RECORD_STATUS:-0}

      """.write(toFile: script, atomically: true, encoding: .utf8)
    chmod(script, 0o755)
    return (folder, script)
  }

  /// `path` in double quotes, as an `--on-sos` command word (docs/monitor.md "Running a command").
  public static func quoted(_ path: String) -> String {
    "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }

  /// The words the recorder wrote to `argv` in `folder`.
  public static func arguments(in folder: String) throws -> [String] {
    try String(contentsOfFile: folder + "/argv", encoding: .utf8).split(separator: "\0", omittingEmptySubsequences: false)
      .dropLast().map(String.init)
  }

  /// The environment the recorder wrote to `env` in `folder`.
  public static func environment(in folder: String) throws -> [String: String] {
    Dictionary(try String(contentsOfFile: folder + "/env", encoding: .utf8).split(separator: "\0").map { entry in
      let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }, uniquingKeysWith: { first, _ in first })
  }

  /// Files named `pwned`, `pwned2` or `pwned3` in any of `places`: what a shell would have made.
  public static func shellTraces(in places: [String]) -> [String] {
    places.flatMap { place in ["pwned", "pwned2", "pwned3"].map { place + "/" + $0 } }
      .filter { FileManager.default.fileExists(atPath: $0) }
  }
}
