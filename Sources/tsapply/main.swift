import Foundation
import TSApplyCLI

// A closed standard output (`tsapply apply … | head -1`) must not kill an apply part-way:
// writes to it fail with EPIPE instead (FileOutput drops them), and the apply goes on.
signal(SIGPIPE, SIG_IGN)
let status = await CLI.run(Array(CommandLine.arguments.dropFirst()), context: .process())
exit(status.rawValue)
