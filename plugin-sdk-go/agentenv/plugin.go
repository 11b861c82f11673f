package agentenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Method names the host calls on a plugin (docs/protocol.md §4).
const (
	InitializeMethod       = "initialize"
	ShutdownMethod         = "shutdown"
	ExecuteMethod          = "execute"
	TaskStepValidateMethod = "task_step.validate"
	CLIRunMethod           = "cli.run"
)

// shutdownGrace is how long in-flight handlers get to return after the input ends or shutdown is answered.
const shutdownGrace = 2 * time.Second

// cancelGrace is how long handlers get to return once cancelled at exit.
const cancelGrace = 500 * time.Millisecond

// Plugin is what one plugin executable registers. Build it with NewPlugin, add contributions, then call
// Main from func main.
type Plugin struct {
	// Name is the package name; it must be the manifest's plugin.name.
	Name string
	// Version is the plugin's version, as in the manifest.
	Version string
	// Protocol is the range of protocol versions the plugin speaks (1-1 by default).
	Protocol Range
	// Manifest is the manifest's text, printed on --agent-env-manifest (embed it with go:embed).
	Manifest string

	steps    map[string]*TaskStep
	commands map[string]*Command
}

// NewPlugin starts a plugin registration.
func NewPlugin(name, version, manifest string) *Plugin {
	return &Plugin{
		Name:     name,
		Version:  version,
		Protocol: Range{Min: ProtocolVersion, Max: ProtocolVersion},
		Manifest: manifest,
		steps:    map[string]*TaskStep{},
		commands: map[string]*Command{},
	}
}

// TaskStep is a task step type (group task_steps). Its Type is also its manifest name.
type TaskStep struct {
	Type  string
	Class string
	// Execute runs one step. It returns what the step adds to context.metadata. Return StepFailed(...) for
	// a failure the run should print; return ctx.Err() (or an error wrapping it) when cancelled.
	Execute func(ctx context.Context, call *StepCall) (metadata map[string]any, err error)
	// Validate (optional) checks a step while the run is planned; return an error to refuse it.
	Validate func(stepType string, step map[string]any) error
}

// StepCall is one execute request.
type StepCall struct {
	// RequestID is the host's id for this execute request ($/progress names it).
	RequestID ID
	Type      string
	// Step is the step as the task document wrote it.
	Step map[string]any
	// Context is the run's context.
	Context RunContext
	// Host reaches the host's stores while the step runs.
	Host *Host
	// Settings is the plugin's settings table from initialize.
	Settings map[string]any
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
	Name        string
	Class       string
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

// AddTaskStep registers a task step type.
func (p *Plugin) AddTaskStep(step TaskStep) { p.steps[step.Type] = &step }

// AddCommand registers a CLI command.
func (p *Plugin) AddCommand(cmd Command) { p.commands[cmd.Name] = &cmd }

// Contribution is one entry of the initialize answer's contributions.
type Contribution struct {
	Group       string   `json:"group"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Class       string   `json:"class"`
	Methods     []string `json:"methods"`
	Description string   `json:"description,omitempty"`
}

// Contributions lists what the plugin registered, task steps then commands, each sorted by name.
func (p *Plugin) Contributions() []Contribution {
	var out []Contribution
	for _, name := range sortedKeys(p.steps) {
		step := p.steps[name]
		methods := []string{"execute", "from_dict"}
		if step.Validate != nil {
			methods = append(methods, "validate")
		}
		out = append(out, Contribution{Group: "task_steps", Name: name, Type: name, Class: step.Class, Methods: methods})
	}
	for _, name := range sortedKeys(p.commands) {
		cmd := p.commands[name]
		out = append(out, Contribution{Group: "cli_plugins", Name: name, Type: name, Class: cmd.Class,
			Methods: []string{"run"}, Description: cmd.Description})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Main does what a plugin's func main should: it prints the manifest on --agent-env-manifest, refuses to
// run without AGENT_ENV_PLUGIN=1, serves the protocol and exits with the right status. It never returns.
func (p *Plugin) Main() {
	os.Exit(p.Run(os.Args[1:]))
}

// Run is Main without the exit: it returns the exit status.
func (p *Plugin) Run(args []string) int {
	if len(args) == 1 && args[0] == PrintManifestArg {
		if p.Manifest == "" {
			fmt.Fprintf(os.Stderr, "%s %s has no manifest to print\n", p.Name, p.Version)
			return 1
		}
		fmt.Fprint(os.Stdout, p.Manifest)
		return 0
	}
	if os.Getenv(CookieVar) != CookieValue {
		fmt.Fprintf(os.Stderr, "%s %s is an agent-env plugin; agent-env starts it (try agent-env plugin show %s)\n",
			p.Name, p.Version, p.Name)
		return 2
	}
	transport, err := openTransport()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", p.Name, err)
		return 1
	}
	go watchParent(p.Name, os.Getppid())
	p.Serve(transport.in, transport.out, transport.commandMode)
	return 0
}

// parentPollInterval is how often watchParent looks at the parent process id.
const parentPollInterval = time.Second

// watchParent exits the plugin when agent-env dies even though its stdin has not reached end of file
// (another process still holds the pipe): the plugin is then re-parented and its parent id changes.
func watchParent(name string, parent int) {
	if parent <= 1 {
		return
	}
	ticker := time.NewTicker(parentPollInterval)
	defer ticker.Stop()
	for range ticker.C {
		if os.Getppid() != parent {
			fmt.Fprintf(os.Stderr, "%s: agent-env (pid %d) is gone; exiting\n", name, parent)
			os.Exit(0)
		}
	}
}

// Serve answers the host on in/out until in ends or shutdown is answered. commandMode says the
// protocol runs on fds 3/4 and stdin/stdout/stderr are the terminal's (CLI commands may use them).
func (p *Plugin) Serve(in io.Reader, out io.Writer, commandMode bool) {
	s := &session{plugin: p, commandMode: commandMode, shutdown: make(chan struct{})}
	// initialize runs before the next line is read, so requests pipelined behind it find it done.
	conn := NewConn(in, out, s, Options{Inline: func(method string) bool { return method == InitializeMethod }})
	s.host = &Host{conn: conn}
	conn.Start()
	select {
	case <-conn.Done():
		// The host is gone, or closed our input after its last request: calls to it now fail at once.
		// Let the work in flight finish (its answers are still written), then cancel what is left.
		if !conn.WaitHandlers(shutdownGrace) {
			conn.Shutdown(cancelGrace)
		}
	case <-s.shutdown:
		// The shutdown answer is written by its handler; wait for it, and let other calls finish.
		conn.WaitHandlers(shutdownGrace)
	}
}

// session is the state of one connection to the host.
type session struct {
	plugin      *Plugin
	commandMode bool
	host        *Host

	mu          sync.Mutex
	initialized bool
	settings    map[string]any

	shutdownOnce sync.Once
	shutdown     chan struct{}
}

type initializeParams struct {
	Host struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"host"`
	Protocol *Range         `json:"protocol"`
	Package  string         `json:"package"`
	Settings map[string]any `json:"settings"`
}

// HandleRequest dispatches the host's requests.
func (s *session) HandleRequest(ctx context.Context, req *Request) (any, error) {
	if req.Method == InitializeMethod {
		return s.initialize(req)
	}
	s.mu.Lock()
	initialized, settings := s.initialized, s.settings
	s.mu.Unlock()
	if !initialized {
		return nil, NewError(KindInvalidRequest, "'%s' came before 'initialize'; the host must send initialize first", req.Method)
	}
	switch req.Method {
	case ShutdownMethod:
		s.shutdownOnce.Do(func() { close(s.shutdown) })
		return nil, nil
	case ExecuteMethod:
		return s.execute(ctx, req, settings)
	case TaskStepValidateMethod:
		return s.validate(req)
	case CLIRunMethod:
		return s.cliRun(ctx, req, settings)
	}
	return nil, NewError(KindMethodNotFound, "%s has no method '%s'", s.plugin.Name, req.Method)
}

func (s *session) initialize(req *Request) (any, error) {
	var params initializeParams
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	if params.Protocol == nil {
		return nil, NewError(KindInvalidParams, "initialize needs 'protocol', the range of versions the host speaks")
	}
	p := s.plugin
	version, ok := Negotiate(*params.Protocol, p.Protocol)
	if !ok {
		return nil, NewError(KindProtocolMismatch,
			"%s %s speaks plugin protocol %s and the host speaks %s; install a version of %s that speaks %s",
			p.Name, p.Version, p.Protocol, *params.Protocol, p.Name, *params.Protocol).
			With("supported", p.Protocol).With("requested", *params.Protocol)
	}
	if params.Package != "" && CanonicalName(params.Package) != CanonicalName(p.Name) {
		fmt.Fprintf(os.Stderr, "%s: the host started this plugin as package '%s'; it is '%s'\n", p.Name, params.Package, p.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.initialized {
		return nil, NewError(KindInvalidRequest, "initialize was sent twice; it comes exactly once")
	}
	s.initialized = true
	s.settings = params.Settings
	if s.settings == nil {
		s.settings = map[string]any{}
	}
	return map[string]any{
		"protocol":      version,
		"plugin":        map[string]string{"name": p.Name, "version": p.Version},
		"contributions": p.Contributions(),
		"stores":        []any{},
	}, nil
}

type executeParams struct {
	Type    string          `json:"type"`
	Step    map[string]any  `json:"step"`
	Context json.RawMessage `json:"context"`
}

func (s *session) step(stepType string) (*TaskStep, error) {
	step, ok := s.plugin.steps[stepType]
	if !ok {
		return nil, NewError(KindInvalidParams, "%s has no task step of type '%s'; it has %s",
			s.plugin.Name, stepType, strings.Join(sortedKeys(s.plugin.steps), ", "))
	}
	return step, nil
}

func (s *session) execute(ctx context.Context, req *Request, settings map[string]any) (any, error) {
	var params executeParams
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	step, err := s.step(params.Type)
	if err != nil {
		return nil, err
	}
	call := &StepCall{RequestID: req.ID, Type: params.Type, Step: params.Step, Host: s.host, Settings: settings}
	if call.Step == nil {
		call.Step = map[string]any{}
	}
	if len(params.Context) > 0 && !isNull(params.Context) {
		if err := json.Unmarshal(params.Context, &call.Context); err != nil {
			return nil, NewError(KindInvalidParams, "the run context of '%s' does not fit: %s", params.Type, describeJSONError(err))
		}
		call.Context.Raw = params.Context
	}
	metadata, err := step.Execute(ctx, call)
	if err != nil {
		return nil, err
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	return map[string]any{"metadata": metadata}, nil
}

func (s *session) validate(req *Request) (any, error) {
	var params struct {
		Type string         `json:"type"`
		Step map[string]any `json:"step"`
	}
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	step, err := s.step(params.Type)
	if err != nil {
		return nil, err
	}
	if step.Validate == nil {
		return nil, nil
	}
	if err := step.Validate(params.Type, params.Step); err != nil {
		var rpcErr *Error
		if errors.As(err, &rpcErr) {
			return nil, rpcErr
		}
		return nil, NewError(KindInvalidValue, "%s", err.Error())
	}
	return nil, nil
}

func (s *session) cliRun(ctx context.Context, req *Request, settings map[string]any) (any, error) {
	var params struct {
		Command     string   `json:"command"`
		Argv        []string `json:"argv"`
		Cwd         string   `json:"cwd"`
		Interactive bool     `json:"interactive"`
	}
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	cmd, ok := s.plugin.commands[params.Command]
	if !ok {
		return nil, NewError(KindInvalidParams, "%s has no command '%s'; it has %s",
			s.plugin.Name, params.Command, strings.Join(sortedKeys(s.plugin.commands), ", "))
	}
	inv := &Invocation{
		Command: params.Command, Argv: params.Argv, Cwd: params.Cwd, Interactive: params.Interactive,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Host: s.host, Settings: settings,
	}
	if !s.commandMode {
		// Outside command mode fd 1 is the protocol's; keep the command's output off it.
		inv.Stdin, inv.Stdout = strings.NewReader(""), os.Stderr
	}
	return map[string]int{"exit_code": cmd.Run(ctx, inv)}, nil
}

// CanonicalName is the form package names are compared in: lowercase, each run of '-', '_' and '.' one '-'.
func CanonicalName(name string) string {
	var b strings.Builder
	inRun := false
	for _, ch := range strings.ToLower(name) {
		if ch == '-' || ch == '_' || ch == '.' {
			if !inRun {
				b.WriteByte('-')
			}
			inRun = true
			continue
		}
		b.WriteRune(ch)
		inRun = false
	}
	return b.String()
}
