package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// pluginBin is the plugin binary under test: $GO_WORDS_BIN (scripts/test-go.sh builds it), else built
// here by TestMain.
var pluginBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	pluginBin = os.Getenv("GO_WORDS_BIN")
	if pluginBin == "" {
		dir, err := os.MkdirTemp("", "agentenv-go-words-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		pluginBin = filepath.Join(dir, "agentenv-go-words")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		build := exec.Command(goTool, "build", "-o", pluginBin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "cannot build the plugin: %v\n", err)
			return 1
		}
	}
	return m.Run()
}

// waitLimit bounds every wait so a broken plugin fails the test instead of hanging it. It is not a
// timing assertion.
const waitLimit = 30 * time.Second

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// host plays agent-env: it starts the plugin, writes requests and reads every line the plugin writes
// on the protocol stream. A line there that is not JSON-RPC fails the test.
type host struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	stdout *lockedBuffer // the terminal's stdout in command mode
	exited chan struct{}
	err    error
	nextID int64
}

func pluginEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		agentenv.CookieVar + "=1",
		agentenv.ProtocolVersionsVar + "=1-1",
		agentenv.HostVersionVar + "=0.1.0",
		agentenv.PackageVar + "=" + pluginName,
	}
}

// startPlugin starts the binary over stdin/stdout, as agent-env does for everything but CLI commands.
func startPlugin(t *testing.T) *host {
	t.Helper()
	cmd := exec.Command(pluginBin)
	cmd.Env = pluginEnv(t)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, cmd: cmd, in: in, stderr: &lockedBuffer{}}
	cmd.Stderr = h.stderr
	h.start(out)
	return h
}

// startCommandMode starts the binary with the protocol on fds 3 and 4 and the given terminal stdin.
func startCommandMode(t *testing.T, terminalIn io.Reader) *host {
	t.Helper()
	toPluginR, toPluginW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromPluginR, fromPluginW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pluginBin)
	cmd.Env = append(pluginEnv(t), agentenv.RPCFdsVar+"=3,4")
	cmd.ExtraFiles = []*os.File{toPluginR, fromPluginW} // fd 3, fd 4
	cmd.Stdin = terminalIn
	h := &host{t: t, cmd: cmd, in: toPluginW, stderr: &lockedBuffer{}, stdout: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = h.stdout, h.stderr
	h.start(fromPluginR)
	toPluginR.Close()
	fromPluginW.Close()
	t.Cleanup(func() { fromPluginR.Close() })
	return h
}

func (h *host) start(out io.Reader) {
	h.t.Helper()
	if err := h.cmd.Start(); err != nil {
		h.t.Fatalf("cannot start %s: %v", pluginBin, err)
	}
	h.lines = make(chan []byte, 64)
	h.exited = make(chan struct{})
	go func() {
		reader := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := reader.ReadBytes('\n')
			if len(line) > 0 {
				h.lines <- bytes.TrimSuffix(line, []byte("\n"))
			}
			if err != nil {
				close(h.lines)
				return
			}
		}
	}()
	go func() {
		h.err = h.cmd.Wait()
		close(h.exited)
	}()
	h.t.Cleanup(func() {
		_ = h.in.Close()
		select {
		case <-h.exited:
		case <-time.After(waitLimit):
			_ = h.cmd.Process.Kill()
			<-h.exited
		}
	})
}

func (h *host) send(v any) {
	h.t.Helper()
	line, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sendLine(line)
}

func (h *host) sendLine(line []byte) {
	h.t.Helper()
	if _, err := h.in.Write(append(line, '\n')); err != nil {
		h.t.Fatalf("cannot write to the plugin: %v\nstderr:\n%s", err, h.stderr)
	}
}

// request sends a request and returns its id.
func (h *host) request(method string, params any) int64 {
	h.t.Helper()
	h.nextID++
	h.send(map[string]any{"jsonrpc": "2.0", "id": h.nextID, "method": method, "params": params})
	return h.nextID
}

func (h *host) notify(method string, params any) {
	h.t.Helper()
	h.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// respond answers a request of the plugin.
func (h *host) respond(id agentenv.ID, result any) {
	h.t.Helper()
	h.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (h *host) respondError(id agentenv.ID, e *agentenv.Error) {
	h.t.Helper()
	h.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": e.Code, "message": e.Message, "data": e.Data}})
}

// recv is the next message the plugin writes.
func (h *host) recv() *agentenv.Message {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("the plugin closed its output; stderr:\n%s", h.stderr)
		}
		msg, err := agentenv.Decode(line)
		if err != nil {
			h.t.Fatalf("the plugin wrote a line that is not JSON-RPC: %.200q (%v)", line, err)
		}
		return msg
	case <-time.After(waitLimit):
		h.t.Fatalf("no message from the plugin; stderr:\n%s", h.stderr)
	}
	return nil
}

// answer reads until the response to id, failing on anything else.
func (h *host) answer(id int64) *agentenv.Message {
	h.t.Helper()
	msg := h.recv()
	if msg.Kind != agentenv.KindResponse || msg.ID != agentenv.IntID(id) {
		h.t.Fatalf("want the answer to request %d, got %s %q (id %v)", id, msg.Kind, msg.Method, msg.ID)
	}
	return msg
}

// call sends a request and waits for its successful answer, unmarshalled into result.
func (h *host) call(method string, params, result any) {
	h.t.Helper()
	msg := h.answer(h.request(method, params))
	if msg.Error != nil {
		h.t.Fatalf("%s failed: %d %s (data %v)", method, msg.Error.Code, msg.Error.Message, msg.Error.Data)
	}
	if result != nil {
		if err := json.Unmarshal(msg.Result, result); err != nil {
			h.t.Fatalf("the answer to %s does not fit: %v: %s", method, err, msg.Result)
		}
	}
}

// callError sends a request and returns the error it must end in.
func (h *host) callError(method string, params any) *agentenv.Error {
	h.t.Helper()
	msg := h.answer(h.request(method, params))
	if msg.Error == nil {
		h.t.Fatalf("%s succeeded with %s; want an error", method, msg.Result)
	}
	return msg.Error
}

// expectRequest reads the next message, which must be a request for method from the plugin.
func (h *host) expectRequest(method string) (*agentenv.Message, map[string]any) {
	h.t.Helper()
	msg := h.recv()
	if msg.Kind != agentenv.KindRequest || msg.Method != method {
		h.t.Fatalf("want the plugin to call %s, got %s %q %s %v", method, msg.Kind, msg.Method, msg.Result, msg.Error)
	}
	var params map[string]any
	if err := json.Unmarshal(msg.Params, &params); err != nil {
		h.t.Fatal(err)
	}
	return msg, params
}

type initResult struct {
	Protocol int `json:"protocol"`
	Plugin   struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"plugin"`
	Contributions []agentenv.Contribution `json:"contributions"`
	Stores        []agentenv.StoreInfo    `json:"stores"`
}

func initializeParams(min, max int) map[string]any {
	return map[string]any{
		"host":     map[string]string{"name": "agent-env", "version": "0.1.0"},
		"protocol": map[string]int{"min": min, "max": max},
		"package":  pluginName,
		"settings": map[string]any{"greeting": "hi"},
	}
}

func (h *host) initialize() initResult {
	h.t.Helper()
	var result initResult
	h.call("initialize", initializeParams(1, 1), &result)
	return result
}

// exitCode waits for the plugin to exit and returns its status.
func (h *host) exitCode() int {
	h.t.Helper()
	select {
	case <-h.exited:
	case <-time.After(waitLimit):
		h.t.Fatalf("the plugin did not exit; stderr:\n%s", h.stderr)
	}
	var exitErr *exec.ExitError
	if errors.As(h.err, &exitErr) {
		return exitErr.ExitCode()
	}
	if h.err != nil {
		h.t.Fatalf("waiting for the plugin: %v", h.err)
	}
	return 0
}

// drained says whether the plugin wrote nothing more on the protocol stream before it closed.
func (h *host) drained() {
	h.t.Helper()
	for line := range h.lines {
		if _, err := agentenv.Decode(line); err != nil {
			h.t.Fatalf("the plugin wrote a line that is not JSON-RPC: %.200q", line)
		}
	}
}

// stderrContains waits until the plugin's stderr holds want, since stderr is copied by its own goroutine
// and may lag the protocol answers; it gives up after 10 s (a deadline, not a timing assertion).
func (h *host) stderrContains(want string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if strings.Contains(h.stderr.String(), want) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
