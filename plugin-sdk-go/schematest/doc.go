// Package schematest holds the Go SDK to the protocol's JSON Schema (protocol/schema/message.schema.json,
// whose method definitions are generated from the Rust types agent-env reads them with): a plugin built
// with the SDK is served over pipes and every line it writes is validated. It is a module of its own so
// that the SDK itself stays standard library only; scripts/test-go.sh runs it.
package schematest
