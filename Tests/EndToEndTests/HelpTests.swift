import Testing
import TSTestSupport

@Suite struct HelpTests {
  @Test func unknownCommandIsAUsageError() throws {
    let result = try TSApplyBinary.run(["halp"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("unknown command 'halp'; did you mean 'help'?"))
  }
}
