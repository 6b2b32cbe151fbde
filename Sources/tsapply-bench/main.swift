// tsapply-bench: benchmarks run by hand (never as timed unit tests); figures go in closing notes.
//
//   swift run -c release tsapply-bench <name> [options]
//
// Each benchmark prints wall time and peak memory (ru_maxrss) for what it measures.
import Foundation

/// The benchmarks, by name. Each takes the remaining arguments and returns an exit status.
let benchmarks: [String: (String, ([String]) async throws -> Int32)] = [
  "memory": ("print this process's peak resident memory (a smoke test of the harness)", { _ in
    print("peak RSS: \(BenchmarkClock.peakResidentKiB()) KiB")
    return 0
  }),
  "apply": ("device calls and bytes per apply vs the minimum, per profile; planning a 200-contact manifest", ApplyBenchmark.run),
  "bridge": ("per-call overhead over loopback (median, p99) and apply examples/watch.yaml through the bridge vs in-process [CALLS] [APPLIES]",
             BridgeBenchmark.run),
  "bridge-client": ("the bridge client against tsapply bridge serve: p50/p99 per sealed read and write, CPU while a stream or a call waits [CALLS] [SECONDS] [BINARY]",
                    BridgeBenchmark.client),
  "device": ("simulated-watch call cost (memory, file) and link traffic per profile [ITERATIONS]", DeviceBenchmark.run),
  "fleet-plan": ("plan fleets of 10, 100, 1000 watches (50 contacts, 3 built-ins, 5 custom each) from files, each plan counted and dropped [N…] [--repeat K] [--layers L] [--keep-plans] [--review] [--stages] [--parallelism P]", FleetBenchmark.plan),
  "fleet-review": ("lines a person reads for a one-field change over fleets of 10, 100, 1000 watches: plan --fleet, --summary, --markdown [N…] [--binary PATH]",
                   FleetBenchmark.review),
  "fleet-seed": ("set up fleet-plan's fleet in DIRECTORY: every watch as applied, then one contact added on it (run by fleet-plan) [--no-drift]",
                 FleetBenchmark.seed),
  "monitor-fleet": ("tsapply monitor --fleet over N sim: watches: CPU until ready, then idle CPU and RSS [N] [SECONDS] [BINARY]",
                    FleetBenchmark.monitorFleet),
  "fleet-view": ("fleet views (status, plan, drift --fleet) of N retained watches on a default-settings broker: complete in how many of RUNS, time [N] [RUNS]",
                 FleetViewBenchmark.run),
  "status-wait": ("status --fleet --wait over N watches of 10 agents, one of them offline (the site never settles): CPU over SECONDS [N] [SECONDS]",
                  FleetViewBenchmark.statusWait),
  "fleet-agents": ("N agents on one local broker: publish N revisions, time to converge, messages, CPU [N] [OFFLINE%]", FleetBenchmark.agents),
  "fleet-rollout": ("a change failing everywhere on N watches under canary 2 / max_failures 0: watches written, exit status [N] [BINARY]",
                    RolloutBenchmark.run),
  "fleet-direct": ("apply --fleet over N simulated watches with the latency model vs the sum of per-watch times [N] [LATENCY]", FleetBenchmark.direct),
  "monitor": ("drift detection latency against --interval, SOS delivery latency to a command and a loopback webhook [ROUNDS]",
              MonitorBenchmark.run),
  "status-page": ("monitor --fleet --serve over N drifted sim: watches in headless Chromium: first paint, SOS -> visible (median of PRESSES), CPU with 10 pages [N] [PRESSES] [BINARY]",
                  StatusPageBenchmark.run),
  "alerts": ("offline alerts of N monitored sim: watches with OFF taken away, across a SIGKILL of the monitor: count, delay, duplicates [N] [OFF] [BINARY]",
             AlertBenchmark.run),
  "monitor-idle": ("CPU and memory of an idle tsapply monitor, from /proc [SECONDS]", MonitorBenchmark.idle),
  "validate": ("validate a 200-contact, 10-custom-reminder manifest beside a plain libyaml event scan", { arguments in
    ValidateBenchmark.run(arguments)
  }),
  "load": ("per-contact cost of loading the contacts workload beside a libyaml event scan [--contacts N] [--iterations K]",
           { try LoadBenchmark.run($0) }),
  "process": ("whole-process CPU and memory of a built tsapply: --version, validate 1 / 5000, plan 90 --binary PATH [--hello PATH] [--runs N]",
              ProcessBenchmark.run),
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let benchmark = benchmarks[name] else {
  print("usage: tsapply-bench <benchmark> [options]\n\nbenchmarks:")
  for (name, entry) in benchmarks.sorted(by: { $0.key < $1.key }) { print("  \(name): \(entry.0)") }
  exit(arguments.isEmpty ? 0 : 64)
}
do {
  exit(try await benchmark.1(Array(arguments.dropFirst())))
} catch {
  FileHandle.standardError.write(Data("error: \(error)\n".utf8))
  exit(1)
}
