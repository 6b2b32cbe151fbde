import Foundation
import TSApplyCLI
import TSApplyNetworkCLI

// The network build: the whole command line, network commands and `bridge:` devices included.
// `tsapply` (the static core) hands command lines that need them to this executable
// (Sources/TSApplyCLI/Toolset.swift); it can also be run directly.
signal(SIGPIPE, SIG_IGN)
Task.detached {
  let status = await CLI.run(Array(CommandLine.arguments.dropFirst()), context: .process(toolset: .network))
  exit(status.rawValue)
}
DispatchSemaphore(value: 0).wait()  // never signalled: the task above ends the process
