package agentenv

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// Method names the host calls on a plugin (docs/protocol.md §4).
const (
	InitializeMethod       = "initialize"
	ShutdownMethod         = "shutdown"
	ExecuteMethod          = "execute"
	TaskStepValidateMethod = "task_step.validate"
	CLIRunMethod           = "cli.run"
	CLIRootOptionMethod    = "cli.root_option"
	StoreOpenMethod        = "store.open"
)

// ShutdownGrace is how long, once shutdown comes or the input ends, the handlers still in flight (all
// cancelled at once) have to return, and after shutdown how long the host has to close the input,
// before Serve closes the stores and returns. It is the same in every SDK (docs/protocol.md §3) and well
// inside the host's own grace (it waits 2 s for the exit after closing stdin, then sends SIGTERM), so
// the store Close hooks still run and the plugin exits 0 before the host kills it.
const ShutdownGrace = time.Second

// Plugin is what one plugin executable registers. Build it with NewPlugin, add contributions, then call
// Main from func main. Its manifest is generated from what is registered (Manifest), so the two cannot
// disagree.
type Plugin struct {
	// Name is the package name; it is the manifest's plugin.name.
	Name string
	// Version is the plugin's version.
	Version string
	// Description (optional) is the manifest's plugin.description.
	Description string
	// Protocol is the range of protocol versions the plugin speaks (1-1 by default).
	Protocol Range
	// Exec is the manifest's exec argv; nil means ["./<Name>"], the binary beside its manifest.
	Exec []string
	// Requires is the manifest's plugin.requires, e.g. {"agentenv-framework": ">=0.1.0"}.
	Requires map[string]string

	steps        map[string]*TaskStep
	commands     map[string]*Command
	rootOptions  map[string]*RootOption
	generics     map[string]map[string]*Generic
	explorers    map[string]*Explorer
	storeClasses map[string]*storeClass
	problems     []string
}

// NewPlugin starts a plugin registration.
func NewPlugin(name, version string) *Plugin {
	return &Plugin{
		Name:         name,
		Version:      version,
		Protocol:     Range{Min: ProtocolVersion, Max: ProtocolVersion},
		steps:        map[string]*TaskStep{},
		commands:     map[string]*Command{},
		rootOptions:  map[string]*RootOption{},
		generics:     map[string]map[string]*Generic{},
		explorers:    map[string]*Explorer{},
		storeClasses: map[string]*storeClass{},
	}
}

// problem records a registration mistake; Check reports them and Run refuses to serve.
func (p *Plugin) problem(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

// Check reports the registration mistakes (a missing name or function, a name registered twice, a
// group that does not exist), one per line, or nil when there are none.
func (p *Plugin) Check() error {
	if len(p.problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s registers contributions wrongly:\n  %s", p.Name, strings.Join(p.problems, "\n  "))
}

// AddTaskStep registers a task step type.
func (p *Plugin) AddTaskStep(step TaskStep) {
	switch {
	case step.Type == "" || step.Class == "":
		p.problem("a task step needs a Type and a Class (got type '%s', class '%s')", step.Type, step.Class)
	case step.Execute == nil:
		p.problem("task step '%s' has no Execute", step.Type)
	case p.steps[step.Type] != nil:
		p.problem("task step type '%s' is registered twice", step.Type)
	default:
		p.steps[step.Type] = &step
	}
}

// AddCommand registers a CLI command.
func (p *Plugin) AddCommand(cmd Command) {
	switch {
	case cmd.Name == "" || cmd.Class == "":
		p.problem("a CLI command needs a Name and a Class (got name '%s', class '%s')", cmd.Name, cmd.Class)
	case cmd.Run == nil:
		p.problem("CLI command '%s' has no Run", cmd.Name)
	case p.commands[cmd.Name] != nil:
		p.problem("CLI command '%s' is registered twice", cmd.Name)
	default:
		p.commands[cmd.Name] = &cmd
	}
}

// AddRootOption registers a flag on agent-env's root command.
func (p *Plugin) AddRootOption(opt RootOption) {
	switch {
	case opt.Name == "" || opt.Class == "":
		p.problem("a root option needs a Name and a Class (got name '%s', class '%s')", opt.Name, opt.Class)
	case opt.Apply == nil:
		p.problem("root option '%s' has no Apply", opt.Name)
	case p.rootOptions[opt.Name] != nil:
		p.problem("root option '%s' is registered twice", opt.Name)
	default:
		p.rootOptions[opt.Name] = &opt
	}
}

// AddGeneric registers a contribution to one of the groups without a registration of their own (see
// Generic).
func (p *Plugin) AddGeneric(g Generic) {
	known := false
	for _, group := range genericGroups {
		known = known || group == g.Group
	}
	switch {
	case !known:
		p.problem("'%s' is not a group AddGeneric takes; it takes %s (task steps, CLI commands and root options have their own Add methods)",
			g.Group, strings.Join(genericGroups, ", "))
	case g.Name == "" || g.Class == "":
		p.problem("a %s contribution needs a Name and a Class (got name '%s', class '%s')", g.Group, g.Name, g.Class)
	case len(g.Methods) == 0:
		p.problem("%s contribution '%s' has no Methods", g.Group, g.Name)
	case p.generics[g.Group][g.Name] != nil || (g.Group == GroupExplorerPlugins && p.explorers[g.Name] != nil):
		p.problem("%s contribution '%s' is registered twice", g.Group, g.Name)
	default:
		if p.generics[g.Group] == nil {
			p.generics[g.Group] = map[string]*Generic{}
		}
		p.generics[g.Group][g.Name] = &g
	}
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

// Run is Main without the exit: it returns the exit status (0, 1 when the registration is wrong or the
// protocol streams cannot be opened, 2 when run by hand).
func (p *Plugin) Run(args []string) int {
	if err := p.Check(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(args) == 1 && args[0] == PrintManifestArg {
		fmt.Fprint(os.Stdout, p.Manifest())
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
//
// When shutdown comes or in ends, the host is done with the process and kills it soon after
// (docs/protocol.md §3, the plugin's side of the shutdown), so Serve cancels the context of every
// handler still in flight at once, as $/cancelRequest would; shutdown is answered at once. Then it
// waits, for at most ShutdownGrace from that moment, for those handlers to return (their answers,
// "cancelled" unless they return something else, are written while out is open) and, after shutdown,
// for in to end; then it closes the open stores that are io.Closers, and returns.
func (p *Plugin) Serve(in io.Reader, out io.Writer, commandMode bool) {
	s := newSession(p, commandMode)
	// initialize runs before the next line is read, so requests pipelined behind it find it done.
	conn := NewConn(in, out, s, Options{Inline: func(method string) bool { return method == InitializeMethod }})
	s.conn = conn
	conn.Start()
	select {
	case <-conn.Done():
		// The host is gone, or closed our input after its last request: calls to it now fail at once.
	case <-s.shutdown:
		// The shutdown answer is written by its own handler, which Shutdown waits for with the others.
	}
	deadline := time.Now().Add(ShutdownGrace)
	conn.Shutdown(ShutdownGrace)
	// After shutdown the host closes the input next; the grace bounds the wait for a host that does not.
	select {
	case <-conn.Done():
	case <-time.After(time.Until(deadline)):
	}
	s.closeStores(os.Stderr)
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
