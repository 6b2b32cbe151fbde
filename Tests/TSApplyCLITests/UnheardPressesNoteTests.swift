import Testing
@testable import TSApplyNetworkCLI
import TSMonitor

/// A monitor whose SOS presses go to `--on-sos` says at its start when nobody would be told
/// that a bridged watch's presses may not be heard (`events_missed`, `events_down` are alerts,
/// which `--on-sos` does not get): fresh-eyes finding, the README's `--on-sos` alone was told
/// nothing when the bridge restarted.
@Suite struct UnheardPressesNoteTests {
  @Test(arguments: [
    // (--events, SOS notifiers, alert notifiers, bridged, the kinds the note names; nil: no note)
    ("sos", 1, 0, true, "events_missed, events_down" as String?),
    ("sos", 1, 1, true, "events_missed, events_down"),
    ("sos,events_missed", 1, 1, true, "events_down"),
    ("sos,critical", 1, 1, true, nil),
    ("all", 1, 1, true, nil),
    ("critical", 1, 0, true, "events_missed, events_down"),
    ("sos", 1, 0, false, nil),
    ("sos", 0, 0, true, nil),
  ])
  func theNoteNamesTheAlertsNobodyGets(events: String, sos: Int, alerts: Int, bridged: Bool, named: String?) throws {
    let note = AlertOptions.unheardPressesNote(filter: try Alerts.parseFilter(events), sosNotifiers: sos, alertNotifiers: alerts, bridged: bridged)
    #expect((note == nil) == (named == nil), "\(note ?? "no note")")
    guard let named, let note else { return }
    #expect(note.contains("it restarted, or its event stream keeps breaking (\(named))."), "\(note)")
    #expect(note.contains("Add '--on-event COMMAND --events sos,critical'"), "\(note)")
  }
}
