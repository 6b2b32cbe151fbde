import TSModel

extension FieldFormatter {
  /// A paired contact's change, in place: `"Mom" { ~ phone = "+15550100" -> "+15550199" }` —
  /// the contact's name as the watch holds it, then only the keys that change, in the manifest's
  /// words (`name`, `phone`, `short_name`), phone numbers masked with `redact` (the changed line stays, so a
  /// reviewer still sees that the number changes).
  func contactChange(_ before: FieldValue?, _ after: FieldValue?) -> String {
    guard case .object(let old)? = before, case .object(let new)? = after else {
      return "\(format(before, field: "contacts")) -> \(format(after, field: "contacts"))"
    }
    let keys = (old.map(\.key) + new.map(\.key)).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    let changes = keys.compactMap { key -> String? in
      let a = old.first { $0.key == key }?.value, b = new.first { $0.key == key }?.value
      return a == b ? nil : "~ \(ManifestWords.contactKey(key)) = \(format(a, field: key)) -> \(format(b, field: key))"
    }
    let name = old.first { $0.key == "name" }?.value
    return format(name, field: "name") + " { " + changes.joined(separator: ", ") + " }"
  }
}
