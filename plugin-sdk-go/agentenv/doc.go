// Package agentenv writes agent-env plugins in Go: it speaks the agent-env plugin protocol, version 1
// (docs/protocol.md in the agent-env repository), with the Go standard library only.
//
// A plugin registers what it contributes on a [Plugin] and calls [Plugin.Main] from func main:
//
//   - task steps ([Plugin.AddTaskStep]), CLI commands ([Plugin.AddCommand]) and root options
//     ([Plugin.AddRootOption]);
//   - store classes of the four kinds ([Plugin.AddObjectStore], [Plugin.AddDocumentStore],
//     [Plugin.AddImageStore], [Plugin.AddSecretStore]), which the host opens with store.open and then
//     calls as store.<kind>.<op> with the handle it got;
//   - contributions to the other groups (envs, artifacts, sandbox, state and env providers, explorer
//     plugins) as [Generic] contributions, a handler per method.
//
// [Plugin.Manifest] is the agent-env-plugin.toml for what is registered; the binary prints it when run
// with --agent-env-manifest, so the manifest can never disagree with the code.
//
// Main does the SDK duties: refuse to run by hand (exit 2); keep the protocol's own copies of stdin and
// stdout and point fd 0 at /dev/null and fd 1 at stderr, so that neither a stray print nor a child
// process (one started with cmd.Stdin = os.Stdin included) can read or corrupt the protocol; answer
// initialize; dispatch each request on its own goroutine so a handler can call the host back ([Host]);
// honour $/cancelRequest through the handler's context; and exit 0 on stdin end of file or after
// shutdown, as every SDK does (docs/protocol.md §3): the handlers still in flight are cancelled at once,
// shutdown is answered at once, and they get [ShutdownGrace] (one second) to return, then the stores
// are closed. Underneath is [Conn], a bidirectional JSON-RPC 2.0
// connection with one compact message per line, lines up to [MaxMessageBytes].
//
// Package agentenvtest, beside this one, tests a plugin from go test: the object store kit, an
// in-memory object store, and a host that drives a built plugin binary over its stdin and stdout.
package agentenv
