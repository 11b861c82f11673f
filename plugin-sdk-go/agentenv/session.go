package agentenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// session is the state of one connection to the host.
type session struct {
	plugin      *Plugin
	commandMode bool
	conn        *Conn

	mu          sync.Mutex
	initialized bool
	settings    map[string]any
	pkg         string
	stores      map[string]*openStore
	nextHandle  int

	shutdownOnce sync.Once
	shutdown     chan struct{}
}

func newSession(p *Plugin, commandMode bool) *session {
	return &session{plugin: p, commandMode: commandMode, shutdown: make(chan struct{}), stores: map[string]*openStore{}}
}

// packageName is the package the host started the plugin as (initialize's package), else its name.
func (s *session) packageName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pkg != "" {
		return s.pkg
	}
	return s.plugin.Name
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
	// What the handler asks the host names this request (call_id), and its Host ends with it.
	ctx = withCallID(ctx, req.ID)
	host := newHost(s.conn, req.ID)
	defer host.end()
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
		return s.execute(ctx, req, host, settings)
	case TaskStepValidateMethod:
		return s.validate(req)
	case CLIRunMethod:
		return s.cliRun(ctx, req, host, settings)
	case CLIRootOptionMethod:
		return s.rootOption(ctx, req, host, settings)
	case StoreOpenMethod:
		return s.openStoreFor(ctx, req)
	case ExplorerRouterMethod:
		if len(s.plugin.explorers) > 0 {
			return s.explorerRouter(req)
		}
	case ExplorerRequestMethod:
		if len(s.plugin.explorers) > 0 {
			return s.explorerRequest(ctx, req, host, settings)
		}
	}
	if strings.HasPrefix(req.Method, "store.") {
		return s.storeOp(ctx, req)
	}
	if group, op, found := strings.Cut(req.Method, "."); found && s.plugin.generics[group] != nil {
		return s.genericCall(ctx, req, host, group, op, settings)
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
	s.pkg = params.Package
	s.settings = params.Settings
	if s.settings == nil {
		s.settings = map[string]any{}
	}
	return map[string]any{
		"protocol":      version,
		"plugin":        map[string]string{"name": p.Name, "version": p.Version},
		"contributions": orEmpty(p.Contributions()),
		"stores":        p.Stores(),
	}, nil
}

type executeParams struct {
	Type    string          `json:"type"`
	Step    json.RawMessage `json:"step"`
	Context json.RawMessage `json:"context"`
	// TimeoutMs is how long the host gives the step, from when the request was read; nil from a
	// host that does not say.
	TimeoutMs *uint64 `json:"timeout_ms"`
}

// maxTimeoutMs is the longest timeout_ms a time.Duration holds; a longer one is no limit, in effect.
const maxTimeoutMs = uint64(math.MaxInt64 / int64(time.Millisecond))

// stepDeadline is when the host will cancel a step given timeoutMs from received, and whether it
// gave one.
func stepDeadline(received time.Time, timeoutMs *uint64) (time.Time, bool) {
	if timeoutMs == nil || *timeoutMs > maxTimeoutMs {
		return time.Time{}, false
	}
	if received.IsZero() {
		received = time.Now()
	}
	return received.Add(time.Duration(*timeoutMs) * time.Millisecond), true
}

func (s *session) step(stepType string) (*TaskStep, error) {
	step, ok := s.plugin.steps[stepType]
	if !ok {
		return nil, NewError(KindInvalidParams, "%s has no task step of type '%s'; it has %s",
			s.plugin.Name, stepType, strings.Join(sortedKeys(s.plugin.steps), ", "))
	}
	return step, nil
}

func (s *session) execute(ctx context.Context, req *Request, host *Host, settings map[string]any) (any, error) {
	var params executeParams
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	step, err := s.step(params.Type)
	if err != nil {
		return nil, err
	}
	// The step's ctx ends at the host's deadline too, as well as when the host cancels the call.
	if deadline, ok := stepDeadline(req.received, params.TimeoutMs); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	call := &StepCall{RequestID: req.ID, Type: params.Type, Step: map[string]any{}, Host: host, Settings: settings}
	if len(params.Step) > 0 && !isNull(params.Step) {
		if err := json.Unmarshal(params.Step, &call.Step); err != nil {
			return nil, NewError(KindInvalidParams, "the params of '%s' do not fit: 'step': %s", req.Method, describeJSONError(err))
		}
		call.rawStep = params.Step
	}
	if len(params.Context) > 0 && !isNull(params.Context) {
		if err := json.Unmarshal(params.Context, &call.Context); err != nil {
			return nil, NewError(KindInvalidParams, "the run context of '%s' does not fit: %s", params.Type, describeJSONError(err))
		}
		call.Context.Raw = params.Context
	}
	metadata, err := executeStep(ctx, step, call)
	if err != nil {
		return nil, stepError(err)
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

func (s *session) cliRun(ctx context.Context, req *Request, host *Host, settings map[string]any) (any, error) {
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
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Host: host, Settings: settings,
	}
	if !s.commandMode {
		// Outside command mode fd 1 is the protocol's; keep the command's output off it.
		inv.Stdin, inv.Stdout = strings.NewReader(""), os.Stderr
	}
	return map[string]int{"exit_code": cmd.Run(ctx, inv)}, nil
}

func (s *session) rootOption(ctx context.Context, req *Request, host *Host, settings map[string]any) (any, error) {
	var params struct {
		Flag  string  `json:"flag"`
		Value *string `json:"value"`
	}
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	var opt *RootOption
	for name, candidate := range s.plugin.rootOptions {
		if params.Flag == name || params.Flag == "--"+name || utf8.RuneCountInString(name) == 1 && params.Flag == "-"+name {
			opt = candidate
		}
	}
	if opt == nil {
		return nil, NewError(KindInvalidParams, "%s has no root option '%s'; it has %s",
			s.plugin.Name, params.Flag, strings.Join(sortedKeys(s.plugin.rootOptions), ", "))
	}
	path, err := opt.Apply(ctx, &RootOptionCall{Flag: params.Flag, Value: params.Value, Host: host, Settings: settings})
	if err != nil {
		return nil, err
	}
	if path == "" {
		return map[string]any{}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, NewError(KindInvalidValue, "root option '%s' returned the config path '%s', which cannot be made absolute: %s", params.Flag, path, err)
	}
	return map[string]string{"config_path": abs}, nil
}

// genericCall answers "<group>.<op>" for a Generic contribution: params.type picks the contribution
// when the group has several.
func (s *session) genericCall(ctx context.Context, req *Request, host *Host, group, op string, settings map[string]any) (any, error) {
	var params struct {
		Type *string `json:"type"`
	}
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	var found *Generic
	candidates := s.plugin.generics[group]
	switch {
	case params.Type != nil:
		for _, g := range candidates {
			if g.typeName() == *params.Type || g.Name == *params.Type {
				found = g
			}
		}
		if found == nil {
			return nil, NewError(KindInvalidParams, "%s has no %s of type '%s'; it has %s",
				s.plugin.Name, group, *params.Type, strings.Join(sortedKeys(candidates), ", "))
		}
	case len(candidates) == 1:
		for _, g := range candidates {
			found = g
		}
	default:
		return nil, NewError(KindInvalidParams, "%s needs 'type': %s has several %s (%s)",
			req.Method, s.plugin.Name, group, strings.Join(sortedKeys(candidates), ", "))
	}
	method, ok := found.Methods[op]
	if !ok {
		return nil, NewError(KindMethodNotFound, "%s has no method '%s': %s '%s' implements %s",
			s.plugin.Name, req.Method, group, found.Name, strings.Join(sortedKeys(found.Methods), ", "))
	}
	return method(ctx, &GenericCall{Method: req.Method, Params: req.Params, Host: host, Settings: settings})
}

// executeStep runs step.Execute; a panic in it fails the step as a Rust or Python step's does:
// step-failed with error_type "panic", the panic's value as the message, and where it happened
// (the goroutine's stack) as data.traceback, which agent-env shows with --verbose and keeps in the
// instance record. Stderr gets one line, not the stack again: agent-env -v shows both.
func executeStep(ctx context.Context, step *TaskStep, call *StepCall) (metadata map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			stack := debug.Stack()
			fmt.Fprintf(os.Stderr, "agentenv: the step '%s' panicked: %v (its stack goes with the step's failure)\n", call.Type, p)
			metadata, err = nil, StepFailed("panic", "%v", p).With("traceback", fmt.Sprintf("panic: %v\n\n%s", p, stack))
		}
	}()
	return step.Execute(ctx, call)
}
