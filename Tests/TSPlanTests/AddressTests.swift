import Testing
import TSPlan

@Suite struct ResourceAddressTests {
  @Test(arguments: [("Evening walk", #"reminder.custom["Evening walk"]"#), (#"a "b" \c"#, #"reminder.custom["a \"b\" \\c"]"#)])
  func customAddressesQuoteTheName(_ name: String, _ address: String) {
    #expect(ResourceAddress.custom(name).rawValue == address)
  }

  @Test func builtInAddresses() {
    #expect(ResourceAddress.builtIn(.sedentary).rawValue == "reminder.sedentary")
    #expect(ResourceAddress.builtIn(.medicine).rawValue == "reminder.medicine")
  }
}
