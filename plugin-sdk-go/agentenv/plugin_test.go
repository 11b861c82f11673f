//go:build unix

package agentenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperVar makes the test binary act as a plugin (see TestMain: "1" is helperPlugin, "kept-host"
// KeptHostPlugin, "shutdown" shutdownHelperPlugin), so the SDK's process-level duties (the cookie, fd 1 moved aside, exit statuses) are
// tested in a real child process.
const helperVar = "AGENTENV_TEST_HELPER_PLUGIN"

func TestMain(m *testing.M) {
	switch os.Getenv(helperVar) {
	case "1":
		helperPlugin().Main()
	case "kept-host":
		KeptHostPlugin().Main()
	case "shutdown":
		shutdownHelperPlugin().Main()
	}
	os.Exit(m.Run())
}

func helperPlugin() *Plugin {
	p := NewPlugin("agentenv-helper", "0.0.1")
	p.AddTaskStep(TaskStep{Type: "stray_print", Class: "StrayPrint", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		fmt.Println("stray fmt.Println")
		if _, err := syscall.Write(1, []byte("stray write to fd 1\n")); err != nil {
			return nil, err
		}
		// A child process inheriting fd 1 as it is, the way C code or a forked tool would.
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "echo stray child process"},
			&syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
		if err != nil {
			return nil, err
		}
		var status syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &status, 0, nil); err != nil {
			return nil, err
		}
		return map[string]any{"printed": true}, nil
	}})
	p.AddTaskStep(TaskStep{Type: "read_stdin", Class: "ReadStdin", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		// A child process given the plugin's stdin, then Go code reading it: both must find /dev/null,
		// not the host's next messages.
		child := exec.CommandContext(ctx, "/bin/sh", "-c", `read -r line; echo "got:$line" >&2`)
		child.Stdin, child.Stderr = os.Stdin, os.Stderr
		if err := child.Run(); err != nil {
			return nil, err
		}
		data, err := io.ReadAll(os.Stdin)
		return map[string]any{"stdin": string(data)}, err
	}})
	return p
}

// shutdownHelperPlugin has, for the shutdown, one step that watches its ctx and one that ignores it
// (far longer than any test waits).
func shutdownHelperPlugin() *Plugin {
	p := NewPlugin("agentenv-helper", "0.0.1")
	p.AddTaskStep(TaskStep{Type: "watch_cancel", Class: "WatchCancel", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		fmt.Fprintln(os.Stderr, "watch_cancel: started")
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "watch_cancel: saw the cancel")
		return nil, ctx.Err()
	}})
	p.AddTaskStep(TaskStep{Type: "stubborn", Class: "Stubborn", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		fmt.Fprintln(os.Stderr, "stubborn: started")
		time.Sleep(10 * time.Minute)
		return map[string]any{"stubborn": "finished"}, nil
	}})
	return p
}

func startHelper(t *testing.T, env ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperVar+"=1")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func TestAStrayPrintLandsOnStderrNotOnTheProtocol(t *testing.T) {
	cmd, stdout, stderr := startHelper(t, CookieVar+"=1")
	cmd.Stdin = strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host":{"name":"t","version":"0"},"protocol":{"min":1,"max":1},"package":"agentenv-helper","settings":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"execute","params":{"type":"stray_print","step":{"id":"s"},"context":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"shutdown"}` + "\n")
	if err := cmd.Run(); err != nil {
		t.Fatalf("the plugin failed: %v\nstderr:\n%s", err, stderr)
	}
	answered := map[int64]bool{}
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		msg, err := Decode(scanner.Bytes())
		if err != nil {
			t.Fatalf("stdout holds a line that is not JSON-RPC: %q", scanner.Text())
		}
		if msg.Error != nil {
			t.Fatalf("request %v failed: %v", msg.ID, msg.Error)
		}
		answered[msg.ID.Int()] = true
	}
	if !answered[1] || !answered[2] || !answered[3] {
		t.Fatalf("answers on stdout: %v\nstdout:\n%s", answered, stdout)
	}
	for _, want := range []string{"stray fmt.Println", "stray write to fd 1", "stray child process"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// fd 0 points at /dev/null while the plugin runs: a child process started with cmd.Stdin = os.Stdin
// (and Go code reading os.Stdin) gets end of file at once instead of taking the host's next request.
func TestAChildGivenStdinCannotTakeTheHostsMessages(t *testing.T) {
	cmd, _, stderr := startHelper(t, CookieVar+"=1")
	cmd.Stdout = nil
	// A child left behind may hold stderr open; do not wait for it after the plugin exits.
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fail := func(format string, args ...any) {
		t.Helper()
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		<-exited
		t.Fatalf(format+"\nstderr:\n%s", append(args, stderr)...)
	}
	answers := make(chan *Message, 10)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if msg, err := Decode(scanner.Bytes()); err == nil {
				answers <- msg
			}
		}
		close(answers)
	}()
	answered := map[int64]*Message{}
	waitFor := func(id int64, limit time.Duration) *Message {
		t.Helper()
		deadline := time.After(limit)
		for answered[id] == nil {
			select {
			case msg, open := <-answers:
				if !open {
					fail("the plugin closed stdout before answering request %d", id)
				}
				answered[msg.ID.Int()] = msg
			case <-deadline:
				return nil
			}
		}
		return answered[id]
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			fail("cannot write to the plugin: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host":{"name":"t","version":"0"},"protocol":{"min":1,"max":1},"package":"agentenv-helper"}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"execute","params":{"type":"read_stdin","step":{"id":"s"},"context":{}}}`)
	if waitFor(1, callTimeout) == nil {
		fail("no answer to initialize")
	}
	// With the bug, the child still waits on the host's pipe here and takes the next line.
	execute := waitFor(2, 2*time.Second)
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if ping := waitFor(3, callTimeout); ping == nil || ping.Error == nil || ping.Error.Code != -32601 {
		fail("the request sent while the step's child ran was not answered (-32601): %v", ping)
	}
	if execute == nil {
		execute = waitFor(2, callTimeout)
	}
	if execute == nil || execute.Error != nil || string(execute.Result) != `{"metadata":{"stdin":""}}` {
		fail("execute answered %v", execute)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`)
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("want exit 0, got %v\nstderr:\n%s", err, stderr)
		}
	case <-time.After(callTimeout):
		fail("the plugin did not exit after shutdown")
	}
	if !strings.Contains(stderr.String(), "got:\n") || strings.Contains(stderr.String(), "got:{") {
		t.Fatalf("the child read something other than end of file:\n%s", stderr)
	}
}

func TestRunByHandSaysWhatItIsAndExits2(t *testing.T) {
	cmd, stdout, stderr := startHelper(t, CookieVar+"=")
	// A stdin that never ends: the plugin must not read it.
	reader, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	cmd.Stdin = reader
	err = cmd.Run()
	reader.Close()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
		t.Fatalf("want exit status 2, got %v", err)
	}
	want := "agentenv-helper 0.0.1 is an agent-env plugin; agent-env starts it (try agent-env plugin show agentenv-helper)\n"
	if stderr.String() != want || stdout.Len() != 0 {
		t.Fatalf("stderr %q stdout %q", stderr, stdout)
	}
}

func TestTheManifestFlagPrintsTheManifest(t *testing.T) {
	cmd, stdout, _ := startHelper(t)
	cmd.Args = append(cmd.Args, PrintManifestArg)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != helperPlugin().Manifest() {
		t.Fatalf("printed %q", stdout)
	}
}

func TestStdinEndOfFileExits0(t *testing.T) {
	cmd, _, stderr := startHelper(t, CookieVar+"=1")
	cmd.Stdin = strings.NewReader("")
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("want exit 0 on end of file, got %v; stderr:\n%s", err, stderr)
		}
	case <-time.After(callTimeout):
		_ = cmd.Process.Kill()
		t.Fatal("the plugin did not exit when its stdin ended")
	}
}

func TestCallsBeforeInitializeAreRefused(t *testing.T) {
	host, finished := servePlugin(t, helperPlugin())
	err := host.conn.Call(withTimeout(t), "execute", map[string]any{"type": "stray_print"}, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindInvalidRequest || !strings.Contains(rpcErr.Message, "initialize") {
		t.Fatalf("want invalid-request naming initialize, got %v", err)
	}
	ctx := withTimeout(t)
	if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err != nil {
		t.Fatal(err)
	}
	if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err == nil {
		t.Fatal("a second initialize was accepted")
	}
	err = host.conn.Call(ctx, "sandbox_providers.create_sandbox", nil, nil)
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32601 {
		t.Fatalf("want -32601 for an unknown method, got %v", err)
	}
	if err := host.conn.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	// After shutdown is answered, Serve returns without the input ending.
	waitFinished(t, finished)
}

func TestInitializeListsTheContributions(t *testing.T) {
	p := helperPlugin()
	p.AddCommand(Command{Name: "helper", Class: "helper", Description: "Help", Run: func(context.Context, *Invocation) int { return 0 }})
	host, _ := servePlugin(t, p)
	var result struct {
		Protocol      int            `json:"protocol"`
		Contributions []Contribution `json:"contributions"`
		Stores        []any          `json:"stores"`
	}
	if err := host.conn.Call(withTimeout(t), "initialize", initializeParamsFor(Range{1, 3}), &result); err != nil {
		t.Fatal(err)
	}
	want := []Contribution{
		{Group: "task_steps", Name: "read_stdin", Type: "read_stdin", Class: "ReadStdin", Methods: []string{"execute", "from_dict"}},
		{Group: "task_steps", Name: "stray_print", Type: "stray_print", Class: "StrayPrint", Methods: []string{"execute", "from_dict"}},
		{Group: "cli_plugins", Name: "helper", Type: "helper", Class: "helper", Methods: []string{"run"}, Description: "Help"},
	}
	if fmt.Sprint(result.Contributions) != fmt.Sprint(want) || result.Protocol != 1 || result.Stores == nil {
		t.Fatalf("initialize answered %+v", result)
	}
}

func TestCanonicalNamesCompareAsTheHostDoes(t *testing.T) {
	cases := map[string]string{
		"agentenv-go-words":  "agentenv-go-words",
		"Agentenv_Go..Words": "agentenv-go-words",
		"a-_.b":              "a-b",
	}
	for in, want := range cases {
		if got := CanonicalName(in); got != want {
			t.Errorf("CanonicalName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAStepCanReportProgressAndReadSettings(t *testing.T) {
	p := NewPlugin("agentenv-progress", "0.0.1")
	p.AddTaskStep(TaskStep{Type: "slow", Class: "Slow", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		if err := call.Progress(1, 2, "half way"); err != nil {
			return nil, err
		}
		settings, err := call.Host.Settings(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"from_host": settings["tenant"], "from_initialize": call.Settings["tenant"]}, nil
	}})
	progress := make(chan map[string]any, 1)
	hostSide := &hostHandler{progress: progress}
	host, _ := servePluginWith(t, p, hostSide)
	ctx := withTimeout(t)
	params := initializeParamsFor(Range{1, 1})
	params["settings"] = map[string]any{"tenant": "acme"}
	if err := host.conn.Call(ctx, "initialize", params, nil); err != nil {
		t.Fatal(err)
	}
	var result struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := host.conn.Call(ctx, "execute", map[string]any{"type": "slow", "step": map[string]any{}, "context": map[string]any{}}, &result); err != nil {
		t.Fatal(err)
	}
	if result.Metadata["from_host"] != "acme-now" || result.Metadata["from_initialize"] != "acme" {
		t.Fatalf("metadata %v", result.Metadata)
	}
	select {
	case got := <-progress:
		if got["progress"] != 1.0 || got["total"] != 2.0 || got["message"] != "half way" || got["id"] == nil {
			t.Fatalf("progress %v", got)
		}
	case <-time.After(callTimeout):
		t.Fatal("no $/progress")
	}
}

// hostHandler answers host.settings and records $/progress, as agent-env would.
type hostHandler struct {
	progress chan map[string]any
}

func (h *hostHandler) HandleRequest(_ context.Context, req *Request) (any, error) {
	if req.Method == "host.settings" {
		return map[string]any{"tenant": "acme-now"}, nil
	}
	return nil, NewError(KindMethodNotFound, "no method '%s'", req.Method)
}

func (h *hostHandler) HandleNotification(method string, params json.RawMessage) {
	if method != ProgressMethod {
		return
	}
	var p map[string]any
	if json.Unmarshal(params, &p) == nil {
		select {
		case h.progress <- p:
		default:
		}
	}
}

// The plugin exits when its parent dies even though its stdin stays open (held here by the test).
func TestThePluginExitsWhenItsParentDies(t *testing.T) {
	pipe := func() (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}
	stdinR, stdinW := pipe()
	defer stdinW.Close()
	stdoutR, stdoutW := pipe()
	defer stdoutR.Close()
	holdR, holdW := pipe()
	// sh starts the plugin in the background, then lives until the test closes holdW.
	cmd := exec.Command("/bin/sh", "-c", `"$0" <&3 >&4 3<&- 4>&- 5<&- & read -r line <&5 || true`, os.Args[0])
	cmd.Env = append(os.Environ(), helperVar+"=1", CookieVar+"=1")
	cmd.ExtraFiles = []*os.File{stdinR, stdoutW, holdR}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	stdoutW.Close()
	holdR.Close()
	if _, err := stdinW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host":{"name":"t","version":"0"},"protocol":{"min":1,"max":1},"package":"agentenv-helper"}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdoutR)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	select {
	case line := <-lines:
		if msg, err := Decode([]byte(line)); err != nil || msg.Error != nil {
			t.Fatalf("initialize answered %q", line)
		}
	case <-time.After(callTimeout):
		t.Fatal("the plugin never answered initialize")
	}
	// Now its parent goes away.
	holdW.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, open := <-lines:
		if open {
			t.Fatal("the plugin wrote more than the initialize answer")
		}
	case <-time.After(callTimeout):
		t.Fatal("the plugin did not exit after its parent died")
	}
}

// closingSecrets is a secret store that records that it was closed.
type closingSecrets struct{ closed chan struct{} }

func (closingSecrets) Get(context.Context, string) (string, bool, error) { return "", false, nil }
func (s closingSecrets) Close() error {
	close(s.closed)
	return nil
}

// Once shutdown is answered, or the input ends, the host kills the plugin within seconds: Serve cancels
// every call still in flight at once, so a step that watches its ctx ends well before that, answers
// "cancelled", and the stores are closed (docs/protocol.md §3, the plugin's side of the shutdown).
func TestShutdownAndEndOfInputCancelTheCallsInFlight(t *testing.T) {
	for _, end := range []string{"shutdown", "end of input"} {
		t.Run(end, func(t *testing.T) {
			started := make(chan struct{})
			secrets := closingSecrets{closed: make(chan struct{})}
			p := NewPlugin("agentenv-waits", "0.0.1")
			p.AddTaskStep(TaskStep{Type: "wait", Class: "Wait", Execute: func(ctx context.Context, _ *StepCall) (map[string]any, error) {
				close(started)
				<-ctx.Done()
				return nil, ctx.Err()
			}})
			p.AddSecretStore(StoreClass[SecretStore]{Class: "Closing",
				Open: func(context.Context, StoreConfig) (SecretStore, error) { return secrets, nil }})
			host, finished := servePlugin(t, p)
			ctx := withTimeout(t)
			if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err != nil {
				t.Fatal(err)
			}
			if err := host.conn.Call(ctx, "store.open", map[string]any{"kind": "secret", "class": "Closing", "config": map[string]any{}}, nil); err != nil {
				t.Fatal(err)
			}
			answer := make(chan error, 1)
			go func() {
				answer <- host.conn.Call(ctx, "execute", map[string]any{"type": "wait", "step": map[string]any{"id": "w"}}, nil)
			}()
			select {
			case <-started:
			case <-time.After(callTimeout):
				t.Fatal("the step never started")
			}
			if end == "shutdown" {
				if err := host.conn.Call(ctx, "shutdown", nil, nil); err != nil {
					t.Fatal(err)
				}
				// The step returns only once its ctx ended: here, before the input ends.
				var rpcErr *Error
				if err := <-answer; !errors.As(err, &rpcErr) || rpcErr.Kind() != KindCancelled {
					t.Fatalf("want the execute call answered as cancelled, got %v", err)
				}
				host.close()
			} else {
				host.close()
				var rpcErr *Error
				if err := <-answer; !errors.As(err, &rpcErr) || rpcErr.Kind() != KindCancelled {
					t.Fatalf("want the execute call answered as cancelled, got %v", err)
				}
			}
			waitFinished(t, finished)
			select {
			case <-secrets.closed:
			default:
				t.Fatal("the open store was not closed")
			}
		})
	}
}

// A step that ignores its cancel holds neither the answer to shutdown nor the end of Serve: shutdown is
// answered while it still runs, and Serve returns once the grace is over, with the stores closed.
func TestAStepThatIgnoresItsCancelDoesNotHoldTheShutdown(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	secrets := closingSecrets{closed: make(chan struct{})}
	p := NewPlugin("agentenv-stubborn", "0.0.1")
	p.AddTaskStep(TaskStep{Type: "stubborn", Class: "Stubborn", Execute: func(context.Context, *StepCall) (map[string]any, error) {
		close(started)
		<-release // only the test's end lets it go
		return map[string]any{"stubborn": "finished"}, nil
	}})
	p.AddSecretStore(StoreClass[SecretStore]{Class: "Closing",
		Open: func(context.Context, StoreConfig) (SecretStore, error) { return secrets, nil }})
	host, finished := servePlugin(t, p)
	ctx := withTimeout(t)
	if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err != nil {
		t.Fatal(err)
	}
	if err := host.conn.Call(ctx, "store.open", map[string]any{"kind": "secret", "class": "Closing", "config": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = host.conn.Call(ctx, "execute", map[string]any{"type": "stubborn", "step": map[string]any{"id": "s"}}, nil)
	}()
	select {
	case <-started:
	case <-time.After(callTimeout):
		t.Fatal("the step never started")
	}
	if err := host.conn.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	host.close()
	waitFinished(t, finished)
	select {
	case <-secrets.closed:
	default:
		t.Fatal("the open store was not closed")
	}
}

// The grace is the one every SDK keeps (protocol/vectors/shutdown.jsonl).
func TestTheShutdownGraceIsTheSharedOne(t *testing.T) {
	type shutdownCase struct {
		ShutdownGraceMs int64 `json:"shutdown_grace_ms"`
		ExitCode        int   `json:"exit_code"`
	}
	cases := readVectors[shutdownCase](t, "shutdown.jsonl")
	if len(cases) != 1 {
		t.Fatalf("want one shutdown case, got %d", len(cases))
	}
	if got := ShutdownGrace.Milliseconds(); got != cases[0].ShutdownGraceMs {
		t.Fatalf("ShutdownGrace is %d ms, the shared vectors say %d ms", got, cases[0].ShutdownGraceMs)
	}
	if cases[0].ExitCode != 0 {
		t.Fatalf("the shared vectors say exit code %d; Run returns 0 after Serve", cases[0].ExitCode)
	}
}

// A plugin process with two steps in flight when shutdown comes, one that watches its ctx and one that
// ignores it: shutdown is answered, the first is told it is cancelled and answers so, and the process
// exits 0 once stdin closes, without waiting for the second (it would sleep 10 minutes).
func TestAPluginProcessWithStepsInFlightAtShutdownExits0(t *testing.T) {
	cmd, _, _ := startHelper(t, CookieVar+"=1", helperVar+"=shutdown")
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	stderrLines := make(chan string, 100)
	go func() {
		defer close(stderrLines)
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			stderrLines <- scanner.Text()
		}
	}()
	answers := make(chan *Message, 10)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if msg, err := Decode(scanner.Bytes()); err == nil {
				answers <- msg
			}
		}
		close(answers)
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answerTo := func(id int64) *Message {
		t.Helper()
		for {
			select {
			case msg, open := <-answers:
				if !open {
					t.Fatalf("stdout ended before the answer to %d", id)
				}
				if msg.ID.Int() == id {
					return msg
				}
			case <-time.After(callTimeout):
				t.Fatalf("no answer to %d", id)
			}
		}
	}
	var seen []string
	waitStderr := func(want string) {
		t.Helper()
		for {
			select {
			case line, open := <-stderrLines:
				if !open {
					t.Fatalf("stderr ended before %q: %q", want, seen)
				}
				seen = append(seen, line)
				if line == want {
					return
				}
			case <-time.After(callTimeout):
				t.Fatalf("stderr never said %q: %q", want, seen)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host":{"name":"t","version":"0"},"protocol":{"min":1,"max":1},"package":"agentenv-helper","settings":{}}}`)
	if msg := answerTo(1); msg.Error != nil {
		t.Fatalf("initialize failed: %v", msg.Error)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"execute","params":{"type":"watch_cancel","step":{"id":"w"},"context":{}}}`)
	waitStderr("watch_cancel: started")
	send(`{"jsonrpc":"2.0","id":3,"method":"execute","params":{"type":"stubborn","step":{"id":"s"},"context":{}}}`)
	waitStderr("stubborn: started")
	send(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`)
	// Both answers come, in either order: the step that watched its ctx says it was cancelled.
	got := map[int64]*Message{}
	for len(got) < 2 {
		select {
		case msg, open := <-answers:
			if !open {
				t.Fatalf("stdout ended with answers to %v only", got)
			}
			got[msg.ID.Int()] = msg
		case <-time.After(callTimeout):
			t.Fatalf("answers to %v only", got)
		}
	}
	if got[4] == nil || got[4].Error != nil {
		t.Fatalf("shutdown was not answered with a result: %v", got)
	}
	if got[2] == nil || got[2].Error == nil || got[2].Error.Kind() != KindCancelled {
		t.Fatalf("want the watching step answered as cancelled, got %v", got)
	}
	waitStderr("watch_cancel: saw the cancel")
	_ = stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the plugin did not exit 0: %v", err)
		}
	case <-time.After(callTimeout):
		t.Fatal("the plugin did not exit after shutdown and the end of stdin")
	}
}
