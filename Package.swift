// swift-tools-version:6.0
// tsapply: a declarative configuration reconciler for TopStep smartwatches.
//
// Targets are listed in data-flow order: YAML → Manifest → (Device state) → Plan → Apply → Device.
// No package dependencies: the machine cannot fetch packages. C libraries come from Debian
// through system-library targets (libyaml-dev, libssl-dev).
import PackageDescription

let package = Package(
  name: "tsapply",
  platforms: [.macOS(.v14)],
  products: [
    .executable(name: "tsapply", targets: ["tsapply"]),
  ],
  targets: [
    // libyaml (Debian libyaml-dev, pkg-config yaml-0.1): the YAML parser and emitter.
    .systemLibrary(
      name: "CYaml", pkgConfig: "yaml-0.1",
      providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
    // OpenSSL's libcrypto (Debian libssl-dev): SHA-256 for manifest hashes and state fingerprints.
    .systemLibrary(
      name: "CCrypto", pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
    // Pure values every stage shares: reminders, contacts, device state, capabilities, diagnostics.
    .target(name: "TSModel", dependencies: ["CCrypto"]),
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
    // The command line: argument parsing, commands, output streams, exit statuses.
    .target(name: "TSApplyCLI", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply", "TSEngine"]),
    // The executable: main.swift only.
    .executableTarget(name: "tsapply", dependencies: ["TSApplyCLI"]),
    // Benchmarks run by hand (`swift run -c release tsapply-bench`); never part of `swift test`.
    .executableTarget(name: "tsapply-bench", dependencies: ["TSModel", "TSManifest", "TSDevice", "TSPlan", "TSApply"]),
    // Helpers shared by the test targets: golden files, marked YAML, running the binary.
    .target(name: "TSTestSupport", dependencies: ["TSModel", "TSManifest", "TSPlan"], path: "Tests/TSTestSupport"),

    .testTarget(name: "TSModelTests", dependencies: ["TSModel", "TSTestSupport"]),
    .testTarget(name: "TSManifestTests", dependencies: ["TSManifest", "TSTestSupport"],
                exclude: ["Fixtures", "Golden"]),
    .testTarget(name: "TSDeviceTests", dependencies: ["TSDevice", "TSTestSupport"]),
    .testTarget(name: "TSPlanTests", dependencies: ["TSPlan", "TSManifest", "TSTestSupport"],
                exclude: ["Golden"]),
    .testTarget(name: "TSApplyTests", dependencies: ["TSApply", "TSDevice", "TSPlan", "TSManifest", "TSTestSupport"],
                exclude: ["Golden"]),
    .testTarget(name: "TSEngineTests", dependencies: ["TSEngine", "TSApply", "TSDevice", "TSPlan", "TSManifest", "TSTestSupport"]),
    .testTarget(name: "TSApplyCLITests", dependencies: ["TSApplyCLI", "TSTestSupport"]),
    .testTarget(name: "EndToEndTests", dependencies: ["tsapply", "TSTestSupport", "TSDevice", "TSPlan", "TSManifest"],
                exclude: ["Golden"]),
  ]
)

// Fuzzing (docs/fuzzing.md). TSFuzz holds the fuzz targets' properties; TSFuzzTests replays every
// seed and saved reproducer through them on each `swift test`. The libFuzzer driver is declared
// only when TSAPPLY_FUZZ=1, so plain `swift build` and `swift test` never build it: script/fuzz
// builds it with -sanitize=fuzzer,address in .build/fuzz.
package.targets += [
  .target(name: "TSFuzz", dependencies: ["TSModel", "TSManifest", "TSPlan", "TSDevice", "TSApply", "TSApplyCLI"]),
  .testTarget(name: "TSFuzzTests", dependencies: ["TSFuzz", "TSTestSupport", "TSApply", "TSDevice", "TSPlan", "TSManifest"],
              exclude: ["Corpus", "Dictionaries", "Reproducers"]),
]
if Context.environment["TSAPPLY_FUZZ"] == "1" {
  package.targets.append(.executableTarget(name: "tsapply-fuzz", dependencies: ["TSFuzz"]))
}
