// Package agentenvtest helps a plugin author test a plugin written with package agentenv from their own
// go test: the object store kit (CheckObjectStore, the rules every object store keeps, built-in or
// plugin, in any language), an in-memory object store to test against (NewMemoryObjectStore), and a
// host that starts a built plugin binary as agent-env does and talks to it over its stdin and stdout
// (StartPlugin).
package agentenvtest
