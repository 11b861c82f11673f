package agentenv

import "fmt"

// ProtocolVersion is the protocol version this package implements.
const ProtocolVersion = 1

// MaxMessageBytes is the largest message line (newline excluded) in each direction: 64 MiB.
const MaxMessageBytes = 64 * 1024 * 1024

// Environment variables and the argument of docs/protocol.md §2 and §4.5.
const (
	CookieVar           = "AGENT_ENV_PLUGIN"
	CookieValue         = "1"
	ProtocolVersionsVar = "AGENT_ENV_PROTOCOL_VERSIONS"
	HostVersionVar      = "AGENT_ENV_HOST_VERSION"
	PackageVar          = "AGENT_ENV_PLUGIN_PACKAGE"
	RPCFdsVar           = "AGENT_ENV_RPC_FDS"
	PrintManifestArg    = "--agent-env-manifest"
)

// Range is an inclusive range of protocol versions.
type Range struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// Negotiate picks the highest version both ranges contain; ok is false when they do not meet.
func Negotiate(a, b Range) (version int, ok bool) {
	low := max(a.Min, b.Min)
	high := min(a.Max, b.Max)
	if low > high {
		return 0, false
	}
	return high, true
}

// String writes the range as agent-env prints it: "1", or "1-3".
func (r Range) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}
