import Foundation
import TSApplyCLI

let status = await CLI.run(Array(CommandLine.arguments.dropFirst()), context: .process())
exit(status.rawValue)
