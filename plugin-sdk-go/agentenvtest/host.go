package agentenvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// Host plays agent-env's side of one plugin connection in a test: it sends requests with Call (or the
// helpers Initialize, OpenStore and OpenObjectStore) and answers the plugin's host.* calls from
// HostOptions (ObjectStore, HostHandler).
type Host struct {
	// Conn is the host's end of the protocol.
	Conn      *agentenv.Conn
	stderr    *syncBuffer
	close     func() error
	closeOnce sync.Once
	closeErr  error
}

// HostOptions tune StartPlugin, ServeInProcess and NewInProcessHost.
type HostOptions struct {
	// ObjectStore (optional) plays the host's object store: it answers the plugin's
	// host.store.object.<op> requests, which is what a step's call.Host.ObjectStore() calls, e.g.
	// NewMemoryObjectStore("host"). A test reads what the plugin wrote from it afterwards.
	ObjectStore agentenv.ObjectStore
	// HostHandler answers the plugin's other host.* requests; nil answers each with method-not-found.
	HostHandler agentenv.Handler
	// Env is added to the child's environment (StartPlugin only).
	Env []string
}

// hostObjectPrefix is the method prefix of the host's object store (docs/protocol.md §5).
const hostObjectPrefix = "host.store.object."

// handler is what answers the plugin's host.* requests: ObjectStore for host.store.object.*, then
// HostHandler.
func (o HostOptions) handler() agentenv.Handler {
	if o.ObjectStore == nil {
		return o.HostHandler
	}
	return agentenv.HandlerFunc(func(ctx context.Context, req *agentenv.Request) (any, error) {
		if strings.HasPrefix(req.Method, hostObjectPrefix) {
			return agentenv.ServeObjectStore(ctx, o.ObjectStore, hostObjectPrefix, req)
		}
		if o.HostHandler == nil {
			return nil, agentenv.NewError(agentenv.KindMethodNotFound, "the test host has no method '%s'", req.Method)
		}
		return o.HostHandler.HandleRequest(ctx, req)
	})
}

// waitLimit bounds how long Close waits for the plugin to exit before killing it.
const waitLimit = 10 * time.Second

// StartPlugin starts a built plugin binary as agent-env does: the cookie and protocol variables set, a
// temporary HOME (and XDG folders) so the plugin never touches the real one, the protocol on its stdin
// and stdout. The plugin is shut down and reaped when the test ends; its stderr is in Stderr.
func StartPlugin(t *testing.T, binary string, opts HostOptions) *Host {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(binary)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		agentenv.CookieVar + "=" + agentenv.CookieValue,
		agentenv.ProtocolVersionsVar + "=1-1",
		agentenv.HostVersionVar + "=0.1.0",
	}, opts.Env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{stderr: &syncBuffer{}}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start the plugin %s: %v", binary, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	h.Conn = agentenv.NewConn(out, in, opts.handler(), agentenv.Options{Log: h.stderr})
	h.Conn.Start()
	h.close = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = h.Conn.Call(ctx, agentenv.ShutdownMethod, nil, nil)
		_ = in.Close()
		select {
		case <-exited:
			return nil
		case <-time.After(waitLimit):
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("the plugin %s did not exit within %s of shutdown and was killed", binary, waitLimit)
		}
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// ServeInProcess serves p on a pair of pipes inside the test process, with no binary to build: what
// StartPlugin gives, minus the process-level duties (the cookie, fds 0 and 1 moved aside). The plugin
// is stopped when the test ends.
func ServeInProcess(t *testing.T, p *agentenv.Plugin, opts HostOptions) *Host {
	t.Helper()
	h, err := NewInProcessHost(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// NewInProcessHost is ServeInProcess for code without a *testing.T (an Example, a helper of your own):
// it serves p on a pair of pipes inside the process and returns the host's end. Close it when done.
// It fails when p's registration is wrong (Plugin.Check).
func NewInProcessHost(p *agentenv.Plugin, opts HostOptions) (*Host, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	toPluginR, toPluginW := io.Pipe()
	fromPluginR, fromPluginW := io.Pipe()
	finished := make(chan struct{})
	go func() {
		p.Serve(toPluginR, fromPluginW, false)
		fromPluginW.Close()
		close(finished)
	}()
	h := &Host{stderr: &syncBuffer{}}
	h.Conn = agentenv.NewConn(fromPluginR, toPluginW, opts.handler(), agentenv.Options{Log: h.stderr})
	h.Conn.Start()
	h.close = func() error {
		_ = toPluginW.Close()
		select {
		case <-finished:
			return nil
		case <-time.After(waitLimit):
			return fmt.Errorf("the plugin did not return from Serve within %s of its input ending", waitLimit)
		}
	}
	return h, nil
}

// Close stops the plugin as agent-env does: StartPlugin's gets shutdown, then its stdin is closed and
// it is waited for (killed after 10 s); an in-process one's input is closed and Serve waited for.
// StartPlugin and ServeInProcess close the Host when the test ends; closing it again does nothing.
func (h *Host) Close() error {
	h.closeOnce.Do(func() { h.closeErr = h.close() })
	return h.closeErr
}

// Call sends a request to the plugin and waits for its answer, unmarshalled into result (unless result
// is nil); an error answer is an *agentenv.Error. It is h.Conn.Call.
func (h *Host) Call(ctx context.Context, method string, params, result any) error {
	return h.Conn.Call(ctx, method, params, result)
}

// Stderr is what the plugin wrote to stderr so far (StartPlugin), with the host connection's own log.
func (h *Host) Stderr() string { return h.stderr.String() }

// Initialize sends initialize for protocol 1 with the given settings and returns the answer.
func (h *Host) Initialize(ctx context.Context, pkg string, settings map[string]any) (*InitializeResult, error) {
	if settings == nil {
		settings = map[string]any{}
	}
	var result InitializeResult
	err := h.Conn.Call(ctx, agentenv.InitializeMethod, map[string]any{
		"host":     map[string]string{"name": "agent-env", "version": "0.1.0"},
		"protocol": agentenv.Range{Min: agentenv.ProtocolVersion, Max: agentenv.ProtocolVersion},
		"package":  pkg,
		"settings": settings,
	}, &result)
	if err != nil {
		return nil, fmt.Errorf("initialize failed: %w", err)
	}
	return &result, nil
}

// InitializeResult is the plugin's answer to initialize.
type InitializeResult struct {
	Protocol int `json:"protocol"`
	Plugin   struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"plugin"`
	Contributions []agentenv.Contribution `json:"contributions"`
	Stores        []agentenv.StoreInfo    `json:"stores"`
}

// OpenStore sends store.open and returns the store's handle.
func (h *Host) OpenStore(ctx context.Context, kind agentenv.StoreKind, class string, config map[string]any) (string, error) {
	if config == nil {
		config = map[string]any{}
	}
	var answer struct {
		Handle string `json:"handle"`
	}
	if err := h.Conn.Call(ctx, agentenv.StoreOpenMethod, map[string]any{"kind": kind, "class": class, "config": config}, &answer); err != nil {
		return "", err
	}
	if answer.Handle == "" {
		return "", errors.New("store.open answered without a handle")
	}
	return answer.Handle, nil
}

// OpenObjectStore opens one of the plugin's object store classes and returns it as an ObjectStore whose
// every call crosses the pipe (store.object.<op> with the handle), ready for CheckObjectStore.
func (h *Host) OpenObjectStore(ctx context.Context, class string, config map[string]any) (agentenv.ObjectStore, error) {
	handle, err := h.OpenStore(ctx, agentenv.ObjectKind, class, config)
	if err != nil {
		return nil, err
	}
	return agentenv.NewRemoteObjectStore(h.Conn, "store.object.", handle), nil
}

// syncBuffer is a bytes.Buffer safe to write from one goroutine while another reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
