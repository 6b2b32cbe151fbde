import Foundation
import TSModel
import TSMonitor

/// The status page's HTML (docs/monitor.md "Status page"): one document with no external
/// resource — styles and one small script inline — in three live parts: the open SOS presses,
/// the watches that need attention, and the grid of every watch. The server renders each part
/// (`sos`, `attention`, `grid`) and sends the parts that changed over server-sent events; the
/// script swaps them in, keeps the search and label filter applied and the "how long ago" texts
/// current. Without the script the page is complete as served (reload to update).
///
/// Accessibility: every state is a word beside its colour; colours meet WCAG AA (4.5:1) against
/// their background; the layout is one column below 800 px and at 200 % zoom; everything is
/// reachable with the keyboard (a skip link, native form controls, the grid scrolls sideways
/// with focus); the SOS part is an assertive live region; `<title>` starts with the open SOS count.
public enum StatusPageHTML {
  /// The parts the server sends on their own.
  public enum Part: String, CaseIterable, Sendable {
    case sos, attention, grid
  }

  /// The whole page for `snapshot`; `canAcknowledge` when acknowledging is possible (a token
  /// is configured), `heading` names what is monitored.
  public static func page(_ snapshot: StatusBoard.Snapshot, heading: String, canAcknowledge: Bool) -> String {
    let labels = Set(snapshot.rows.flatMap(\.labels)).sorted()
    var html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    html += "<title>\(escape(title(snapshot, heading: heading)))</title><style>\(style)</style></head><body>"
    html += "<a class=\"skip\" href=\"#attention\">Skip to watches needing attention</a>"
    html += "<header><h1>\(escape(heading))</h1>"
    html += "<p id=\"conn\" role=\"status\">Served \(escape(clock(snapshot.time))) UTC; reload for news</p>"
    html += "<form id=\"filters\" role=\"search\" hidden onsubmit=\"return false\">"
    html += "<label for=\"q\">Search watches</label> <input id=\"q\" type=\"search\" autocomplete=\"off\">"
    html += "<span id=\"labelfilter\"\(labels.isEmpty ? " hidden" : "")> <label for=\"label\">Label</label> <select id=\"label\"><option value=\"\">All labels</option>"
    for label in labels { html += "<option>\(escape(label))</option>" }
    html += "</select></span> <span id=\"shown\" aria-live=\"polite\"></span></form></header><main>"
    html += "<section id=\"sos\" aria-labelledby=\"sos-h\">\(part(.sos, snapshot, canAcknowledge: canAcknowledge))</section>"
    html += "<section id=\"attention\" tabindex=\"-1\" aria-labelledby=\"attention-h\">\(part(.attention, snapshot, canAcknowledge: canAcknowledge))</section>"
    html += "<section id=\"grid\" aria-labelledby=\"grid-h\">\(part(.grid, snapshot, canAcknowledge: canAcknowledge))</section>"
    html += "</main><script>\(script)</script></body></html>\n"
    return html
  }

  /// `<title>`: the open SOS count first, so it shows in a tab: `2 open SOS – Ward A`, `No open SOS – Ward A`.
  public static func title(_ snapshot: StatusBoard.Snapshot, heading: String) -> String {
    (snapshot.openSOS.isEmpty ? "No open SOS" : "\(snapshot.openSOS.count) open SOS") + " – " + heading
  }

  /// The inner HTML of one part.
  public static func part(_ part: Part, _ snapshot: StatusBoard.Snapshot, canAcknowledge: Bool) -> String {
    switch part {
    case .sos: sos(snapshot, canAcknowledge: canAcknowledge)
    case .attention: attention(snapshot)
    case .grid: grid(snapshot)
    }
  }

  private static func sos(_ snapshot: StatusBoard.Snapshot, canAcknowledge: Bool) -> String {
    guard !snapshot.openSOS.isEmpty else {
      var html = "<h2 id=\"sos-h\">SOS</h2><p class=\"calm\" role=\"status\">No open SOS press.</p>"
      if let last = snapshot.acknowledged.first {
        html += "<p class=\"note\">Last acknowledged: \(escape(last.watch)), pressed \(time(last.time, snapshot.time)), "
          + "acknowledged by \(escape(last.acknowledgedBy ?? "?")) \(time(last.acknowledgedAt ?? last.time, snapshot.time)).</p>"
      }
      return html
    }
    var html = "<h2 id=\"sos-h\" class=\"alarm\">SOS: \(snapshot.openSOS.count) open press\(snapshot.openSOS.count == 1 ? "" : "es")</h2>"
    html += "<div role=\"alert\">"
    for press in snapshot.openSOS {
      html += "<article class=\"sos\" data-name=\"\(escape(press.watch))\" data-labels=\"\(escape(labels(of: press.watch, snapshot)))\">"
      if let missed = press.missed {
        // A gap in the watch's events: a press may have been made and never heard.
        html += "<p class=\"sos-title\"><span class=\"badge\">SOS?</span> <strong>\(escape(press.watch))</strong></p>"
        html += "<p>A press may have been missed (found \(time(press.time, snapshot.time))): \(escape(missed)). Ask the wearer, then acknowledge.</p>"
      } else {
        html += "<p class=\"sos-title\"><span class=\"badge\">SOS</span> <strong>\(escape(press.watch))</strong></p>"
        html += "<p>Pressed \(time(press.time, snapshot.time))\(heardLate(press))</p>"
        for failing in press.notDelivered {
          html += "<p class=\"note\">Not delivered to \(escape(failing.notifier)) yet: failing since \(time(failing.since, snapshot.time)); the monitor keeps trying.</p>"
        }
      }
      // The event's id, as the alerts (`--on-sos`'s ID, the webhook's `id`) and the log name it:
      // two presses in one second are told apart, and a card matched with its alert.
      html += "<p class=\"note\">Event \(escape(press.id)) in the alerts and the log.</p>"
      if canAcknowledge {
        let field = "by-" + identifier(press.id)
        html += "<form method=\"post\" action=\"/ack\" class=\"ack\"><input type=\"hidden\" name=\"id\" value=\"\(escape(press.id))\">"
        html += "<label for=\"\(field)\">Your name</label> <input id=\"\(field)\" name=\"by\" required maxlength=\"\(StatusBoard.maxAcknowledgerLength)\" autocomplete=\"name\"> "
        html += "<button type=\"submit\">Acknowledge \(press.missed == nil ? "SOS" : "possible missed SOS") on \(escape(press.watch))</button></form>"
      } else {
        html += "<p class=\"note\">Acknowledging on the page needs the monitor started with --serve-token-file.</p>"
      }
      html += "</article>"
    }
    return html + "</div>"
  }

  private static func attention(_ snapshot: StatusBoard.Snapshot) -> String {
    let rows = snapshot.attention
    var html = "<h2 id=\"attention-h\">Needs attention: \(rows.isEmpty ? "none" : counted(rows.count, "watch", "watches"))</h2>"
    if let problem = snapshot.monitorProblem {
      html += "<div class=\"rollout act\" role=\"alert\"><p><strong>\(escape(problem))</strong></p>"
      html += snapshot.monitorProblemSince.map { "<p>Since \(time($0, snapshot.time)).</p>" } ?? ""
      html += "</div>"
    }
    for line in snapshot.undeliveredOfRemoved {
      html += "<div class=\"rollout act\" role=\"alert\"><p><strong>\(escape(line))</strong></p></div>"
    }
    if let rollout = snapshot.rollout, let head = rollout.lines.first {
      html += "<div class=\"rollout\(rollout.needsAttention ? " act" : "")\"><p><strong>\(escape(head))</strong></p>"
      html += rollout.lines.dropFirst().map { "<p>\(escape($0.trimmingCharacters(in: .whitespaces)))</p>" }.joined() + "</div>"
    }
    guard !rows.isEmpty else { return html + calm(snapshot) }
    html += "<ul class=\"attention\">"
    for row in rows {
      html += "<li data-name=\"\(escape(row.name))\" data-labels=\"\(escape(row.labels.joined(separator: " ")))\">"
      html += "<strong>\(escape(row.name))</strong> \(badge(row.state)) "
      html += row.reasons.map { "<span class=\"reason\">\(escape($0))</span>" }.joined(separator: " ")
      if let since = row.offlineSince { html += " <span class=\"note\">Offline since \(time(since, snapshot.time)).</span>" }
      if let seen = row.lastSeen { html += " <span class=\"note\">Last seen \(time(seen, snapshot.time)).</span>" }
      html += "</li>"
    }
    return html + "</ul>"
  }

  /// The line under "Needs attention: none", counted from the rows the grid shows: calm only
  /// when every watch is in sync or being checked; else what the others are (offline for less
  /// than the threshold, the only state that needs no attention yet).
  private static func calm(_ snapshot: StatusBoard.Snapshot) -> String {
    let states = snapshot.states
    let others = StatusBoard.states.filter { $0 != "in sync" && $0 != "checking" }.compactMap { state in states[state].map { "\($0) \(state)" } }
    guard !others.isEmpty else { return "<p class=\"calm\">Every watch is in sync or being checked.</p>" }
    let threshold = StatusBoard.duration(Backoff.seconds(snapshot.offlineThreshold))
    return "<p class=\"note\">Not every watch is in sync: \(escape(others.joined(separator: ", "))), for less than \(threshold) "
      + "(listed here once longer).</p>"
  }

  private static func grid(_ snapshot: StatusBoard.Snapshot) -> String {
    let states = snapshot.states
    let summary = StatusBoard.states.compactMap { state in states[state].map { "\($0) \(state)" } }.joined(separator: ", ")
    var html = "<h2 id=\"grid-h\">All watches: \(snapshot.rows.count)</h2><p class=\"note\">\(escape(summary))</p>"
    html += "<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\"grid-h\"><table><thead><tr>"
    html += "<th scope=\"col\">Watch</th><th scope=\"col\">Labels</th><th scope=\"col\">State</th><th scope=\"col\">Last seen</th>"
    html += "<th scope=\"col\">Drift</th><th scope=\"col\">Pending</th><th scope=\"col\">Applied revision</th></tr></thead><tbody>"
    for row in snapshot.rows {
      html += "<tr data-name=\"\(escape(row.name))\" data-labels=\"\(escape(row.labels.joined(separator: " ")))\">"
      html += "<th scope=\"row\">\(escape(row.name))</th><td>\(escape(row.labels.joined(separator: ", ")))</td><td>\(badge(row.state))</td>"
      html += "<td>\(row.lastSeen.map { time($0, snapshot.time) } ?? "–")</td>"
      html += "<td>\(row.drift.map(String.init) ?? "–")</td><td>\(row.pending.map(String.init) ?? "–")</td>"
      html += "<td>\(row.appliedRevision.map { escape(String($0.prefix(12))) } ?? "–")</td></tr>"
    }
    return html + "</tbody></table></div>"
  }

  // MARK: Pieces

  /// The state as a word in a coloured box (the word carries it; the colour only helps).
  private static func badge(_ state: String) -> String {
    "<span class=\"state s-\(state.replacingOccurrences(of: " ", with: "-"))\">\(escape(state))</span>"
  }

  /// A time as `<time>`: the UTC clock and how long ago as served; the script shows local time
  /// and keeps "ago" current.
  private static func time(_ date: Date, _ now: Date) -> String {
    let stamp = MonitorEvent.timestamp(date)
    return "<time datetime=\"\(stamp)\">\(clock(date)) UTC</time> (<span class=\"ago\" data-t=\"\(stamp)\">"
      + "\(StatusBoard.duration(now.timeIntervalSince(date))) ago</span>)"
  }

  /// `, heard late at 22:56:10 UTC` for a press heard well after it was made (replayed after
  /// an outage: the wait counts from the press, not from when it was heard); empty otherwise.
  private static func heardLate(_ press: StatusBoard.SOSPress) -> String {
    guard let heard = press.heardAt, heard > press.time else { return "" }
    return ", heard late at <time datetime=\"\(MonitorEvent.timestamp(heard))\">\(clock(heard)) UTC</time>"
  }

  private static func clock(_ date: Date) -> String {
    let stamp = MonitorEvent.timestamp(date)
    let start = stamp.index(stamp.startIndex, offsetBy: 11)
    return String(stamp[start..<stamp.index(start, offsetBy: 8)])
  }

  private static func labels(of watch: String, _ snapshot: StatusBoard.Snapshot) -> String {
    snapshot.rows.first { $0.name == watch }?.labels.joined(separator: " ") ?? ""
  }

  private static func identifier(_ text: String) -> String {
    String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" })
  }

  private static func counted(_ count: Int, _ one: String, _ many: String) -> String { "\(count) \(count == 1 ? one : many)" }

  /// `text` safe in HTML text and in double- or single-quoted attributes.
  public static func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text.unicodeScalars {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default: out.unicodeScalars.append(character)
      }
    }
    return out
  }

  // MARK: Style and script

  /// The page's styles. Colours: text #1a1a1a on #ffffff (17:1); each state's text on its
  /// background at least 7:1; the SOS white on #a4001d 8.1:1; links #0b4f9c on white 8.0:1
  /// (WCAG 2 contrast; `StatusPageServerTests` checks every `color` / `background` pair here).
  public static let style = """
    *{box-sizing:border-box}body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff}\
    header,main{padding:0 1rem;max-width:90rem;margin:0 auto}h1{font-size:1.5rem;margin:.75rem 0 .25rem}h2{font-size:1.25rem;margin:1rem 0 .5rem}\
    a{color:#0b4f9c}:focus-visible{outline:3px solid #0b4f9c;outline-offset:2px}\
    .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.25rem .5rem;z-index:2}\
    #conn{margin:0 0 .5rem;color:#4a4a4a}#filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:0 0 .5rem}\
    input,select,button{font:inherit;padding:.35rem .5rem;border:2px solid #4a4a4a;border-radius:4px;background:#fff;color:#1a1a1a}\
    button{background:#0b4f9c;color:#fff;border-color:#0b4f9c;cursor:pointer;font-weight:600}\
    .alarm{color:#a4001d;font-size:1.75rem}.sos{background:#a4001d;color:#fff;border-radius:8px;padding:.75rem 1rem;margin:0 0 .75rem;font-size:1.25rem}\
    .sos p{margin:.25rem 0}.sos-title{font-size:2rem;line-height:1.2}.sos .badge{display:inline-block;border:3px solid #fff;padding:0 .4rem;margin-right:.4rem;font-weight:800}\
    .sos .note{color:#fff}.sos label{font-weight:600}.sos input{max-width:14rem}.sos button{background:#fff;color:#a4001d;border-color:#fff}\
    .calm{color:#0d5a2a;font-weight:600}.note{color:#4a4a4a}.attention{list-style:none;padding:0;margin:0}\
    .attention li{border-left:6px solid #8a4b00;background:#fff6e5;padding:.5rem .75rem;margin:0 0 .5rem}.reason{display:block}\
    .rollout{border-left:6px solid #4a4a4a;background:#f0f0f0;padding:.5rem .75rem;margin:0 0 .75rem}.rollout p{margin:.15rem 0}\
    .rollout.act{border-left-color:#8a4b00;background:#fff6e5}\
    .scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.95rem}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #c8c8c8;white-space:nowrap}\
    thead th{background:#f0f0f0}tbody th{font-weight:600}\
    .state{display:inline-block;padding:0 .4rem;border-radius:4px;border:1px solid currentColor;font-weight:600}\
    .s-in-sync{color:#0d5a2a;background:#e6f4ea}.s-drift,.s-pending,.s-new-revision,.s-no-record{color:#6b3a00;background:#fff1d6}\
    .s-offline,.s-failed,.s-refused,.s-invalid,.s-retrying{color:#8c0018;background:#fde8ea}.s-checking{color:#3d3d3d;background:#eeeeee}\
    [hidden]{display:none!important}\
    @media (max-width:50rem){.sos-title{font-size:1.5rem}th,td{padding:.25rem .35rem}}
    """

  /// The page's only script: server-sent events with the browser's own reconnection, the
  /// filter, local times and "ago". Its SHA-256 goes into the Content-Security-Policy.
  public static let script = """
    (function(){"use strict";\
    var q=document.getElementById("q"),lab=document.getElementById("label"),shown=document.getElementById("shown"),\
    conn=document.getElementById("conn");document.getElementById("filters").hidden=false;\
    function ago(s){s=Math.max(0,Math.floor(s));if(s<60)return s+" s";if(s<3600)return Math.floor(s/60)+" min";\
    if(s<86400){var m=Math.floor(s%3600/60);return Math.floor(s/3600)+" h"+(m?" "+m+" min":"");}\
    var h=Math.floor(s%86400/3600);return Math.floor(s/86400)+" d"+(h?" "+h+" h":"");}\
    function times(){var now=Date.now();document.querySelectorAll(".ago").forEach(function(e){\
    e.textContent=ago((now-Date.parse(e.getAttribute("data-t")))/1000)+" ago";});\
    document.querySelectorAll("time[datetime]").forEach(function(e){if(e.getAttribute("data-local"))return;\
    var d=new Date(e.getAttribute("datetime"));e.textContent=d.toDateString()===new Date().toDateString()?d.toLocaleTimeString():d.toLocaleString();\
    e.setAttribute("data-local","1");});}\
    function filter(){var t=q.value.trim().toLowerCase(),l=lab.value,n=0,all=0;\
    document.querySelectorAll("#grid tbody tr, #attention li, #sos article").forEach(function(e){\
    var ok=(!t||e.getAttribute("data-name").toLowerCase().indexOf(t)>=0)&&(!l||(" "+e.getAttribute("data-labels")+" ").indexOf(" "+l+" ")>=0);\
    e.hidden=!ok;if(e.tagName==="TR"){all++;if(ok)n++;}});\
    shown.textContent=(t||l)?n+" of "+all+" watches shown":"";}\
    function swap(id,html){var box=document.getElementById(id),a=document.activeElement,keep=null;\
    if(a&&a.id&&box.contains(a))keep={id:a.id,value:a.value};box.innerHTML=html;\
    if(keep){var e=document.getElementById(keep.id);if(e){if(keep.value!==undefined)e.value=keep.value;e.focus();}}}\
    q.addEventListener("input",filter);lab.addEventListener("change",filter);\
    document.addEventListener("submit",function(ev){var f=ev.target;if(!f.classList||!f.classList.contains("ack"))return;\
    ev.preventDefault();fetch("/ack",{method:"POST",credentials:"same-origin",headers:{"X-Requested-With":"fetch"},body:new URLSearchParams(new FormData(f))})\
    .then(function(r){if(!r.ok)conn.textContent="Could not acknowledge (HTTP "+r.status+")";});});\
    if(window.EventSource){var es=new EventSource("/events");\
    es.addEventListener("open",function(){conn.textContent="Live: updates as they happen";});\
    es.addEventListener("error",function(){conn.textContent="Connection lost; reconnecting…";});\
    es.addEventListener("update",function(ev){var d=JSON.parse(ev.data);\
    ["sos","attention","grid"].forEach(function(k){if(typeof d[k]==="string")swap(k,d[k]);});\
    if(d.title)document.title=d.title;if(d.labels){var cur=lab.value;lab.innerHTML="<option value=\\"\\">All labels</option>";\
    d.labels.forEach(function(x){var o=document.createElement("option");o.textContent=x;lab.appendChild(o);});lab.value=cur;\
    document.getElementById("labelfilter").hidden=d.labels.length===0;}\
    times();filter();});}\
    times();filter();setInterval(times,10000);})();
    """
}
