import Testing
import TSTestSupport

@Suite struct HelpTests {
  @Test func versionPrintsAndExitsZero() throws {
    let result = try TSApplyBinary.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("tsapply "))
  }

  @Test func unknownCommandIsAUsageError() throws {
    let result = try TSApplyBinary.run(["halp"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("unknown command 'halp'; did you mean 'help'?"))
  }
}
