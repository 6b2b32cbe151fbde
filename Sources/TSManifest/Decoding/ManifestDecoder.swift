import TSModel

/// Decodes a `YAMLNode` tree into a `Manifest` by the manifest's schema (no Codable), running
/// the SDK rules in `Validation/` on each value as it is read and collecting every diagnostic.
///
/// Sections are opt-in: an absent key stays `nil` (unmanaged); a key with no value (null) is an
/// error that says how to leave the section unmanaged or how to clear it.
struct ManifestDecoder {
  static let rootKeys = ["version", "reminders", "contacts", "emergency"]
  static let emergencyKeys = ["sos", "contacts"]
  /// The only manifest format version.
  static let currentVersion = 1

  var context: DecodingContext
  /// The entries removed by name, as the lists are read (`Manifest.removals`).
  var removals: [ManifestRemoval] = []
  /// The contact lists the reader captured, already decoded (`ContactListDecoder`), by the start
  /// of the empty stand-in the tree holds for each; `contactList` picks them up there.
  let decodedContactLists: [CapturedContact.Mark: DecodedContactList]
  /// The file's text, where a message points at a character the tree does not place (the dash
  /// of a list item: `MistakeHints.listDash`); empty for a manifest not read from YAML text.
  let source: [UInt8]

  init(file: String, source: [UInt8] = [], decodedContactLists: [CapturedContact.Mark: DecodedContactList] = [:]) {
    context = DecodingContext(file: file)
    self.source = source
    self.decodedContactLists = decodedContactLists
  }

  /// The manifest held by `root` (nil or null root: "manifest is empty"); `nil` when the root
  /// is not a mapping. Diagnostics accumulate in `context`.
  mutating func decode(_ root: YAMLNode?) -> Manifest? {
    guard let root, !root.isNull else {
      context.error(SourcePosition(file: context.file, line: 1, column: 1), "",
                    "manifest is empty; write at least one of the sections reminders, contacts, emergency")
      return nil
    }
    guard let fields = context.mapping(root, path: "", keys: Self.rootKeys) else { return nil }
    var manifest = Manifest(file: context.file)
    if let node = fields["version"] { manifest.version = version(node) }
    if let entry = fields.entries["reminders"],
       let node = context.present(entry.value, path: "reminders",
         hint: "remove the key to leave reminders unmanaged, or list reminders under it") {
      manifest.reminders = reminders(node, keyPosition: entry.key.position)
    }
    if let entry = fields.entries["contacts"],
       let node = context.present(entry.value, path: "contacts",
         hint: "remove the key to leave the watch's contacts unmanaged, or write contacts: [] to remove them all") {
      manifest.contacts = contactList(node, path: "contacts").map { Located($0.contacts, at: entry.key.position) }
    }
    if let entry = fields.entries["emergency"],
       let node = context.present(entry.value, path: "emergency",
         hint: "remove the key to leave emergency contacts and SOS unmanaged, or give sos and contacts under it") {
      manifest.emergency = emergency(node, keyPosition: entry.key.position)
    }
    manifest.removals = removals
    return manifest
  }

  private mutating func version(_ node: YAMLNode) -> Int {
    guard context.hasStandardTag(node, path: "version", allowing: ["int"]) else { return Self.currentVersion }
    guard let value = context.plainInteger(node) else {
      if let scalar = node.scalar, !scalar.isPlain, Int(scalar.value) != nil {
        context.error(node.position, "version",
          "\"\(scalar.value)\" is quoted, so it is text; write version: \(scalar.value) without quotes")
      } else {
        context.error(node.position, "version", "expected the manifest format version \(Self.currentVersion), found \(describe(node))")
      }
      return Self.currentVersion
    }
    if value != Self.currentVersion {
      context.error(node.position, "version",
        "unsupported manifest version \(value); this tsapply reads version \(Self.currentVersion)")
    }
    return value
  }

  private mutating func emergency(_ node: YAMLNode, keyPosition: SourcePosition) -> ManifestEmergency? {
    guard let fields = context.mapping(node, path: "emergency", keys: Self.emergencyKeys) else { return nil }
    var emergency = ManifestEmergency(position: keyPosition)
    if let sos = fields["sos"], let value = context.bool(sos, path: "emergency.sos") {
      emergency.isSosOn = Located(value, at: sos.position)
    }
    var contactsWritten: Int?
    if let entry = fields.entries["contacts"],
       let list = context.present(entry.value, path: "emergency.contacts",
         hint: "remove the key to leave the watch's emergency contacts unmanaged, or write contacts: [] to remove them all") {
      let read = contactList(list, path: "emergency.contacts")
      emergency.contacts = read.map { Located($0.contacts, at: entry.key.position) }
      contactsWritten = read?.written
    }
    // A `contacts` key that could not be read, or a contact in it that could not, is already an
    // error (the contact is given, only wrong); SOS is checked otherwise.
    if fields.entries["contacts"] == nil || (emergency.contacts != nil && contactsWritten == emergency.contacts?.value.count) {
      SOSRule.check(emergency, into: &context.diagnostics)
    }
    return emergency
  }

  /// A scalar quoted for a message, or the node's kind.
  func describe(_ node: YAMLNode) -> String {
    if let scalar = node.scalar, !node.isNull { return "\"\(scalar.value)\"" }
    return node.kindDescription
  }
}
