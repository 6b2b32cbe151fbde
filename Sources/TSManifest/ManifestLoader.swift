import Foundation
import TSModel

/// What loading a manifest produced.
public struct ManifestLoadResult: Sendable {
  /// The validated manifest; `nil` when any diagnostic is an error.
  public var manifest: Manifest?
  /// Every problem found (errors and warnings), sorted by position.
  public var diagnostics: [Diagnostic]
  /// The bytes that were read (`nil` when the file could not be read), so diagnostics can be
  /// shown with their source line. Holds personal data: do not log or persist it.
  public var source: [UInt8]?

  /// A result; `source` is the input's bytes when they were read.
  public init(manifest: Manifest?, diagnostics: [Diagnostic], source: [UInt8]? = nil) {
    self.manifest = manifest
    self.diagnostics = diagnostics
    self.source = source
  }
}

/// The entry point of TSManifest: YAML bytes or a file → a validated `Manifest` plus every
/// diagnostic, in compiler style. Flow: `YAMLReader` (libyaml) → `ManifestDecoder` (schema,
/// with the rules in `Validation/`) → sorted diagnostics.
public enum ManifestLoader {
  /// Loads a manifest from `bytes` (UTF-8, optional BOM, LF or CRLF), naming `file` in positions.
  ///
  /// Never throws or crashes on bad input: every problem is a diagnostic. `manifest` is `nil`
  /// when any diagnostic is an error; warnings (e.g. a contact name cut to 32 bytes) leave it set.
  ///
  /// Contact lists of the plain shape are read from libyaml's events without building their
  /// nodes (`ContactListCapture.swift`); `capturesContactLists: false` reads every list through
  /// the tree, the reference the fast path is checked against (same manifest, same diagnostics).
  ///
  /// Emergency contacts written as references (`- {contact: NAME}`) are resolved against the
  /// file's own `contacts:` (`ContactReferences`); with `resolvesReferences: false` they are left
  /// for the fleet merge, which resolves them against every layer of a watch (`fmt` and a fleet's
  /// files, whose references may name a contact another file declares).
  public static func load(bytes: [UInt8], file: String, capturesContactLists: Bool = true,
                          resolvesReferences: Bool = true) -> ManifestLoadResult {
    // Captured contact lists are decoded as the reader hands their items over.
    let contactLists = capturesContactLists ? ContactListDecoder(file: file, source: bytes) : nil
    let read = YAMLReader.read(bytes: bytes, file: file, capturesContactLists: capturesContactLists,
                               contactSink: contactLists)
    var diagnostics = read.diagnostics
    var manifest: Manifest?
    // Decode whenever there is a tree (even beside duplicate-key errors), or an empty document.
    if read.root != nil || diagnostics.isEmpty {
      var decoder = ManifestDecoder(file: file, source: bytes, decodedContactLists: contactLists?.lists ?? [:])
      manifest = decoder.decode(read.root)
      // A YAML error stands for what follows from it at the same place: an alias to no anchor is
      // read as an empty value, which the decoder would report again as "found nothing (null)".
      let yamlErrors = Set(read.diagnostics.filter { $0.severity == .error }.compactMap(\.position))
      diagnostics += decoder.context.diagnostics.filter { $0.position.map { !yamlErrors.contains($0) } ?? true }
      if resolvesReferences, var resolved = manifest {
        diagnostics += ContactReferences.resolve(&resolved, declared: resolved.contacts?.value ?? [], scope: "under contacts: in this file",
                                                 // Only beside an error: with none, a name written but not declared is not
                                                 // excused (a reference dropped silently took the SOS contact away).
                                                 undeclaredKnown: diagnostics.hasErrors ? Self.contactNamesWritten(read.root) : [])
        if !diagnostics.hasErrors {
          diagnostics += ManifestRemoval.onlyRemovalsWarnings(resolved, lists: Set(ManifestRemoval.List.allCases), scope: "this file stands alone")
          diagnostics += ContactReferences.phoneMismatches(resolved, declared: resolved.contacts?.value ?? [])
        }
        manifest = resolved
      }
    }
    if diagnostics.hasErrors { manifest = nil }
    return ManifestLoadResult(manifest: manifest, diagnostics: diagnostics.sortedByPosition(), source: bytes)
  }

  /// Reads the file at `path` and loads it, naming it `displayName` in positions (the path as
  /// the user wrote it); `load(_:)` with `ManifestSource.file`.
  public static func load(path: String, displayName: String, resolvesReferences: Bool = true) -> ManifestLoadResult {
    load(.file(path: path, displayName: displayName), resolvesReferences: resolvesReferences)
  }

  /// Reads `source` (bounded: `ManifestSource.read`) and loads it. An input that cannot be read
  /// (missing, a directory, a device, a named pipe without a writer, over 1 MiB…) is one error
  /// diagnostic (`ManifestReadError.diagnostic`), and nothing further is read.
  public static func load(_ source: ManifestSource, resolvesReferences: Bool = true) -> ManifestLoadResult {
    switch source.read() {
    case .success(let bytes): load(bytes: bytes, file: source.displayName, resolvesReferences: resolvesReferences)
    case .failure(let problem): ManifestLoadResult(manifest: nil, diagnostics: [problem.diagnostic])
    }
  }

  /// The `name:` of every entry written under the document's `contacts:` as it is in the YAML,
  /// whether or not the entry decoded: an emergency reference to one whose declaration has an
  /// error is not also "none of that name is declared" (`ContactReferences.resolve`).
  static func contactNamesWritten(_ root: YAMLNode?) -> Set<String> {
    guard case .mapping(let entries)? = root?.content,
          let contacts = entries.first(where: { if case .scalar(let key) = $0.key.content { key.value == "contacts" } else { false } }),
          case .sequence(let items) = contacts.value.content else { return [] }
    var names: Set<String> = []
    for item in items {
      guard case .mapping(let fields) = item.content else { continue }
      for field in fields {
        if case .scalar(let key) = field.key.content, key.value == "name", case .scalar(let name) = field.value.content { names.insert(name.value) }
      }
    }
    return names
  }
}
