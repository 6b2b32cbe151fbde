// The companion app: keeps the bridge's id and pairing key in the Keychain, binds and keeps
// connected the watch (`WatchSession`), serves it with the package's `BridgeService` over
// `SDKDevice` through `NetworkListener`, and shows the pairing string as text and as a QR code.
import CoreImage.CIFilterBuiltins
import SwiftUI
import TopStepComKit
import TSBridge
import TSDevice

@main
struct BridgeApp: App {
  @StateObject private var bridge = BridgeModel()

  var body: some Scene {
    WindowGroup {
      VStack(spacing: 16) {
        Text(bridge.status).font(.headline)
        if bridge.needsBinding {
          Button("Find the watch") { bridge.scan() }
          ForEach(bridge.found, id: \.self) { mac in
            HStack {
              Text(mac).font(.footnote.monospaced())
              TextField("Code on the watch", text: $bridge.authCode).textFieldStyle(.roundedBorder)
              Button("Bind") { bridge.bind(mac) }
            }
          }
        }
        if let pairing = bridge.pairing {
          Image(uiImage: Self.qrCode(pairing)).interpolation(.none).resizable().scaledToFit().frame(width: 240)
          Text(pairing).font(.footnote.monospaced()).textSelection(.enabled)
          Text("On the laptop: tsapply bridge pair '<this string>' --name home").font(.footnote)
          Button("New key (pair again)") { Task { await bridge.rotateKey() } }
        }
      }
      .padding()
      .task { bridge.start() }
    }
  }

  static func qrCode(_ text: String) -> UIImage {
    let filter = CIFilter.qrCodeGenerator()
    filter.message = Data(text.utf8)
    guard let output = filter.outputImage?.transformed(by: CGAffineTransform(scaleX: 8, y: 8)),
          let image = CIContext().createCGImage(output, from: output.extent) else { return UIImage() }
    return UIImage(cgImage: image)
  }
}

@MainActor
final class BridgeModel: ObservableObject {
  @Published var status = "Starting the SDK…"
  @Published var pairing: String?
  @Published var needsBinding = false
  @Published var found: [String] = []
  @Published var authCode = ""
  let port: UInt16 = 8765
  /// The vendor's licence for the SDK and the platform chosen in the app's settings (a
  /// `TSSDKType` raw value: 1 FIT, 2 FW, 6 TPB/npk).
  let license = Bundle.main.object(forInfoDictionaryKey: "TopStepLicense") as? String ?? ""
  var sdkType: UInt { UInt(clamping: UserDefaults.standard.integer(forKey: "tsapply.sdkType")).nonZero ?? 6 }

  private let session = WatchSession()
  private var peripherals: [String: TSPeripheral] = [:]
  /// What serves the watch now: one per connection to a watch and pairing key.
  private var served: (listener: NetworkListener, service: BridgeService, device: SDKDevice, mac: String)?

  func start() {
    session.onChange = { [weak self] state in Task { await self?.changed(state) } }
    session.start(sdkType: sdkType, license: license)
  }

  func scan() {
    found = []
    session.scan { [weak self] peripheral in
      guard let self, let mac = peripheral.systemInfo?.mac, self.peripherals[mac] == nil else { return }
      self.peripherals[mac] = peripheral
      self.found.append(mac)
    }
  }

  func bind(_ mac: String) {
    guard let peripheral = peripherals[mac] else { return }
    session.bind(peripheral, authCode: authCode)
  }

  /// Follows the watch connection: serves it when connected (once per watch; a reconnect keeps
  /// the service and its event log, the session re-registers the SDK listeners), tells the
  /// service when the link drops.
  private func changed(_ state: WatchSession.State) async {
    needsBinding = state == .needsBinding
    switch state {
    case .notInitialised(let reason): status = "The SDK did not start: \(reason)"
    case .needsBinding: status = "No watch bound: find it and enter the code it shows"
    case .connecting: status = "Connecting to the watch…"
    case .disconnected(let reason):
      status = "Watch disconnected (\(reason)); reconnecting…"
      if let served { served.service.setConnection(.disconnected, watch: served.mac) }
    case .connected(let mac, let platform):
      if let served, served.mac == mac {
        served.service.setConnection(.connected, watch: mac)
      } else {
        await serve(mac: mac, platform: platform)
      }
    }
  }

  /// Serves the watch `mac` with the pairing key in the Keychain (replacing what served before).
  private func serve(mac: String, platform: String) async {
    await stopServing()
    let device = SDKDevice(identity: "topstep:" + mac, platform: platform, sdk: session.sdk, listeners: session.listeners)
    let identity = Keychain.bridgeIdentity()
    do {
      let capabilities = try await device.capabilities()
      let journal = try NonceJournal(path: Self.noncePath)
      let service = BridgeService(bridgeID: identity.bridgeID, key: identity.key,
                                  watches: [ServedWatch(id: mac, device: device, capabilities: capabilities)],
                                  cipher: ChaCha20Poly1305(), replay: try ReplayGuard(journal: journal))
      await service.startListening()
      let listener = try NetworkListener(port: port, service: service)
      listener.start()
      served = (listener, service, device, mac)
      pairing = PairingString(host: LocalAddress.wifi() ?? "0.0.0.0", port: Int(port), bridgeID: identity.bridgeID,
                              key: identity.key).description
      status = "Serving \(mac) (\(platform))"
    } catch {
      status = "Cannot serve the watch: \(error)"
    }
  }

  private func stopServing() async {
    guard let served else { return }
    served.listener.stop()
    await served.device.close()  // its listener handlers go; the SDK registrations stay
    self.served = nil
    pairing = nil
  }

  /// A fresh key: every laptop paired before must pair again. The new service registers its
  /// handlers with the session's listeners, which do not register with the SDK a second time.
  func rotateKey() async {
    Keychain.replaceKey()
    guard case .connected(let mac, let platform) = session.state else { return }
    await serve(mac: mac, platform: platform)
  }

  /// Where the bridge keeps the nonces it accepted, so a restart does not accept a replay
  /// (docs/bridge-protocol.md "Freshness").
  static var noncePath: String {
    let folder = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("bridge-nonces").path
  }
}

private extension UInt {
  var nonZero: UInt? { self == 0 ? nil : self }
}
