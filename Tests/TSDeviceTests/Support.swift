import Foundation
import TSDevice
import TSModel
import TSTestSupport

/// An in-memory simulated watch of the named profile.
func watch(_ profile: String, state: DeviceState? = nil, options: SimulationOptions = SimulationOptions()) throws -> SimulatedDevice {
  SimulatedDevice(profile: try PlatformProfile.named(profile), state: state, options: options)
}

/// A custom reminder with valid fields (period 09:00–17:00 every 60 minutes, every day).
func customReminder(_ id: String, name: String = "Walk") -> Reminder {
  Reminder(reminderId: id, reminderName: name, isEnabled: true, reminderType: .custom, repeatDays: .everyday,
           startTime: 540, endTime: 1020, interval: 60)
}

/// The factory built-ins of `profile` followed by `extra`.
func state(_ profile: String, plus extra: [Reminder]) throws -> DeviceState {
  var state = try PlatformProfile.named(profile).factoryState
  state.reminders += extra
  return state
}

/// A new empty temporary directory (`TestFolders`: removed when the test process exits).
func temporaryDirectory() throws -> String { try TestFolders.make("tsdevice") }


/// The first value a callback-style registration delivers.
func firstValue<Value: Sendable>(_ register: (@escaping @Sendable (Value) -> Void) async -> Void) async -> Value? {
  let (stream, continuation) = AsyncStream<Value>.makeStream()
  await register { continuation.yield($0) }
  for await value in stream { return value }
  return nil
}
