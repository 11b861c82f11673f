package agentenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// The contribution groups of a manifest's [provides.<group>] tables (docs/protocol.md §4.1), without the
// "agent_env." prefix reports spell them with.
const (
	GroupEnvs             = "envs"
	GroupTaskSteps        = "task_steps"
	GroupArtifacts        = "artifacts"
	GroupSandboxProviders = "sandbox_providers"
	GroupStateProviders   = "state_providers"
	GroupEnvProviders     = "env_providers"
	GroupExplorerPlugins  = "explorer_plugins"
	GroupCLIPlugins       = "cli_plugins"
	GroupCLIRootOptions   = "cli_root_options"
	GroupBundles          = "bundles"
)

// genericGroups are the groups a Generic contribution may join: every group but those with their own
// registration (task steps, CLI commands, root options) and bundles, which are folders, not code.
var genericGroups = []string{
	GroupEnvs, GroupArtifacts, GroupSandboxProviders, GroupStateProviders, GroupEnvProviders, GroupExplorerPlugins,
}

// TaskStep is a task step type (group task_steps). Its Type is also its manifest name.
type TaskStep struct {
	// Type is the step type task documents name, e.g. "grade_essay".
	Type string
	// Class is the class label the manifest names, e.g. "GradeEssay".
	Class string
	// Description (optional) is written into the manifest entry.
	Description string
	// FailTaskOnError (optional) set to false writes fail_task_on_error = false into the manifest: a
	// failure of this step then does not fail its task unless the task document says otherwise.
	FailTaskOnError *bool
	// Execute runs one step. It returns what the step adds to context.metadata. Return StepFailed(...) for
	// a failure the run should print. ctx ends when the host cancels the call ($/cancelRequest, on its
	// timeout) or shuts the plugin down (shutdown, or stdin closed), which leaves the step one second
	// (ShutdownGrace) to return: watch it in long work, and return ctx.Err() (or an error wrapping it) when it ends.
	// ctx also has the host's deadline for the step (ctx.Deadline(): the task's timeout_seconds, else
	// agent-env's call timeout, from when the request arrived), when the host gave one: ctx ends then
	// too, and a step that returns ctx.Err() from it fails as a TimeoutError. To answer with what it
	// has instead, stop a little before the deadline.
	Execute func(ctx context.Context, call *StepCall) (metadata map[string]any, err error)
	// Validate (optional) checks a step while the run is planned; return an error to refuse it.
	Validate func(stepType string, step map[string]any) error
}

// StepCall is one execute request.
type StepCall struct {
	// RequestID is the host's id for this execute request ($/progress names it).
	RequestID ID
	// Type is the step type the host asked for.
	Type string
	// Step is the step as the task document wrote it, decoded by encoding/json: a JSON number is a
	// float64 (a task's "retries": 3 is float64(3), not int), an object a map[string]any, an array a
	// []any. DecodeStep reads it into a struct instead.
	Step map[string]any
	// Context is the run's context.
	Context RunContext
	// Host reaches the host's stores while the step runs.
	Host *Host
	// Settings is the plugin's settings table from initialize.
	Settings map[string]any

	// rawStep is the step as it came on the wire, so that DecodeStep keeps its numbers exact.
	rawStep json.RawMessage
}

// DecodeStep unmarshals the step document into v, usually a pointer to a struct with json tags, so
// that fields arrive typed (an int field takes 3, not float64(3)). A field of the wrong type is a
// StepFailed ValueError naming it and the step, which Execute can return as it is:
//
//	var step struct {
//		Word  string `json:"word"`
//		Times int    `json:"times"`
//	}
//	if err := call.DecodeStep(&step); err != nil {
//		return nil, err
//	}
func (c *StepCall) DecodeStep(v any) error {
	name := "of type '" + c.Type + "'"
	if id, ok := c.Step["id"]; ok {
		name = fmt.Sprintf("'%v'", id)
	}
	raw := []byte(c.rawStep)
	if raw == nil {
		var err error
		if raw, err = json.Marshal(c.Step); err != nil {
			return StepFailed("ValueError", "the step %s cannot be read: %s", name, err)
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return StepFailed("ValueError", "the step %s does not fit: %s", name, describeJSONError(err))
	}
	return nil
}

// Progress tells the host how far the step is ($/progress); total is 0 when unknown.
func (c *StepCall) Progress(progress, total float64, message string) error {
	return c.Host.Progress(c.RequestID, progress, total, message)
}

// RunContext is the part of the run context (TaskStepContext) a step usually needs; Raw has all of it.
type RunContext struct {
	InstanceID        string          `json:"instance_id"`
	Metadata          map[string]any  `json:"metadata"`
	DeployedSandboxes []Sandbox       `json:"deployed_sandboxes"`
	Raw               json.RawMessage `json:"-"`
}

// Sandbox is one deployed sandbox of the run.
type Sandbox struct {
	Name    string `json:"sandbox_name"`
	ID      string `json:"sandbox_id"`
	Type    string `json:"sandbox_type"`
	Mode    string `json:"sandbox_mode"`
	WorkDir string `json:"work_dir"`
}

// Command is a CLI command (group cli_plugins): `agent-env <Name> ...`, run in command mode.
type Command struct {
	// Name is the command word and the manifest name.
	Name string
	// Class is the class label the manifest names (often the Name again).
	Class string
	// Description is the line `agent-env --help` shows.
	Description string
	// Run runs the command and returns its exit status.
	Run func(ctx context.Context, inv *Invocation) int
}

// Invocation is one cli.run request. Stdin, Stdout and Stderr are the terminal's.
type Invocation struct {
	Command     string
	Argv        []string
	Cwd         string
	Interactive bool
	Stdin       io.Reader
	Stdout      io.Writer
	Stderr      io.Writer
	Host        *Host
	Settings    map[string]any
}

// RootOption is a flag on agent-env's root command (group cli_root_options), e.g. `agent-env --tenant
// acme run ...`. The host calls Apply before the command runs (docs/protocol.md §4.5).
type RootOption struct {
	// Name is the manifest name: "tenant" is the flag --tenant, a one-letter name a short flag, and a
	// name starting with "-" is the flag itself.
	Name string
	// Class is the class label the manifest names.
	Class string
	// Description is the flag's --help text.
	Description string
	// Value names the flag's value in --help (--tenant <NAME>); "" makes the flag a switch, which is
	// sent the value "true" when given.
	Value string
	// Always asks the host to call Apply even when the flag is absent.
	Always bool
	// Apply gets the flag's value (nil when the flag is absent) and returns the path of a config file
	// the host then reads for the whole invocation, or "" for none. A relative path is made absolute
	// against the plugin's working directory.
	Apply func(ctx context.Context, call *RootOptionCall) (configPath string, err error)
}

// RootOptionCall is one cli.root_option request.
type RootOptionCall struct {
	// Flag is the flag as the host names it, e.g. "--tenant".
	Flag string
	// Value is the flag's value; nil when the flag is absent.
	Value *string
	// Host reaches the host while Apply runs.
	Host *Host
	// Settings is the plugin's settings table from initialize.
	Settings map[string]any
}

// Generic is a contribution to any other group that plugin code implements (envs, artifacts,
// sandbox_providers, state_providers, env_providers, explorer_plugins). The host calls its methods as
// "<group>.<method>", with the contribution's type in params.type when the plugin has several in the
// group. The protocol fixes the group's required methods (docs/protocol.md §4.1) but not, beyond
// task steps, CLI commands and root options, their params: each handler gets them raw.
type Generic struct {
	// Group is the manifest group, e.g. "sandbox_providers".
	Group string
	// Name is the manifest name.
	Name string
	// Type is the type the class writes its documents under; "" means Name (what the host requires).
	Type string
	// Class is the class label the manifest names.
	Class string
	// Description (optional) is written into the manifest entry.
	Description string
	// Methods maps each method the contribution implements (e.g. "create_sandbox") to its handler.
	Methods map[string]GenericMethod
}

// GenericMethod answers one "<group>.<method>" call; its result is any JSON-encodable value.
type GenericMethod func(ctx context.Context, call *GenericCall) (any, error)

// GenericCall is one call to a Generic contribution's method.
type GenericCall struct {
	// Method is the full method name, e.g. "sandbox_providers.create_sandbox".
	Method string
	// Params is the params object as the host sent it.
	Params json.RawMessage
	// Host reaches the host while the method runs.
	Host *Host
	// Settings is the plugin's settings table from initialize.
	Settings map[string]any
}

// DecodeParams unmarshals the call's params into v; a mismatch is an invalid-params error.
func (c *GenericCall) DecodeParams(v any) error {
	return (&Request{Method: c.Method, Params: c.Params}).DecodeParams(v)
}

func (g *Generic) typeName() string {
	if g.Type != "" {
		return g.Type
	}
	return g.Name
}

// Contribution is one entry of the initialize answer's contributions.
type Contribution struct {
	Group       string   `json:"group"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Class       string   `json:"class"`
	Methods     []string `json:"methods"`
	Description string   `json:"description,omitempty"`
}

// Contributions lists what the plugin registered: task steps, commands, root options, then generic
// contributions by group; each sorted by name.
func (p *Plugin) Contributions() []Contribution {
	var out []Contribution
	for _, name := range sortedKeys(p.steps) {
		step := p.steps[name]
		methods := []string{"execute", "from_dict"}
		if step.Validate != nil {
			methods = append(methods, "validate")
		}
		out = append(out, Contribution{Group: GroupTaskSteps, Name: name, Type: name, Class: step.Class,
			Methods: methods, Description: step.Description})
	}
	for _, name := range sortedKeys(p.commands) {
		cmd := p.commands[name]
		out = append(out, Contribution{Group: GroupCLIPlugins, Name: name, Type: name, Class: cmd.Class,
			Methods: []string{"run"}, Description: cmd.Description})
	}
	for _, name := range sortedKeys(p.rootOptions) {
		opt := p.rootOptions[name]
		out = append(out, Contribution{Group: GroupCLIRootOptions, Name: name, Type: name, Class: opt.Class,
			Methods: []string{"apply"}, Description: opt.Description})
	}
	for _, group := range genericGroups {
		if group == GroupExplorerPlugins {
			for _, name := range sortedKeys(p.explorers) {
				e := p.explorers[name]
				out = append(out, Contribution{Group: group, Name: name, Type: name, Class: e.Class,
					Methods: []string{"router"}})
			}
		}
		for _, name := range sortedKeys(p.generics[group]) {
			g := p.generics[group][name]
			out = append(out, Contribution{Group: group, Name: name, Type: g.typeName(), Class: g.Class,
				Methods: sortedKeys(g.Methods), Description: g.Description})
		}
	}
	return out
}
