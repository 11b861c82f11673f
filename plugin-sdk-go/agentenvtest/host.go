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
	"sync"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// Host plays agent-env's side of one plugin connection in a test: it sends requests with Call (or the
// helpers) and answers the plugin's host.* calls with HostHandler.
type Host struct {
	// Conn is the host's end of the protocol.
	Conn   *agentenv.Conn
	stderr *syncBuffer
	close  func()
}

// HostOptions tune StartPlugin and ServeInProcess.
type HostOptions struct {
	// HostHandler answers the plugin's host.* requests; nil answers each with method-not-found.
	HostHandler agentenv.Handler
	// Env is added to the child's environment (StartPlugin only).
	Env []string
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
	h.Conn = agentenv.NewConn(out, in, opts.HostHandler, agentenv.Options{Log: h.stderr})
	h.Conn.Start()
	h.close = func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = h.Conn.Call(ctx, agentenv.ShutdownMethod, nil, nil)
		_ = in.Close()
		select {
		case <-exited:
		case <-time.After(waitLimit):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(h.close)
	return h
}

// ServeInProcess serves p on a pair of pipes inside the test process, with no binary to build: what
// StartPlugin gives, minus the process-level duties (the cookie, fd 1 moved aside).
func ServeInProcess(t *testing.T, p *agentenv.Plugin, opts HostOptions) *Host {
	t.Helper()
	if err := p.Check(); err != nil {
		t.Fatal(err)
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
	h.Conn = agentenv.NewConn(fromPluginR, toPluginW, opts.HostHandler, agentenv.Options{Log: h.stderr})
	h.Conn.Start()
	h.close = func() {
		_ = toPluginW.Close()
		select {
		case <-finished:
		case <-time.After(waitLimit):
			t.Errorf("the plugin did not return from Serve within %s of its input ending", waitLimit)
		}
	}
	t.Cleanup(h.close)
	return h
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
