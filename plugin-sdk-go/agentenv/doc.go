// Package agentenv speaks the agent-env plugin protocol, version 1 (docs/protocol.md in the agent-env
// repository), with the Go standard library only.
//
// It has two layers:
//
//   - [Conn]: a bidirectional JSON-RPC 2.0 connection, one compact message per line, lines up to
//     [MaxMessageBytes]. Either side may call the other at any time; incoming requests run on their own
//     goroutines, so a handler can call back ([Conn.Call]) while the reader keeps reading.
//   - [Plugin]: what a plugin executable registers (task steps, CLI commands) and [Plugin.Main], which
//     does the SDK duties: refuse to run by hand, print the manifest on --agent-env-manifest, move fd 1
//     aside to stderr, answer initialize, dispatch execute / task_step.validate / cli.run, and exit 0 on
//     stdin end of file or after shutdown.
package agentenv
