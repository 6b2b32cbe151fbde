import Foundation
import Testing
import TSMQTT
import TSTestSupport

/// The libmosquitto wrapper against a real broker on 127.0.0.1.
@Suite struct MQTTClientTests {
  @Test func publishesAndReceivesRetainedAndLiveMessagesAndTheWill() async throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let broker = try MosquittoBroker.start(in: directory)
    defer { broker.stop() }
    let inbox = Inbox<MQTTClient.Message>()
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "publisher"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    try await publisher.publish("t/retained", payload: Array("kept".utf8), qos: 1, retain: true)

    let dying = try MQTTClient(address: broker.address,
                               configuration: .init(clientID: "dying", will: .init(topic: "t/will", payload: Array("gone".utf8))),
                               onMessage: { _ in })
    dying.connect()
    try await dying.ready(within: .seconds(120))

    let subscriber = try MQTTClient(address: broker.address,
                                    configuration: .init(clientID: "subscriber", subscriptions: ["t/#"]),
                                    onMessage: { inbox.add($0) })
    subscriber.connect()
    try await subscriber.ready(within: .seconds(120))
    try await publisher.publish("t/live", payload: Array("now".utf8), qos: 1)
    await dying.abandon()
    let messages = await inbox.wait(for: 3)
    #expect(messages.map(\.topic) == ["t/retained", "t/live", "t/will"])
    #expect(messages.first?.retained == true)
    #expect(String(decoding: messages.last?.payload ?? [], as: UTF8.self) == "gone")
    await publisher.close()
    await subscriber.close()
  }
}
