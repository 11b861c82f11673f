package agentenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Manifest is the agent-env-plugin.toml text for what is registered (docs/protocol.md, "Manifests"):
// the [plugin] table from the Plugin's fields, one [provides.<group>] table per group with
// contributions, and [provides.stores] for the store classes. The binary prints it on
// --agent-env-manifest; commit a copy beside the binary's sources and test that the two are equal.
func (p *Plugin) Manifest() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The manifest of %s, as `%s %s` prints it from what the code registers.\n",
		p.Name, p.Name, PrintManifestArg)
	b.WriteString("[plugin]\n")
	fmt.Fprintf(&b, "name = %s\n", tomlString(p.Name))
	fmt.Fprintf(&b, "version = %s\n", tomlString(p.Version))
	if p.Description != "" {
		fmt.Fprintf(&b, "description = %s\n", tomlString(p.Description))
	}
	exec := p.Exec
	if len(exec) == 0 {
		exec = []string{"./" + p.Name}
	}
	fmt.Fprintf(&b, "exec = %s\n", tomlStrings(exec))
	fmt.Fprintf(&b, "protocol = [%d, %d]\n", p.Protocol.Min, p.Protocol.Max)
	if len(p.Requires) > 0 {
		var parts []string
		for _, name := range sortedKeys(p.Requires) {
			parts = append(parts, tomlKey(name)+" = "+tomlString(p.Requires[name]))
		}
		fmt.Fprintf(&b, "requires = { %s }\n", strings.Join(parts, ", "))
	}
	group := ""
	for _, c := range p.Contributions() {
		if c.Group != group {
			group = c.Group
			fmt.Fprintf(&b, "\n[provides.%s]\n", group)
		}
		fmt.Fprintf(&b, "%s = %s\n", tomlKey(c.Name), p.manifestEntry(c))
	}
	if stores := p.Stores(); len(stores) > 0 {
		b.WriteString("\n[provides.stores]\n")
		for _, s := range stores {
			fmt.Fprintf(&b, "%s = %s\n", tomlKey(s.Class), tomlString(string(s.Kind)))
		}
	}
	return b.String()
}

// manifestEntry is the value of one [provides.<group>] key: the class label alone, or an inline table
// when the entry has more to say.
func (p *Plugin) manifestEntry(c Contribution) string {
	fields := []string{"class = " + tomlString(c.Class)}
	if c.Description != "" {
		fields = append(fields, "description = "+tomlString(c.Description))
	}
	switch c.Group {
	case GroupCLIRootOptions:
		opt := p.rootOptions[c.Name]
		if opt.Value != "" {
			fields = append(fields, "value = "+tomlString(opt.Value))
		}
		if opt.Always {
			fields = append(fields, "always = true")
		}
	case GroupTaskSteps:
		if fail := p.steps[c.Name].FailTaskOnError; fail != nil {
			fields = append(fields, fmt.Sprintf("fail_task_on_error = %t", *fail))
		}
	}
	if len(fields) == 1 {
		return tomlString(c.Class)
	}
	return "{ " + strings.Join(fields, ", ") + " }"
}

// tomlString writes s as a TOML basic string. A JSON string (without HTML escaping) is one: TOML has
// the same escapes, \uXXXX included.
func tomlString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

func tomlStrings(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = tomlString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// tomlKey writes a key bare when TOML allows it (letters, digits, '_' and '-'), quoted otherwise.
func tomlKey(key string) string {
	if key == "" {
		return `""`
	}
	for _, ch := range key {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			return tomlString(key)
		}
	}
	return key
}
