import Foundation
import TSApplyCLI

// A closed standard output (`tsapply apply … | head -1`) must not kill an apply part-way:
// writes to it fail with EPIPE instead (FileOutput drops them), and the apply goes on.
signal(SIGPIPE, SIG_IGN)

// The static core hands command lines that need the network libraries (bridge devices, the
// bridge server, the monitor, fleets, agents; and the full command list) to tsapply-net
// (Sources/TSApplyCLI/Toolset.swift). The list and completion scripts fall back to the core's
// own when tsapply-net is missing; anything else fails with advice.
let arguments = Array(CommandLine.arguments.dropFirst())
if NetworkBuild.isNeeded(arguments, environment: ProcessInfo.processInfo.environment) {
  let failure = NetworkBuild.handOver("'tsapply \(arguments.prefix(2).joined(separator: " "))'")
  let listing = arguments.isEmpty || ["--help", "-h"].contains(arguments[0]) || NetworkBuild.listings.contains(arguments[0])
  if !listing {
    FileOutput(descriptor: STDERR_FILENO).write("Error: \(failure.message)\n")
    exit(ExitStatus.failure.rawValue)
  }
}

// A synchronous entry point that waits for the command and ends the process with its status.
// An `await` here would make this an async main, which ends in `dispatchMain()`: that exits the
// main thread with pthread_exit, and the forced unwind sorts every frame-description entry of
// the binary first (about 25 ms of CPU in the static release binary, 1.5 % of a start-up when
// linked dynamically). No code runs on the main actor, so blocking this thread is safe.
Task.detached {
  let status = await CLI.run(arguments, context: .process())
  exit(status.rawValue)
}
DispatchSemaphore(value: 0).wait()  // never signalled: the task above ends the process
