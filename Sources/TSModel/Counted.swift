/// A count with its noun in the right number, for every message that prints a count:
/// `counted(1, "watch", "watches")` is `1 watch`, `counted(2, "contact")` is `2 contacts`
/// (the plural defaults to the singular plus `s`), so no output says `1 changes`.
public func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
  "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
