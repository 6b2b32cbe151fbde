import Foundation
import TSManifest
import TSModel

/// Masks phone numbers, which are personal data, for `--redact` output.
public enum PhoneRedaction {
  /// Every digit but the last two becomes `*`; a leading `+` stays: `+15550100` → `+******00`.
  /// A number of two digits or fewer is masked whole (`12` → `**`), so no complete number is
  /// ever shown. Characters other than digits are kept as they are.
  public static func redact(_ phone: String) -> String {
    if isASCII(phone) {
      // Byte by byte: in ASCII each character is one byte ("\r\n", the exception, holds no digit).
      var bytes = Array(phone.utf8)
      let digitCount = bytes.reduce(0) { $0 + ($1.isPhoneDigit ? 1 : 0) }
      let keep = digitCount > 2 ? 2 : 0
      var seen = 0
      for index in bytes.indices where bytes[index].isPhoneDigit {
        seen += 1
        if seen <= digitCount - keep { bytes[index] = UInt8.mask }
      }
      return String(decoding: bytes, as: UTF8.self)
    }
    let digitCount = phone.filter(\.isPhoneDigit).count
    let keep = digitCount > 2 ? 2 : 0
    var seen = 0
    var result = ""
    for character in phone {
      if character.isPhoneDigit {
        seen += 1
        result.append(seen > digitCount - keep ? character : "*")
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// `text` with each of `phones` replaced by its redacted form wherever it stands alone (not
  /// inside a longer run of digits); longer numbers first so one number inside another is safe.
  public static func redact(_ text: String, phones: Set<String>) -> String {
    var result = text
    for phone in phones.sorted(by: { $0.count > $1.count }) where !phone.isEmpty {
      result = replaceStandalone(phone, with: redact(phone), in: result)
    }
    return result
  }

  /// Free text (e.g. a warning message) with every phone of `phones` and everything phone-like
  /// redacted: each phone where it stands as written, then by its digits whatever separates
  /// them (`redactDigits(of:in:)`), then every phone-like run (`redactPhoneLike`).
  public static func redactText(_ text: String, phones: Set<String>) -> String {
    redactPhoneLike(redactDigits(of: phones, in: redact(text, phones: phones)))
  }

  /// How many characters may stand between two digits of one written phone number
  /// (`+49 / 176`, `555 – 0100`).
  static let maxSeparatorRun = 3

  /// `text` with the digits of each of `phones` masked wherever they appear in order, whatever
  /// separates them (`KnownPhones.redact`).
  public static func redactDigits(of phones: Set<String>, in text: String) -> String {
    KnownPhones(phones).redact(text)
  }

  /// Phone numbers known to be in an output (a manifest's, a plan's), to be masked by their
  /// digits: made once, used for every line printed.
  public struct KnownPhones: Sendable {
    /// The digits of each phone with at least five of them (`PhoneCandidates.minimumDigits`),
    /// so positions and times are never taken for one.
    private let sequences: Set<String>
    /// The sequences of known texts holding a letter (names, notes: what the platform may cut;
    /// a phone number is never cut), in order, to find whether digits begin one (`beginsLonger`).
    private let ordered: [String]
    /// The sequences of such texts that begin a longer one: a name or a note holding a number,
    /// cut where the platform cuts it ("stored as …"), holds the number's first digits, so its
    /// last two are two more of the number's. Masked whole (fresh-eyes fe98 #1: beside the whole
    /// name, four of the last five digits were readable).
    private let cuts: Set<String>
    /// The lengths (in digits) among `sequences`, longest first: a match is tried at these
    /// lengths only, not at every length up to the longest (a source can hold a scalar of
    /// thousands of digits, which is a candidate too).
    private let lengths: [Int]

    /// Phones whose digits the run matching cannot find whole (a letter or a line break
    /// between them: `+1 555 O1OO 128` with the letter O for zero, `+1555x0100999`), with their
    /// masked forms; each is replaced where it stands as written, and as `ControlCharacters`
    /// escapes it, longest first.
    private let literals: [(written: String, masked: String)]
    /// `literals` as bytes when every one is ASCII and its masked form as long as it, so ASCII
    /// text can be masked in place (`redact(_:)`); `nil` otherwise.
    private let asciiLiterals: [(written: [UInt8], masked: [UInt8])]?
    /// With `asciiLiterals`, each literal's masked form by the literal: a text that is one
    /// literal whole (a contact's name in a plan or a drift event) is masked by one look-up.
    private let wholeLiterals: [String: String]

    /// The phones `phones` (as written: `"+49/176/9876/5432"`, or as stored).
    public init(_ phones: some Sequence<String>) {
      let phones = Set(phones)
      let sequences = Set(phones.map(PhoneRedaction.digits(of:)).filter { $0.count >= 5 })
      let texts = Set(phones.filter { $0.contains(where: \.isLetter) }.map(PhoneRedaction.digits(of:)).filter { $0.count >= 5 })
      let runs = KnownPhones(sequences: sequences, texts: texts, literals: [])
      self.init(sequences: sequences, texts: texts, literals: Self.literals(of: phones, missedBy: runs))
    }

    private init(sequences: Set<String>, texts: Set<String>, literals: [(written: String, masked: String)]) {
      self.sequences = sequences
      ordered = texts.sorted()
      cuts = Set(zip(ordered, ordered.dropFirst()).filter { $1.hasPrefix($0) }.map(\.0))
      lengths = Set(sequences.map(\.count)).sorted(by: >)
      self.literals = literals
      asciiLiterals = literals.allSatisfy {
        PhoneRedaction.isASCII($0.written) && PhoneRedaction.isASCII($0.masked) && $0.written.utf8.count == $0.masked.utf8.count
      } ? literals.map { (Array($0.written.utf8), Array($0.masked.utf8)) } : nil
      wholeLiterals = asciiLiterals == nil ? [:] : Dictionary(literals.map { ($0.written, $0.masked) }) { first, _ in first }
    }

    /// The phones of `phones` whose digits `runs` does not mask whole (more than the last two
    /// left), as written and as escaped, with their masked forms, longest first.
    private static func literals(of phones: Set<String>, missedBy runs: KnownPhones) -> [(written: String, masked: String)] {
      var literals: [(written: String, masked: String)] = []
      for phone in phones where PhoneRedaction.holdsDigits(phone, atLeast: 5) {
        // A phone of digits alone (after an optional `+`), as the watch stores them, is one run
        // that its own digits mask whole: no literal. Decided from its bytes, without masking it.
        if isDigitsOnly(phone) { continue }
        guard PhoneRedaction.holdsDigits(PhoneRedaction.redactPhoneLike(runs.redact(phone)), atLeast: 3) else { continue }
        literals.append((phone, PhoneRedaction.redact(phone)))
        let escaped = ControlCharacters.escaped(phone)
        if escaped != phone { literals.append((escaped, ControlCharacters.escaped(PhoneRedaction.redact(phone)))) }
      }
      return literals.sorted { $0.written.count > $1.written.count }
    }

    /// Whether `phone` is ASCII digits, after an optional leading `+`.
    private static func isDigitsOnly(_ phone: String) -> Bool {
      let bytes = phone.utf8
      let digits = bytes.first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes[...]
      return !digits.isEmpty && digits.allSatisfy(\.isPhoneDigit)
    }

    /// `text` with the digits of each phone masked wherever they appear in order, whatever
    /// separates them: all digits of a match but the phone's last two become `*`. Separators
    /// are up to `maxSeparatorRun` characters that are not letters, digits, quotes or line
    /// breaks (`/`, `_`, `:`, `,`, a tab, a no-break space, an en dash, U+2010 HYPHEN…), so
    /// `"+49/176/9876/5432"` and `49:176:9876:5432` are both caught by the phone
    /// `+4917698765432`.
    public func redact(_ text: String) -> String {
      guard !lengths.isEmpty else { return text }
      // Each replacement keeps the length in characters (a digit becomes one `*`), so carets
      // under a masked line still point where they did. Text that is ASCII (without a carriage
      // return, the one ASCII character Foundation's search may join to the next) is masked in
      // one array of bytes, each literal replaced where it stands: the same matches as
      // `replacingOccurrences(of:with:)` one literal after another, without a copy of the text
      // for each of them (a fleet's names make dozens of literals).
      let ascii = PhoneRedaction.isASCII(text)
      // Every literal and every run masked holds five digits or more (a literal that is not
      // ASCII cannot stand in ASCII text).
      if ascii && !PhoneRedaction.holdsDigits(text, atLeast: PhoneCandidates.minimumDigits) { return text }
      if let asciiLiterals, ascii, !text.utf8.contains(0x0D) {
        // The text is the literal: no longer literal fits, it is replaced whole, and its masked
        // form keeps two digits, too few for any other literal or run to match.
        if let masked = wholeLiterals[text] { return masked }
        var units = Array(text.utf8)
        for literal in asciiLiterals { PhoneRedaction.replace(literal.written, with: literal.masked, in: &units) }
        return redact(units: units)
      }
      var text = text
      for literal in literals where text.contains(literal.written) {
        text = text.replacingOccurrences(of: literal.written, with: literal.masked)
      }
      return PhoneRedaction.isASCII(text) ? redact(units: Array(text.utf8)) : redact(units: Array(text))
    }

    private func redact<Unit: PhoneTextUnit>(units: [Unit]) -> String {
      var units = units
      for run in PhoneRedaction.digitRuns(in: units) {
        let digits = run.map { units[$0] }
        var start = 0
        while start + 5 <= digits.count {
          let length = lengths.first { $0 <= digits.count - start && sequences.contains(Unit.text(digits[start..<(start + $0)])) }
          guard let length else {
            // A whole run that begins a known number is that number cut: masked whole.
            if start == 0, beginsLonger(Unit.text(digits)) {
              for index in run { units[index] = .mask }
              break
            }
            start += 1
            continue
          }
          let cut = cuts.contains(Unit.text(digits[start..<(start + length)]))
          for index in run[start..<(start + length - (cut ? 0 : 2))] { units[index] = .mask }
          start += length
        }
      }
      return Unit.text(units)
    }

    /// Whether `digits` begin a longer known sequence (binary search in `ordered`).
    private func beginsLonger(_ digits: String) -> Bool {
      var low = 0, high = ordered.count
      while low < high {
        let middle = (low + high) / 2
        if ordered[middle] < digits { low = middle + 1 } else { high = middle }
      }
      guard low < ordered.count, ordered[low] == digits else { return low < ordered.count && ordered[low].hasPrefix(digits) }
      return low + 1 < ordered.count && ordered[low + 1].hasPrefix(digits)
    }
  }

  /// Every occurrence of `target` in `units` replaced by `replacement` (as long as it), left to
  /// right, without overlaps: what Foundation's `replacingOccurrences(of:with:)` does to ASCII.
  static func replace(_ target: [UInt8], with replacement: [UInt8], in units: inout [UInt8]) {
    guard let first = target.first, target.count <= units.count, replacement.count == target.count else { return }
    var index = 0
    let last = units.count - target.count
    while index <= last {
      if units[index] == first, units[index..<(index + target.count)].elementsEqual(target) {
        units.replaceSubrange(index..<(index + target.count), with: replacement)
        index += target.count
      } else {
        index += 1
      }
    }
  }

  /// The digits of `text` (`Character.isPhoneDigit`) in order: `"+49 176"` → `"49176"`.
  static func digits(of text: String) -> String {
    isASCII(text) ? String(decoding: text.utf8.filter(\.isPhoneDigit), as: UTF8.self) : String(text.filter(\.isPhoneDigit))
  }

  /// Whether `text` holds at least `count` digits (`Character.isPhoneDigit`).
  static func holdsDigits(_ text: String, atLeast count: Int) -> Bool {
    var found = 0
    if isASCII(text) {
      for byte in text.utf8 where byte.isPhoneDigit {
        found += 1
        if found >= count { return true }
      }
    } else {
      for character in text where character.isPhoneDigit {
        found += 1
        if found >= count { return true }
      }
    }
    return found >= count
  }

  /// Whether `text` is ASCII only, so the masks may read it byte by byte (`PhoneTextUnit`).
  static func isASCII(_ text: String) -> Bool { text.utf8.allSatisfy { $0 < 0x80 } }

  /// The positions of the digits of each run of `characters` with five digits or more: digits
  /// joined by at most `maxSeparatorRun` separator characters (see `KnownPhones.redact`).
  fileprivate static func digitRuns<Unit: PhoneTextUnit>(in characters: [Unit]) -> [[Int]] {
    var runs: [[Int]] = []
    var current: [Int] = []
    var gap = 0
    for (index, character) in characters.enumerated() {
      if character.isPhoneDigit {
        current.append(index)
        gap = 0
      } else if !current.isEmpty, gap < maxSeparatorRun, !character.endsDigitRun {
        gap += 1
      } else {
        if current.count >= 5 { runs.append(current) }
        current = []
        gap = 0
      }
    }
    if current.count >= 5 { runs.append(current) }
    return runs
  }

  /// Whether `character` may stand between the digits of a phone number in free text that is not
  /// known to be one: `+`, white space but line breaks (a tab, a no-break space, a thin space),
  /// dashes (`-`, U+2010 HYPHEN, an en dash, a minus sign), dots, parentheses, `/`, `_`, and
  /// invisible characters. Not `:` or `,`, so times and lists of times stay readable.
  static func isPhoneFormatting(_ character: Character) -> Bool {
    if let ascii = character.asciiValue {
      return [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
              UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "/"), UInt8(ascii: "_")].contains(ascii)
    }
    if character == "\u{B7}" || character == "\u{2212}" { return true }
    guard let scalar = character.unicodeScalars.first, !character.isNewline else { return false }
    return scalar.properties.isWhitespace || scalar.properties.generalCategory == .dashPunctuation
      || scalar.properties.isDefaultIgnorableCodePoint
  }

  /// Free text (a diagnostic message, an echoed manifest line) with every phone-like run masked:
  /// a run of digits and phone formatting (`isPhoneFormatting`: spaces, dashes, dots,
  /// parentheses, `/`, `_`…) that holds five or more digits has all its digits but the last two
  /// replaced by `*`, formatting kept: `phone: "+1 (555) 010-0100"` → `phone: "+* (***) ***-**00"`.
  /// Times (`08:00`), byte counts, lines and columns have at most four digits in a run, so they
  /// stay readable.
  public static func redactPhoneLike(_ text: String) -> String {
    isASCII(text) ? redactPhoneLike(units: Array(text.utf8)) : redactPhoneLike(units: Array(text))
  }

  /// `redactPhoneLike(_:)` for text that quotes what tsapply wrote itself, which is left whole:
  /// its digit runs look like phone numbers but hold nothing of the wearer's, and a masked one
  /// names nothing the reader can find. The one rule every front end masks free text with (an
  /// agent's statuses and events, a monitor's events, the status page's reasons), so text
  /// masked twice reads as text masked once:
  /// - a revision (`5f0c3a1d9e2b7c44`: 16 lowercase hex digits, at least one a letter, standing
  ///   alone); a token without a letter is masked as any other digits;
  /// - a time as tsapply writes it (`InternetTime`: `2026-12-05T11:17:33.735Z`, to the second or
  ///   the millisecond, `Z` or an offset); a date alone is masked;
  /// - a backup's path (`/…/backups/20261201T231908.855Z.json`: absolute, no spaces, the file named
  ///   by its UTC time), which `tsapply restore` needs whole (docs/apply.md);
  /// - a reminder's period as the manifest's checks write it (`08:00–20:00`, with the en dash no
  ///   phone number holds);
  /// - a watch's event id (`e1248726-17`: a bridge's `BOOT-SEQUENCE`, a simulated watch's
  ///   `EPOCH-SEQUENCE`, docs/bridge-protocol.md "Events"), its 1–16 lowercase hex digits holding
  ///   a letter and a digit, which no phone number does; an id without either is masked;
  /// - the process a lock names (`pid 123407 on host`).
  public static func redactPhoneLikeSparingOwn(_ text: String) -> String {
    var result = "", rest = Substring(text)
    while let range = rest.range(of: ownWords, options: .regularExpression) {
      let token = rest[range]
      // A 16-digit token without a letter is no revision: masked as any other digits.
      let keep = !token.allSatisfy(\.isHexDigit) || token.contains { $0.isLetter }
      result += redactPhoneLike(String(rest[..<range.lowerBound])) + (keep ? String(token) : redactPhoneLike(String(token)))
      rest = rest[range.upperBound...]
    }
    return result + redactPhoneLike(String(rest))
  }

  /// What `redactPhoneLikeSparingOwn(_:)` leaves whole: a backup's path, a time, a revision, a period.
  private static let ownWords = #"(?<![^\s"'(])/[^\s"']*/backups/[0-9]{8}T[0-9]{6}(\.[0-9]{3})?Z\.json"#
    + #"|(?<![0-9A-Za-z])[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})(?![0-9A-Za-z])"#
    + #"|(?<![0-9A-Za-z])[0-9a-f]{16}(?![0-9A-Za-z])"#
    + #"|(?<![0-9:])[0-9]{2}:[0-9]{2}–[0-9]{2}:[0-9]{2}(?![0-9:])"#
    + #"|(?<![0-9A-Za-z-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{1,16}-[0-9]{1,13}(?![0-9A-Za-z-])"#
    + #"|(?<![0-9A-Za-z])pid [0-9]{1,10}(?= on host )"#

  /// `redactPhoneLikeSparingOwn(_:)`, leaving every occurrence of `spared` as it is too: a path
  /// tsapply made itself (a backup's, `STATE/watches/ID/backups/20261201T231908.855Z.json`), named
  /// exactly where the pattern would not find it (a state folder whose path holds a space). The
  /// text around it is masked as usual.
  public static func redactPhoneLike(_ text: String, sparing spared: String?) -> String {
    guard let spared, !spared.isEmpty else { return redactPhoneLikeSparingOwn(text) }
    var result = ""
    var rest = text[...]
    while let found = rest.range(of: spared) {
      result += redactPhoneLikeSparingOwn(String(rest[..<found.lowerBound])) + spared
      rest = rest[found.upperBound...]
    }
    return result + redactPhoneLikeSparingOwn(String(rest))
  }

  private static func redactPhoneLike<Unit: PhoneTextUnit>(units: [Unit]) -> String {
    var characters = units
    var digits: [Int] = []  // positions of the current run's digits
    func maskRun() {
      if digits.count >= 5 { for index in digits.dropLast(2) { characters[index] = .mask } }
      digits.removeAll(keepingCapacity: true)
    }
    for (index, character) in characters.enumerated() {
      if character.isPhoneDigit {
        digits.append(index)
      } else if !character.isPhoneFormatting {
        maskRun()
      }
    }
    maskRun()
    return Unit.text(characters)
  }

  /// Every phone number held in `plan` (before/after values of contacts and emergency).
  public static func phones(in plan: Plan) -> Set<String> {
    var phones = Set<String>()
    for change in plan.resourceChanges + plan.resourceDrift {
      for value in [change.before, change.after].compactMap({ $0 }) {
        switch value {
        case .contacts(let contacts): phones.formUnion(contacts.map(\.phoneNum))
        case .emergency(let emergency): phones.formUnion(emergency.contacts.map(\.phoneNum))
        case .reminder: break
        }
      }
    }
    return phones
  }

  /// Every number `--redact` must hide in output about `plan`: its phone numbers
  /// (`phones(in:)`) and every piece of free text in it that holds `PhoneCandidates.minimumDigits`
  /// digits or more — reminder names and notes, contact names and short names, as the watch
  /// holds them and as they will be written — so a number written into a name is masked by its
  /// digits wherever that name is printed (an address in a progress line, a partial-apply
  /// summary), whatever separates them (`555:123:4567` is not phone-like, but it is known).
  public static func numbers(in plan: Plan) -> Set<String> {
    numbers(in: plan.resourceChanges + plan.resourceDrift)
  }

  /// `numbers(in:)` for changes outside a plan (a drift report's, a monitor event's).
  public static func numbers(in changes: [ResourceChange]) -> Set<String> {
    var numbers = Set<String>()
    func add(_ text: String) {
      if holdsDigits(text, atLeast: PhoneCandidates.minimumDigits) { numbers.insert(text) }
    }
    for change in changes {
      for value in [change.before, change.after].compactMap({ $0 }) {
        switch value {
        case .reminder(let reminder):
          add(reminder.reminderName)
          add(reminder.notes)
        case .contacts(let contacts):
          for contact in contacts {
            numbers.insert(contact.phoneNum)
            add(contact.name)
            add(contact.shortName ?? "")
          }
        case .emergency(let emergency):
          for contact in emergency.contacts {
            numbers.insert(contact.phoneNum)
            add(contact.name)
            add(contact.shortName ?? "")
          }
        }
      }
    }
    return numbers
  }

  /// What `--redact` masks in the lines a command prints around a plan: resource addresses,
  /// names and messages that may quote the manifest or the watch (apply progress, the summary of
  /// a partial apply, errors, monitor events, fleet sections). One value per output, made from
  /// the numbers known to be in it (the manifest's `PhoneCandidates`, the plan's `numbers(in:)`),
  /// so every output path masks the same way as the plan itself. With `isOn` false every
  /// function returns its text unchanged (control characters of addresses still escaped).
  public struct Mask: Sendable {
    /// Whether anything is masked (`--redact`, or a monitor without `--show-sensitive`).
    public let isOn: Bool
    /// The numbers known, found and prepared when a text first needs them.
    private let known: Known

    /// A mask that masks nothing.
    public static let off = Mask(redact: false)

    /// A mask for `--redact` when `redact` is true, knowing `numbers` (as written or as stored).
    public init(redact: Bool, numbers: some Sequence<String> = [String]()) {
      let numbers = redact ? Set(numbers) : []
      self.init(redact: redact, known: Known { numbers })
    }

    /// A mask knowing the numbers a manifest's source holds (`PhoneCandidates.find(in:)`).
    public init(redact: Bool, manifest source: [UInt8]?) {
      self.init(redact: redact, known: Known { source.map(PhoneCandidates.find(in:)) ?? [] })
    }

    /// A mask knowing the numbers of a manifest's source and of `changes`: what
    /// `init(redact:manifest:)` then `adding(changes)` give, with the known numbers prepared once.
    public init(redact: Bool, manifest source: [UInt8]?, changes: [ResourceChange]) {
      self.init(redact: redact, known: Known {
        Set(source.map(PhoneCandidates.find(in:)) ?? []).union(PhoneRedaction.numbers(in: changes))
      })
    }

    private init(redact: Bool, known: Known) {
      isOn = redact
      self.known = redact ? known : Known { [] }
    }

    /// This mask also knowing the numbers of `plan` (`numbers(in:)`).
    public func adding(_ plan: Plan) -> Mask {
      isOn ? Mask(redact: true, known: Known { [known] in known.numbers.union(PhoneRedaction.numbers(in: plan)) }) : self
    }

    /// This mask also knowing the numbers of `changes` (`numbers(in:)`).
    public func adding(_ changes: [ResourceChange]) -> Mask {
      isOn ? Mask(redact: true, known: Known { [known] in known.numbers.union(PhoneRedaction.numbers(in: changes)) }) : self
    }

    /// A mask's numbers and their `KnownPhones`, made when a text first needs them: finding a
    /// manifest's candidates and preparing the phones costs more than masking, and most texts
    /// a monitor or a fleet masks (`contacts`, `reminder.drinking`) hold no number. Thread-safe.
    private final class Known: @unchecked Sendable {
      private let lock = NSLock()
      private var find: (@Sendable () -> Set<String>)?
      private var found: (numbers: Set<String>, phones: KnownPhones)?

      init(_ find: @escaping @Sendable () -> Set<String>) { self.find = find }

      private var prepared: (numbers: Set<String>, phones: KnownPhones) {
        lock.withLock {
          if let found { return found }
          let numbers = find?() ?? []
          let made = (numbers, KnownPhones(numbers))
          found = made
          find = nil
          return made
        }
      }

      /// Every number known.
      var numbers: Set<String> { prepared.numbers }

      /// `text` with the known numbers masked (`KnownPhones.redact`). ASCII text with fewer
      /// digits than a known phone has (`PhoneCandidates.minimumDigits`) holds none of them,
      /// and is given back without the numbers being found.
      func redact(_ text: String) -> String {
        if PhoneRedaction.isASCII(text) && !PhoneRedaction.holdsDigits(text, atLeast: PhoneCandidates.minimumDigits) { return text }
        return prepared.phones.redact(text)
      }
    }

    /// Free text from the manifest or the watch (a name, an address, a finding that lists
    /// addresses): the known numbers masked by their digits, then everything phone-like
    /// (`redactPhoneLike`).
    public func text(_ text: String) -> String {
      isOn ? PhoneRedaction.redactPhoneLike(known.redact(text)) : text
    }

    /// A message of tsapply or of the device that may quote a name or a number (a device error,
    /// why an apply stopped): only the known numbers masked, so the bridge addresses, ports,
    /// paths and times it names stay readable.
    public func message(_ text: String) -> String {
      isOn ? known.redact(text) : text
    }

    /// A resource address as printed for a person: control characters escaped
    /// (`ControlCharacters`), then masked as free text (`text(_:)`), exactly as in the plan.
    public func address(_ address: ResourceAddress) -> String {
      text(ControlCharacters.escaped(address.rawValue))
    }
  }

  private static func replaceStandalone(_ target: String, with replacement: String, in text: String) -> String {
    let characters = Array(text), pattern = Array(target)
    var output = ""
    var index = 0
    while index < characters.count {
      let end = index + pattern.count
      if end <= characters.count, Array(characters[index..<end]) == pattern,
         !(index > 0 && isNumberCharacter(characters[index - 1])),
         !(end < characters.count && characters[end].isPhoneDigit) {
        output += replacement
        index = end
      } else {
        output.append(characters[index])
        index += 1
      }
    }
    return output
  }

  private static func isNumberCharacter(_ character: Character) -> Bool {
    character.isPhoneDigit || character == "+"
  }
}

extension Character {
  /// Any decimal digit, ASCII or not (e.g. full-width １), so a number written in other digits
  /// is masked too; a digit carrying combining marks (`0` + U+0742, a keycap `1️⃣`) still reads
  /// as that digit, so it counts (and is masked whole) too.
  var isPhoneDigit: Bool {
    if let ascii = asciiValue { return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(ascii) }
    return unicodeScalars.first?.properties.numericType == .decimal
  }
}

/// A unit of text the phone masks read: a `Character`, or a byte of text that is ASCII only,
/// where each character is one byte and reading bytes spares the grapheme breaking. The masks
/// give the same text either way: the one character that is two bytes, "\r\n", is a line
/// break, and so is each of its bytes.
protocol PhoneTextUnit: Equatable {
  /// A decimal digit (`Character.isPhoneDigit`).
  var isPhoneDigit: Bool { get }
  /// Formatting inside a phone-like run (`PhoneRedaction.isPhoneFormatting`).
  var isPhoneFormatting: Bool { get }
  /// What ends a run of a known phone's digits: a letter, a line break or a quote.
  var endsDigitRun: Bool { get }
  /// The `*` a masked digit becomes.
  static var mask: Self { get }
  /// The text of `units`.
  static func text(_ units: some Collection<Self>) -> String
}

extension Character: PhoneTextUnit {
  var isPhoneFormatting: Bool { PhoneRedaction.isPhoneFormatting(self) }
  var endsDigitRun: Bool { isLetter || isNewline || self == "\"" || self == "'" }
  static var mask: Character { "*" }
  static func text(_ units: some Collection<Character>) -> String { String(units) }
}

extension UInt8: PhoneTextUnit {
  var isPhoneDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
  var isPhoneFormatting: Bool { Self.formatting[Int(self & 0x7F)] }
  var endsDigitRun: Bool { Self.endsRun[Int(self & 0x7F)] }
  static var mask: UInt8 { UInt8(ascii: "*") }
  static func text(_ units: some Collection<UInt8>) -> String { String(decoding: units, as: UTF8.self) }

  /// `PhoneRedaction.isPhoneFormatting` and `Character.endsDigitRun` by ASCII byte.
  private static let formatting: [Bool] = (0..<128).map { PhoneRedaction.isPhoneFormatting(Character(Unicode.Scalar(UInt8($0)))) }
  private static let endsRun: [Bool] = (0..<128).map { Character(Unicode.Scalar(UInt8($0))).endsDigitRun }
}
