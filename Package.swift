// swift-tools-version:6.0
// tsapply: a declarative configuration reconciler for TopStep smartwatches.
//
// Targets are listed in data-flow order: YAML → Manifest → (Device state) → Plan → Apply → Device.
// No package dependencies: the machine cannot fetch packages. C libraries come from Debian
// through system-library targets (libyaml-dev, libssl-dev, libmicrohttpd-dev, libmosquitto-dev,
// libcurl4-openssl-dev).
import PackageDescription

let package = Package(
  name: "tsapply",
  platforms: [.macOS(.v14), .iOS(.v17)],
  products: [
    .executable(name: "tsapply", targets: ["tsapply"]),
    .executable(name: "tsapply-net", targets: ["tsapply-net"]),
  ],
  targets: [
    // libyaml (Debian libyaml-dev, pkg-config yaml-0.1): the YAML parser and emitter.
    .systemLibrary(
      name: "CYaml", pkgConfig: "yaml-0.1",
      providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
    // OpenSSL's libcrypto (Debian libssl-dev): SHA-256 for manifest hashes and state fingerprints,
    // HMAC-SHA256, ChaCha20-Poly1305 for bridge sealing. Linux only: on Apple platforms the same
    // functions come from CryptoKit (Sources/TSModel/Digest.swift, Sources/TSBridge/AEAD.swift),
    // so the iOS app needs no OpenSSL.
    .systemLibrary(
      name: "CCrypto", pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
    // libmicrohttpd (Debian libmicrohttpd-dev, pkg-config libmicrohttpd): the bridge's HTTP server.
    .systemLibrary(
      name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
      providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),
    // libmosquitto (Debian libmosquitto-dev, pkg-config libmosquitto): the MQTT client of fleet agents.
    .systemLibrary(
      name: "CMosquitto", pkgConfig: "libmosquitto",
      providers: [.apt(["libmosquitto-dev"]), .brew(["mosquitto"])]),
    // glibc's posix_spawn_file_actions_addclosefrom_np (declared only under _GNU_SOURCE): the
    // programs the monitor runs (--on-sos, --on-event), and a broker tests start, inherit none
    // of its descriptors.
    .systemLibrary(name: "CSpawn"),
    // libcurl (Debian libcurl4-openssl-dev, pkg-config libcurl): the project's one HTTP client.
    .systemLibrary(
      name: "CCurl", pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
    // Pure values every stage shares: reminders, contacts, device state, capabilities, diagnostics.
    .target(name: "TSModel", dependencies: [.target(name: "CCrypto", condition: .when(platforms: [.linux]))]),
    // YAML → Manifest: libyaml wrapper, schema-typed decoding, SDK validation rules.
    .target(name: "TSManifest", dependencies: ["TSModel", "CYaml"], exclude: ["README.md"]),
    // The Device interface (mirrors the SDK) and the faithful simulated watch.
    .target(name: "TSDevice", dependencies: ["TSModel"], exclude: ["README.md"]),
    // (Manifest, DeviceState, DeviceCapabilities) → Plan; pure, cannot reach a device. Renderers.
    .target(name: "TSPlan", dependencies: ["TSModel", "TSManifest"], exclude: ["README.md"]),
    // Plan + Device → applied changes: ordering, backups, verification, saved plans, restore.
    .target(name: "TSApply", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice"], exclude: ["README.md"]),
    // The engine every front-end drives a watch through: device registry, watch identity and
    // state folder, whole-apply lock, safety gate, saved-plan checks, apply policy, signals.
    .target(name: "TSEngine", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply"]),
    // A small HTTP/1.1 server over libmicrohttpd: a handler closure, streaming responses, clean stop.
    .target(name: "TSHTTPServer", dependencies: ["CMicroHTTPD", "TSModel"], exclude: ["README.md"]),
    // The one HTTP client (libcurl's multi interface on one thread waiting in poll): bridge calls,
    // their event streams, webhooks.
    .target(name: "TSHTTPClient", dependencies: ["CCurl"]),
    // Bridge protocol v1 with no HTTP library (the iOS app reuses it): wire types, sealing,
    // replay window, routing to any Device, leases, event log.
    .target(name: "TSBridge", dependencies: ["TSModel", "TSDevice", .target(name: "CCrypto", condition: .when(platforms: [.linux]))]),
    // The reference bridge (`tsapply bridge serve`): TSBridge over TSHTTPServer, simulated watches.
    .target(name: "TSBridgeServer", dependencies: ["TSBridge", "TSHTTPServer", "TSDevice", "TSModel"]),
    // The `bridge:NAME[/WATCH-ID]` device: a Device over TSHTTPClient, and the stored pairings.
    .target(name: "TSBridgeClient", dependencies: ["TSBridge", "TSDevice", "TSModel", "TSHTTPClient"]),
    // The watchdog front-ends run (`tsapply monitor`, the fleet runner): the watch loop, events
    // and their ids, the durable SOS outbox, notifiers (command, signed webhook), backoff, rate limit.
    .target(name: "TSMonitor", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply", "TSEngine", "TSHTTPClient",
                                              .target(name: "CSpawn", condition: .when(platforms: [.linux]))]),
    // `tsapply monitor --serve`: the status page (HTML, live updates, token) over TSHTTPServer;
    // its state is TSMonitor's StatusBoard.
    .target(name: "TSStatusPage", dependencies: ["TSModel", "TSMonitor", "TSHTTPServer"]),
    // MQTT over libmosquitto: clients sharing one network thread, and a private local broker.
    .target(name: "TSMQTT", dependencies: ["CMosquitto", "TSModel", .target(name: "CSpawn", condition: .when(platforms: [.linux]))]),
    // Many watches: fleet.yaml, the merge rule, the concurrent runner, desired documents and
    // statuses over MQTT, the pull-based agent. Drives every watch through TSEngine.
    .target(name: "TSFleet", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply", "TSEngine", "TSMQTT", "TSMonitor"]),
    // The command line: argument parsing, the core commands, output streams, exit statuses. No
    // network library: the static `tsapply` is built from it alone (docs/performance.md).
    .target(name: "TSApplyCLI", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply", "TSEngine"]),
    // The commands and device scheme that need the network libraries: `bridge`, `monitor`,
    // `agent`, `status`, `--fleet`, `bridge:` devices.
    .target(name: "TSApplyNetworkCLI", dependencies: ["TSApplyCLI", "TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply",
                                                     "TSEngine", "TSBridge", "TSBridgeServer", "TSBridgeClient", "TSMonitor", "TSFleet",
                                                     "TSHTTPServer", "TSStatusPage"]),
    // The executables: main.swift only. `tsapply` is the core; on Linux its release build is one
    // static executable (-Xswiftc -static-executable passed by script/tsapply, docs/performance.md).
    // `tsapply-net` is the whole command line, linked dynamically with the network libraries;
    // `tsapply` hands it what needs them.
    .executableTarget(name: "tsapply", dependencies: ["TSApplyCLI"]),
    .executableTarget(name: "tsapply-net", dependencies: ["TSApplyNetworkCLI"]),
    // Benchmarks run by hand (`swift run -c release tsapply-bench`); never part of `swift test`.
    .executableTarget(name: "tsapply-bench", dependencies: ["TSModel", "TSManifest", "TSDevice", "TSPlan", "TSApply",
                                                        "TSEngine", "TSBridge", "TSBridgeServer", "TSBridgeClient", "TSMonitor",
                                                        "TSHTTPServer", "TSFleet", "TSMQTT", "TSStatusPage", "TSHeadlessChromium"]),
    // Headless Chromium over the DevTools pipe: the status page's end-to-end test and benchmark.
    .target(name: "TSHeadlessChromium", path: "Tests/TSHeadlessChromium"),
    // Helpers shared by the test targets: golden files, marked YAML, running the binary.
    .target(name: "TSTestSupport", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice"], path: "Tests/TSTestSupport"),

    .testTarget(name: "TSModelTests", dependencies: ["TSModel", "TSTestSupport"]),
    .testTarget(name: "TSManifestTests", dependencies: ["TSManifest", "TSTestSupport"],
                exclude: ["Fixtures", "Golden"]),
    .testTarget(name: "TSDeviceTests", dependencies: ["TSDevice", "TSTestSupport"]),
    .testTarget(name: "TSPlanTests", dependencies: ["TSPlan", "TSManifest", "TSTestSupport"],
                exclude: ["Golden"]),
    .testTarget(name: "TSApplyTests", dependencies: ["TSApply", "TSDevice", "TSPlan", "TSManifest", "TSTestSupport"],
                exclude: ["Golden"]),
    .testTarget(name: "TSEngineTests", dependencies: ["TSEngine", "TSApply", "TSDevice", "TSPlan", "TSManifest", "TSTestSupport"]),
    .testTarget(name: "TSBridgeTests", dependencies: ["TSBridge", "TSBridgeServer", "TSBridgeClient", "TSHTTPServer", "TSHTTPClient",
                                                      "TSDevice", "TSApply", "TSEngine", "TSTestSupport"]),
    .testTarget(name: "TSMonitorTests", dependencies: ["TSMonitor", "TSEngine", "TSDevice", "TSManifest", "TSModel", "TSTestSupport",
                                                       "TSStatusPage", "TSHTTPServer"]),
    .testTarget(name: "TSFleetTests", dependencies: ["TSFleet", "TSMQTT", "TSMonitor", "TSEngine", "TSDevice", "TSPlan", "TSManifest", "TSTestSupport"],
                exclude: ["Golden"]),
    .testTarget(name: "TSApplyCLITests", dependencies: ["TSApplyCLI", "TSApplyNetworkCLI", "TSTestSupport"]),
    .testTarget(name: "EndToEndTests", dependencies: ["tsapply", "tsapply-net", "TSTestSupport", "TSHeadlessChromium", "TSDevice", "TSPlan",
                                                      "TSManifest", "TSBridge", "TSHTTPServer", "TSHTTPClient", "TSMonitor", "TSMQTT"],
                exclude: ["Golden"]),
  ]
)

// Fuzzing (docs/fuzzing.md). TSFuzz holds the fuzz targets' properties; TSFuzzTests replays every
// seed and saved reproducer through them on each `swift test`. The libFuzzer driver is declared
// only when TSAPPLY_FUZZ=1, so plain `swift build` and `swift test` never build it: script/fuzz
// builds it with -sanitize=fuzzer,address in .build/fuzz.
package.targets += [
  .target(name: "TSFuzz", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply", "TSApplyCLI", "TSBridge"]),
  .testTarget(name: "TSFuzzTests", dependencies: ["TSFuzz", "TSTestSupport", "TSApply", "TSDevice", "TSPlan", "TSManifest", "TSBridge"],
              exclude: ["Corpus", "Dictionaries", "Reproducers"]),
]
if Context.environment["TSAPPLY_FUZZ"] == "1" {
  package.targets.append(.executableTarget(name: "tsapply-fuzz", dependencies: ["TSFuzz"]))
}
