import Foundation
import Testing
import TSTestSupport

/// The systemd units the Debian package installs (script/packaging/systemd/) pass `systemd-analyze
/// verify` without a warning, in a root laid out as the package lays it out: the units in
/// /lib/systemd/system beside the system's own, the built tsapply as /usr/bin/tsapply.
/// (The man pages their Documentation= names are checked on an installed package by
/// script/check-package.)
@Suite struct ServiceUnitTests {
  static let analyze = "/usr/bin/systemd-analyze"
  static let systemUnits = "/lib/systemd/system"
  static let units = ["tsapply-monitor.service", "tsapply-agent.service"]
  static let available = FileManager.default.isExecutableFile(atPath: analyze)
    && FileManager.default.fileExists(atPath: systemUnits + "/sysinit.target")

  @Test(.enabled(if: available, "systemd-analyze or the system's units (/lib/systemd/system) are missing: the units are not verified"))
  func unitsVerify() throws {
    let root = try TSApplyBinary.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: root) }
    let fm = FileManager.default
    let unitDirectory = root.appendingPathComponent("lib/systemd/system")
    try fm.createDirectory(at: root.appendingPathComponent("lib/systemd"), withIntermediateDirectories: true)
    try fm.copyItem(atPath: Self.systemUnits, toPath: unitDirectory.path)
    for unit in Self.units {
      try fm.copyItem(at: TSApplyBinary.packageRoot.appendingPathComponent("script/packaging/systemd/\(unit)"),
                      to: unitDirectory.appendingPathComponent(unit))
    }
    try fm.createDirectory(at: root.appendingPathComponent("usr/bin"), withIntermediateDirectories: true)
    try fm.copyItem(at: TSApplyBinary.url, to: root.appendingPathComponent("usr/bin/tsapply"))

    let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: Self.analyze),
                                              ["verify", "--man=no", "--root=\(root.path)"]
                                                + Self.units.map { unitDirectory.appendingPathComponent($0).path })
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr == "", "warnings: \(result.stderr)")
  }
}
