import TSManifest
import TSModel

extension Manifest {
  /// Whether the manifest states the resource at `address` at all: the contact list, the
  /// emergency section, a built-in reminder, or (any custom reminder) the custom list — each
  /// when given, whatever fields it sets. A resource it does not state is left as the watch
  /// holds it by every plan of it.
  public func states(_ address: ResourceAddress) -> Bool {
    switch address {
    case .contacts: return contacts != nil
    case .emergency: return emergency != nil
    case .builtIn(.sedentary): return reminders?.sedentary != nil
    case .builtIn(.drinking): return reminders?.drinking != nil
    case .builtIn(.medicine): return reminders?.medicine != nil
    default: return address.rawValue.hasPrefix("reminder.custom[") && reminders?.custom != nil
    }
  }
}
