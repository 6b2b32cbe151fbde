import Foundation
import TSModel

/// The contacts workload the performance targets are stated for (docs/performance.md): N
/// contacts with distinct names, about a third of them with non-ASCII letters (José, Zoë, Björn,
/// Łukasz), phones "+1555" and 7 digits; on the watch 5 % of them are missing, 10 % have another
/// phone and 5 % × N others are extra, in another order.
struct ContactWorkload {
  static let firstNames = ["Alex", "José", "Sam", "Zoë", "Maria", "Björn", "John", "Priya",
                           "Łukasz", "Emma", "Noah", "Olivia", "Liam", "Ava", "Omar", "Kim"]
  static let lastNames = ["Doe", "Smith", "García", "Nakamura", "Brown", "Lee", "Taylor",
                          "Wilson", "Nguyen", "Patel", "Khan", "Jones"]

  /// Number of contacts in the manifest.
  let count: Int

  /// Contact `index`: its name and phone (`phoneSalt` gives the same contact another number).
  func contact(_ index: Int, phoneSalt: Int = 0) -> Contact {
    let width = max(4, String(2 * count).count)
    let number = String(index)
    let name = "\(Self.firstNames[index % Self.firstNames.count]) \(Self.lastNames[(index / Self.firstNames.count) % Self.lastNames.count]) "
      + String(repeating: "0", count: max(0, width - number.count)) + number
    let digits = String((index + phoneSalt * 3_000_000) % 10_000_000)
    return Contact(name: name, phoneNum: "+1555" + String(repeating: "0", count: 7 - digits.count) + digits)
  }

  /// The manifest: every contact, block style, values in double quotes.
  var manifest: String {
    var text = "contacts:\n"
    for index in 0..<count {
      let contact = contact(index)
      text += "  - name: \"\(contact.name)\"\n    phone: \"\(contact.phoneNum)\"\n"
    }
    return text
  }

  /// The watch's contacts: every 20th contact missing, every 10th (from the 5th) with another
  /// phone, `count / 20` extra ones, in reverse order.
  var watchContacts: [Contact] {
    var contacts: [Contact] = []
    for index in 0..<count where index % 20 != 19 {
      contacts.append(index % 10 == 4 ? contact(index, phoneSalt: 1) : contact(index))
    }
    for extra in 0..<(count / 20) { contacts.append(contact(count + extra)) }
    return contacts.reversed()
  }
}
