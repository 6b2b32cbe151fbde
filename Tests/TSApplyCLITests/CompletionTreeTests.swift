import Testing
@testable import TSApplyCLI
import TSDevice
import TSApplyNetworkCLI

/// The completion scripts are generated from the command table: every command path, option and
/// profile appears in each script, so a command or option added to `CLI.commands` is completed
/// without touching the scripts.
@Suite struct CompletionTreeTests {
  static func script(_ shell: String) async -> String {
    let out = BufferOutput()
    let status = await CLI.run(["completion", shell], context: CommandContext(stdout: out, stderr: BufferOutput(), currentDirectory: "/",
                                                                              toolset: .network))
    #expect(status == .success)
    return out.text
  }

  @Test func treeHasEveryCommandAndSubcommand() {
    let keys = CompletionTree.nodes(CLI.commands(.network)).map(\.key)
    #expect(keys.first == "tsapply")
    for command in CLI.commands(.network) {
      guard !command.isHidden else {
        #expect(!keys.contains("tsapply \(command.name)"), "hidden commands are not completed")
        continue
      }
      #expect(keys.contains("tsapply \(command.name)"))
      for sub in command.subcommands { #expect(keys.contains("tsapply \(command.name) \(sub.name)")) }
    }
  }

  @Test(arguments: ["bash", "zsh", "fish"])
  func everyOptionProfileAndCommandAppears(_ shell: String) async {
    let text = await Self.script(shell)
    for node in CompletionTree.nodes(CLI.commands(.network)) {
      #expect(text.contains(node.key), "\(node.key)")
      for option in node.options {
        for name in option.names {
          // fish spells --json as `-l json`, -json as `-o json`, -h as `-s h`.
          let spelled = shell != "fish" ? name
            : name.hasPrefix("--") ? "-l \(name.dropFirst(2))" : name.count == 2 ? "-s \(name.dropFirst())" : "-o \(name.dropFirst())"
          #expect(text.contains(spelled), "\(node.key) \(name)")
        }
      }
    }
    for profile in PlatformProfile.all { #expect(text.contains(profile.name)) }
  }

  @Test func optionCompletionDefaults() {
    #expect(OptionSpec(["--out"], value: "FILE", help: "").completion == .files)
    #expect(OptionSpec(["--device"], value: "SPEC", help: "").completion == .none)
    #expect(OptionSpec(["--json"], help: "").completion == .none)
    #expect(OptionSpec(["--profile"], value: "NAME", help: "", completion: .words(["a"])).completion == .words(["a"]))
  }

  @Test func positionalsOfManifestCommandsAreManifests() {
    var manifests: [String] = []
    for command in CLI.commands(.network) {
      let values: CompletionValues = command.positionals
      if values == .manifests { manifests.append(command.name) }
    }
    #expect(manifests == ["validate", "plan", "apply", "drift", "monitor", "fmt"])
  }
}
