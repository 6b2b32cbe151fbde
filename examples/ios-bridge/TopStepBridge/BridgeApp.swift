// The companion app: keeps the bridge's id and pairing key in the Keychain, serves the connected
// watch with the package's `BridgeService` through `NetworkListener`, and shows the pairing
// string as text and as a QR code.
import CoreImage.CIFilterBuiltins
import SwiftUI
import TopStepComKit
import TSBridge

@main
struct BridgeApp: App {
  @StateObject private var bridge = BridgeModel()

  var body: some Scene {
    WindowGroup {
      VStack(spacing: 16) {
        Text(bridge.status).font(.headline)
        if let pairing = bridge.pairing {
          Image(uiImage: Self.qrCode(pairing)).interpolation(.none).resizable().scaledToFit().frame(width: 240)
          Text(pairing).font(.footnote.monospaced()).textSelection(.enabled)
          Text("On the laptop: tsapply bridge pair '<this string>' --name home").font(.footnote)
          Button("New key (pair again)") { bridge.rotateKey() }
        }
      }
      .padding()
      .task { await bridge.start() }
    }
  }

  static func qrCode(_ text: String) -> UIImage {
    let filter = CIFilter.qrCodeGenerator()
    filter.message = Data(text.utf8)
    let image = filter.outputImage!.transformed(by: CGAffineTransform(scaleX: 8, y: 8))
    return UIImage(cgImage: CIContext().createCGImage(image, from: image.extent)!)
  }
}

@MainActor
final class BridgeModel: ObservableObject {
  @Published var status = "Waiting for the watch…"
  @Published var pairing: String?
  private var listener: NetworkListener?
  let port: UInt16 = 8765

  /// Connects through the SDK (as the vendor's sample app does), wraps the connected watch as a
  /// `Device` and serves it.
  func start() async {
    guard let connected = await TopStepSession.connectedWatch() else {
      status = "No watch connected: pair it in the vendor's app first"
      return
    }
    let device = TopStepDevice(mac: connected.mac, platform: connected.platform,
                               reminders: connected.device.getInterface("TSRemindersInterface") as! any TSRemindersInterface,
                               contacts: connected.device.getInterface("TSContactInterface") as! any TSContactInterface)
    let identity = Keychain.bridgeIdentity()
    do {
      let capabilities = try await device.capabilities()
      let service = BridgeService(bridgeID: identity.bridgeID, key: identity.key,
                                  watches: [ServedWatch(id: connected.mac, device: device, capabilities: capabilities)],
                                  cipher: CryptoKitChaChaPoly())
      await service.startListening()
      connected.onConnectionChange { service.setConnection($0 ? .connected : .disconnected, watch: connected.mac) }
      let listener = try NetworkListener(port: port, service: service)
      listener.start()
      self.listener = listener
      pairing = PairingString(host: LocalAddress.wifi() ?? "0.0.0.0", port: Int(port), bridgeID: identity.bridgeID,
                              key: identity.key).description
      status = "Serving \(connected.mac) (\(connected.platform))"
    } catch {
      status = "Cannot serve the watch: \(error)"
    }
  }

  func rotateKey() {
    Keychain.replaceKey()
    listener?.stop()
    Task { await start() }
  }
}
