"""Live mode: a real RocketMQ NameServer, Broker and Proxy on loopback, real POP clients,
seeded faults, and the model's POP history checker over what the clients saw (spec/live.md)."""
