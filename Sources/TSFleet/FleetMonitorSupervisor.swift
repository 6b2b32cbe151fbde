import Foundation
import TSEngine
import TSModel
import TSMonitor

extension FleetMonitor {
  /// How often a running `monitor --fleet` looks at its fleet file for watches added, removed,
  /// renamed or given another device (at most: a shorter check interval looks as often).
  public static let fleetFileLook: Duration = .seconds(5)

  /// Says that the fleet file `fleetFile` no longer names the watches `leaving` (docs/fleet.md
  /// "Monitoring a fleet"): a `removed` event says `what` becomes of each (to `emit` and to
  /// `observers` under its name: its open alerts are closed), with its device from `devices`; a
  /// notice says what this monitor did (`done`); then each leaves the page (`board`).
  static func announceRemoved(_ leaving: [String], devices: [String: String], fleetFile: String, what: String, done: String,
                              time: Date, board: StatusBoard?, emit: @Sendable (MonitorEvent) -> Void,
                              observers: [any MonitorObserver], notice: @Sendable (String) -> Void) {
    for name in leaving {
      let event = MonitorEvent(time: time, watch: name, kind: .removed, message: "\(fleetFile) no longer names this watch: \(what)",
                               fields: ["fleet": .string(fleetFile), "device": devices[name].map(JSONValue.string) ?? .null])
      emit(event)
      for observer in observers { observer.record(event, for: [name]) }
    }
    notice("\(fleetFile) no longer names \(counted(leaving.count, "watch", "watches")) (\(leaving.joined(separator: ", "))): "
           + "\(done) \(leaving.count == 1 ? "it" : "them").")
    // Said before the page no longer shows them.
    board?.remove(leaving)
  }

  /// Follows the fleet file of a fleet over MQTT while `monitor --fleet` runs, at every
  /// `fleetFileLook` until the task is cancelled: a watch added joins the page (`board`) and the
  /// alerts; one removed (missing at two looks in a row, `Membership`) leaves them, its events
  /// still shown under its identity and its SOS presses still delivered (the agents still serve
  /// it); `follower` is told the names the watches have now. `members`: the fleet as loaded.
  public static func followFleetFile(_ manifests: FleetManifests, members loaded: [FleetMember], fleetFile: String,
                                     follower: Follower, board: StatusBoard?, now: @escaping @Sendable () -> Date,
                                     emit: @escaping @Sendable (MonitorEvent) -> Void, observers: [any MonitorObserver],
                                     notice: @escaping @Sendable (String) -> Void) -> Task<Void, Never> {
    Task {
      var membership = Membership(loaded.map(\.name))
      var members = Dictionary(loaded.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      while !Task.isCancelled {
        try? await Task.sleep(for: fleetFileLook)
        guard !Task.isCancelled, let current = try? manifests.members() else { continue }
        board?.relabel(boardMembers(current))
        let leaving = membership.leaving(Set(current.map(\.name)))
        let added = current.filter { !membership.names.contains($0.name) }
        membership.join(added.map(\.name))
        for member in added { members[member.name] = member }
        guard !leaving.isEmpty || !added.isEmpty else { continue }
        follower.rename(Dictionary(members.values.filter { membership.names.contains($0.name) }.map { ($0.watch.watchID, $0.name) },
                                   uniquingKeysWith: { first, _ in first }))
        if !leaving.isEmpty {
          announceRemoved(leaving, devices: members.mapValues(\.device), fleetFile: fleetFile,
                          what: "it left the status page and its alerts are closed; what its agent still reports of it is shown "
                            + "under its identity, and its SOS presses are still delivered",
                          done: "stopped following", time: now(), board: board, emit: emit, observers: observers, notice: notice)
          for name in leaving { members[name] = nil }
        }
        if !added.isEmpty {
          // Said before the page shows them.
          notice("\(fleetFile) names \(counted(added.count, "more watch", "more watches")) (\(added.map(\.name).joined(separator: ", "))): "
                 + "following \(added.count == 1 ? "it" : "them") too.")
          board?.add(boardMembers(added))
        }
      }
    }
  }

  /// `monitor --fleet` over watches tsapply reaches itself, while it runs (docs/fleet.md
  /// "Monitoring a fleet"): a monitor per watch, the deliverers of devices the fleet file no
  /// longer names (`MonitoredWatches`, `deliverers`), and, unless the watches were chosen
  /// (`follows` false), the fleet file followed at every look:
  /// - a watch added gets a monitor of its own, so its SOS presses are forwarded without a restart;
  /// - one removed (missing at two looks in a row, `Membership`) has its monitor retired (what it
  ///   heard is still delivered), leaves the page, and a `removed` event says so;
  /// - one given another device: the old device's monitor retires, one for the new device starts;
  /// - a device a stopping monitor still holds (two watches swapping devices, a watch renamed)
  ///   is handed over: that monitor is stopped, and the watch wanting it starts at a later look.
  /// Watching goes on while the fleet file names no watch, until one is added. `run` returns
  /// when every monitor stopped (`stop`, or each ended), with a line per monitor that ended in
  /// an error. Thread-safe.
  public final class Supervisor: Sendable {
    private let fleetFile: String
    private let engine: Engine
    private let members: [FleetMember]
    private let everyMember: [FleetMember]
    private let follows: Bool
    private let manifests: FleetManifests
    private let board: StatusBoard?
    private let monitored: MonitoredWatches
    private let look: Duration
    private let emit: @Sendable (MonitorEvent) -> Void
    private let observers: [any MonitorObserver]
    private let notice: @Sendable (String) -> Void
    private let running = Locked<[Monitor]>([])
    private let live = Locked(0)
    private let stopping = Locked(false)

    /// A supervisor of the fleet file `fleetFile` (its name in messages) as loaded: `members`
    /// (the watches to monitor) of `everyMember` (every watch it names, chosen or not).
    /// `monitored` keeps the devices monitored, in the fleet's monitor folder.
    /// `interval`: the monitors' check interval (the fleet file is looked at as often, at most
    /// every `fleetFileLook`). Events go to `emit` and `observers` (the page `board` among
    /// them), notices (one line each) to `notice`.
    public init(fleetFile: String, engine: Engine, members: [FleetMember], everyMember: [FleetMember], follows: Bool,
                manifests: FleetManifests, board: StatusBoard?, monitored: MonitoredWatches, interval: Duration,
                emit: @escaping @Sendable (MonitorEvent) -> Void,
                observers: [any MonitorObserver], notice: @escaping @Sendable (String) -> Void) {
      self.fleetFile = fleetFile
      self.engine = engine
      self.members = members
      self.everyMember = everyMember
      self.follows = follows
      self.manifests = manifests
      self.board = board
      self.monitored = monitored
      self.look = min(interval, fleetFileLook)
      self.emit = emit
      self.observers = observers
      self.notice = notice
    }

    /// Stops every monitor (each finishes its current device call) and starts no other.
    public func stop() {
      stopping.set(true)
      for monitor in running.value { monitor.stop() }
    }

    /// Runs the monitors of the members (and of watches joining later) that `make` makes
    /// (`FleetMonitor.monitors`), and the deliverers (`template`'s settings, `notifiers`), until
    /// they all stopped; a line per monitor that ended in an error.
    public func run(make: ([FleetMember]) -> [Monitor], template: MonitorSettings, notifiers: [any Notifier]) async -> [String] {
      // Devices an earlier run monitored that no member has now (a watch removed from the fleet
      // file, or given another device, while it ran or while it was stopped), whose outboxes still
      // hold SOS presses: delivered now.
      let waiting = monitored.waiting(members: everyMember, engine: engine)
      let deliverers = FleetMonitor.deliverers(for: waiting, engine: engine, template: template, notifiers: notifiers, emit: emit,
                                               notice: notice, observers: observers)
      if !waiting.isEmpty {
        notice("Delivering the SOS presses left in the outbox\(waiting.count == 1 ? "" : "es") of \(counted(waiting.count, "device", "devices")) "
               + "\(fleetFile) no longer names (\(waiting.map { "\($0.name)'s \($0.device)" }.joined(separator: ", "))); "
               + "\(waiting.count == 1 ? "it is" : "they are") not monitored.")
      }
      let monitors = make(members)
      running.set(monitors + deliverers)
      if stopping.value { for monitor in running.value { monitor.stop() } }
      return await withTaskGroup(of: String?.self) { group in
        for (monitor, member) in zip(monitors, members) { start(monitor, name: member.name, in: &group) }
        for deliverer in deliverers { start(deliverer, name: deliverer.settings.watchName ?? "", in: &group) }
        await follow(make: make, in: &group)
        return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
      }
    }

    private func start(_ monitor: Monitor, name: String, in group: inout TaskGroup<String?>) {
      live.mutate { $0 += 1 }
      group.addTask { [running, live, notice] in
        defer {
          running.mutate { $0.removeAll { $0 === monitor } }
          live.mutate { $0 -= 1 }
        }
        do throws(MonitorError) {
          try await monitor.run()
          return nil
        } catch {
          // Said now, not only when the others stop: this watch is no longer watched by this
          // process (another monitor that holds its lock still watches it).
          if case .locked = error {
            notice("\(name): not monitored by this process: \(error); the monitor that holds it goes on watching it.")
          } else {
            notice("\(name): its monitor stopped: \(error); this watch is not monitored until tsapply monitor --fleet is started again.")
          }
          return "\(name): \(error)"
        }
      }
    }

    /// Starts the monitors of `members` (after the page and `monitored` know them).
    private func begin(_ members: [FleetMember], make: ([FleetMember]) -> [Monitor], in group: inout TaskGroup<String?>) {
      let more = make(members)
      running.mutate { $0 += more }
      for (monitor, member) in zip(more, members) { start(monitor, name: member.name, in: &group) }
      if stopping.value { for monitor in more { monitor.stop() } }
    }

    /// The devices running monitors hold (canonical specs). A monitor that is stopping —
    /// retiring while it delivers what it heard, or only delivering — from one of `wanted` is
    /// stopped now, so that the watch the fleet file now gives that device gets it at a next look.
    private func handOver(_ wanted: [String]) -> Set<String> {
      let wanted = Set(wanted.map(engine.canonicalSpec))
      var busy: Set<String> = []
      for monitor in running.value {
        guard let device = monitor.settings.deviceSpec.map(engine.canonicalSpec) else { continue }
        busy.insert(device)
        if wanted.contains(device), monitor.isStopping { monitor.stop() }
      }
      return busy
    }

    /// Looks at the fleet file until every monitor stopped (or, while it names no watch, until
    /// `stop`).
    private func follow(make: ([FleetMember]) -> [Monitor], in group: inout TaskGroup<String?>) async {
      var membership = Membership(everyMember.map(\.name))
      var devices = Dictionary(everyMember.map { ($0.name, $0.device) }, uniquingKeysWith: { first, _ in first })
      let canonical = engine.canonicalSpec
      while !stopping.value, live.value > 0 || membership.names.isEmpty {
        try? await Task.sleep(for: look)
        guard !stopping.value, follows, let current = try? manifests.members() else { continue }
        board?.relabel(boardMembers(current))
        let leaving = membership.leaving(Set(current.map(\.name)))
        if !leaving.isEmpty {
          // Retired, not stopped: an SOS it heard and has not delivered yet is still delivered.
          for monitor in running.value where leaving.contains(monitor.settings.watchName ?? "") { monitor.retire() }
          announceRemoved(leaving, devices: devices, fleetFile: fleetFile,
                          what: "its monitor stopped, so it is not checked and its SOS presses are not heard "
                            + "(one heard already is still delivered)",
                          done: "stopped monitoring", time: engine.now(), board: board, emit: emit, observers: observers, notice: notice)
        }
        // A watch the fleet file now gives another device (the resident's watch replaced, its
        // entry corrected): its monitor moves to it — the old device's retires (what it heard is
        // still delivered), one for the new device starts. It went on watching the old device
        // under the name, and the new watch's SOS presses reached no one (fresh-eyes finding).
        // Another spelling of the same device is no move (the spelling unchanged needs no look
        // at the file system: each look would otherwise resolve every watch's path twice).
        let moved = current.filter { member in
          membership.names.contains(member.name) && !leaving.contains(member.name)
            && devices[member.name].map { $0 != member.device && canonical($0) != canonical(member.device) } == true
        }
        if !moved.isEmpty {
          let names = Set(moved.map(\.name))
          for monitor in running.value where names.contains(monitor.settings.watchName ?? "") { monitor.retire() }
          // A device another monitor still holds — two watches swapping devices, the other's
          // monitor retiring (delivering what it heard) — is taken at a look after that monitor
          // stopped: started now, its monitor would find the device's lock held and end
          // (fresh-eyes finding: both watches of a swap went unmonitored). That monitor is
          // stopped, not left retrying a receiver that is down (its grace, then what is left
          // stays in the outbox, which the device's new monitor delivers).
          let busy = handOver(moved.map(\.device))
          let ready = moved.filter { !busy.contains(canonical($0.device)) }
          if !ready.isEmpty {
            monitored.add(ready)
            for member in ready { devices[member.name] = member.device }
            board?.replace(boardMembers(ready))
            notice("\(fleetFile) gives \(ready.map { "\($0.name) the device \($0.device)" }.joined(separator: ", ")): "
                   + "monitoring \(ready.count == 1 ? "it" : "them") there; the monitor of the device before stops.")
            begin(ready, make: make, in: &group)
          }
        }
        // A watch whose device a running monitor still watches (renamed in the fleet file: the
        // old name's monitor is stopping and holds the watch's monitor lock) joins once it stopped.
        let newcomers = current.filter { !membership.names.contains($0.name) }
        guard !newcomers.isEmpty else { continue }
        let busy = handOver(newcomers.map(\.device))
        let added = newcomers.filter { !busy.contains(canonical($0.device)) }
        guard !added.isEmpty else { continue }
        monitored.add(added)
        membership.join(added.map(\.name))
        for member in added { devices[member.name] = member.device }
        board?.add(boardMembers(added))
        notice("\(fleetFile) names \(counted(added.count, "more watch", "more watches")) (\(added.map(\.name).joined(separator: ", "))): "
               + "monitoring \(added.count == 1 ? "it" : "them") too.")
        begin(added, make: make, in: &group)
      }
    }
  }
}
