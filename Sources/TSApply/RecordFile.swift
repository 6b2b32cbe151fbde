import Foundation
import TSModel

/// Reading tsapply's versioned JSON records (backups, last-applied records): the format version
/// first, so a record of another format is refused as such and not by its first odd field, then
/// the whole record, refused with the field that is wrong in plain words (`DecodingProblem`).
enum RecordFile {
  /// Why a record cannot be used: `backup format 2 is not supported (expected 1)`, `not a
  /// tsapply backup (state.contacts[0].phoneNum: missing)`.
  struct Refusal: Error {
    var reason: String
  }

  /// Only the version of a record.
  private struct Header: Decodable {
    var formatVersion: Int?
    enum CodingKeys: String, CodingKey { case formatVersion = "format_version" }
  }

  /// The record of type `T` in `data`, whose `format_version` must be `currentVersion`;
  /// `kind` names it in refusals (`backup`, `last-applied record`).
  static func decode<T: Decodable>(_ type: T.Type, from data: Data, currentVersion: Int, kind: String) throws(Refusal) -> T {
    // The fast path for a record in the form tsapply writes (`JSONReader`), then one pass of
    // JSONDecoder; a refusal reads it again the slow way, version first, for the plainest
    // reason (JSONDecoder words an error well only from its own top level).
    if let recordType = T.self as? any VersionedRecord.Type, let record = JSONReader.decode(recordType, from: data) {
      if record.formatVersion != currentVersion { throw unsupported(record.formatVersion, currentVersion, kind) }
      if let record = record as? T { return record }
    }
    if let versioned = try? JSONDecoder().decode(HeaderAndBody<Header, T>.self, from: data) {
      if let version = versioned.header?.formatVersion, version != currentVersion { throw unsupported(version, currentVersion, kind) }
      // JSONDecoder keeps one value of a key written twice without a word (the fast path reads
      // no such record): refused, since which one holds is not clear.
      if let repeated = JSONReader.firstRepeatedKey(in: data) { throw Refusal(reason: repeated.description) }
      return versioned.body
    }
    if let version = (try? JSONDecoder().decode(Header.self, from: data))?.formatVersion, version != currentVersion {
      throw unsupported(version, currentVersion, kind)
    }
    do {
      return try JSONDecoder().decode(T.self, from: data)
    } catch {
      throw Refusal(reason: "not a tsapply \(kind) (\(DecodingProblem.describe(error, in: data)))")
    }
  }

  private static func unsupported(_ version: Int, _ currentVersion: Int, _ kind: String) -> Refusal {
    Refusal(reason: "\(kind) format \(version) is not supported (expected \(currentVersion))")
  }
}

/// A record `JSONReader` can read, with its `format_version`: `RecordFile` reads it without
/// `JSONDecoder` when it is in the form tsapply writes.
protocol VersionedRecord: FastJSONDecodable {
  /// The record's `format_version`.
  var formatVersion: Int { get }
}
