// Package agentenvtest helps a plugin author test a plugin written with package agentenv from their own
// go test: the object store kit (CheckObjectStore, the rules every object store keeps, built-in or
// plugin, in any language), an in-memory object store to test against (NewMemoryObjectStore), and a
// host that starts a built plugin binary as agent-env does and talks to it over its stdin and stdout
// (StartPlugin), or serves a *agentenv.Plugin inside the test process (ServeInProcess,
// NewInProcessHost). The host sends requests with Host.Call and answers the plugin's host.* calls:
// host.store.object.* from HostOptions.ObjectStore, the rest with HostOptions.HostHandler.
package agentenvtest
