package agentenv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// vectorsDir holds this module's copy of the shared vectors (protocol/vectors in the agent-env repository;
// scripts/test-go.sh fails when the two differ).
const vectorsDir = "../testdata/vectors"

func readVectors[T any](t *testing.T, name string) []T {
	t.Helper()
	file, err := os.Open(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("cannot open the shared test vectors: %v", err)
	}
	defer file.Close()
	var out []T
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(scanner.Bytes(), &v); err != nil {
			t.Fatalf("%s: a vector does not parse: %v", name, err)
		}
		out = append(out, v)
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no vectors", name)
	}
	return out
}

func jsonValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s: %v", raw, err)
	}
	return v
}

func idValue(id ID) any {
	if id.IsString() {
		return id.Str()
	}
	return float64(id.Int())
}

type messageVector struct {
	Name   string         `json:"name"`
	Line   string         `json:"line"`
	Expect map[string]any `json:"expect"`
}

func TestMessageVectors(t *testing.T) {
	for _, v := range readVectors[messageVector](t, "messages.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			msg, err := Decode([]byte(v.Line))
			kind := v.Expect["kind"]
			if kind == "noise" {
				var noise *NoiseError
				if !errors.As(err, &noise) {
					t.Fatalf("want noise, got %+v (err %v)", msg, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want a %v, got noise: %v", kind, err)
			}
			checkDecoded(t, msg, v.Expect)
			// What we encode decodes to the same thing.
			line, err := msg.Encode()
			if err != nil {
				t.Fatal(err)
			}
			again, err := Decode(line[:len(line)-1])
			if err != nil {
				t.Fatalf("our own encoding %s is noise: %v", line, err)
			}
			checkDecoded(t, again, v.Expect)
		})
	}
}

func checkDecoded(t *testing.T, msg *Message, expect map[string]any) {
	t.Helper()
	switch expect["kind"] {
	case "request", "notification":
		wantKind := KindRequest
		if expect["kind"] == "notification" {
			wantKind = KindNotification
		}
		if msg.Kind != wantKind {
			t.Fatalf("kind %v, want %v", msg.Kind, wantKind)
		}
		if wantKind == KindRequest && !reflect.DeepEqual(idValue(msg.ID), expect["id"]) {
			t.Errorf("id %v, want %v", msg.ID, expect["id"])
		}
		if msg.Method != expect["method"] {
			t.Errorf("method %q, want %v", msg.Method, expect["method"])
		}
		if got := jsonValue(t, msg.Params); !reflect.DeepEqual(got, expect["params"]) {
			t.Errorf("params %v, want %v", got, expect["params"])
		}
	case "response":
		if msg.Kind != KindResponse || msg.Error != nil {
			t.Fatalf("want a success response, got %+v", msg)
		}
		if !reflect.DeepEqual(idValue(msg.ID), expect["id"]) {
			t.Errorf("id %v, want %v", msg.ID, expect["id"])
		}
		if got := jsonValue(t, msg.Result); !reflect.DeepEqual(got, expect["result"]) {
			t.Errorf("result %v, want %v", got, expect["result"])
		}
	case "error":
		if msg.Kind != KindResponse || msg.Error == nil {
			t.Fatalf("want an error response, got %+v", msg)
		}
		if !reflect.DeepEqual(idValue(msg.ID), expect["id"]) {
			t.Errorf("id %v, want %v", msg.ID, expect["id"])
		}
		if float64(msg.Error.Code) != expect["code"] {
			t.Errorf("code %d, want %v", msg.Error.Code, expect["code"])
		}
		if string(msg.Error.Kind()) != expect["error_kind"] {
			t.Errorf("kind %q, want %v", msg.Error.Kind(), expect["error_kind"])
		}
		if msg.Error.Message != expect["message"] {
			t.Errorf("message %q, want %v", msg.Error.Message, expect["message"])
		}
	default:
		t.Fatalf("unknown expect.kind %v", expect["kind"])
	}
}

type handshakeVector struct {
	Name   string `json:"name"`
	Host   Range  `json:"host"`
	Plugin Range  `json:"plugin"`
	Expect struct {
		Chosen    *int   `json:"chosen"`
		ErrorCode *int64 `json:"error_code"`
	} `json:"expect"`
}

// Each handshake vector goes through the real initialize handler of a Plugin speaking the vector's range.
func TestHandshakeVectors(t *testing.T) {
	for _, v := range readVectors[handshakeVector](t, "handshake.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			plugin := NewPlugin("agentenv-vector-test", "0.0.1")
			plugin.Protocol = v.Plugin
			host, finished := servePlugin(t, plugin)
			var result struct {
				Protocol int `json:"protocol"`
				Plugin   struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"plugin"`
			}
			err := host.conn.Call(context.Background(), "initialize", initializeParamsFor(v.Host), &result)
			switch {
			case v.Expect.Chosen != nil:
				if err != nil {
					t.Fatalf("initialize failed: %v", err)
				}
				if result.Protocol != *v.Expect.Chosen {
					t.Errorf("chose %d, want %d", result.Protocol, *v.Expect.Chosen)
				}
				if result.Plugin.Name != "agentenv-vector-test" || result.Plugin.Version != "0.0.1" {
					t.Errorf("plugin %+v", result.Plugin)
				}
			case v.Expect.ErrorCode != nil:
				var rpcErr *Error
				if !errors.As(err, &rpcErr) {
					t.Fatalf("want error %d, got %v (result %+v)", *v.Expect.ErrorCode, err, result)
				}
				if rpcErr.Code != *v.Expect.ErrorCode || rpcErr.Kind() != KindProtocolMismatch {
					t.Errorf("error %d %q, want %d", rpcErr.Code, rpcErr.Kind(), *v.Expect.ErrorCode)
				}
				wantSupported := map[string]any{"min": float64(v.Plugin.Min), "max": float64(v.Plugin.Max)}
				wantRequested := map[string]any{"min": float64(v.Host.Min), "max": float64(v.Host.Max)}
				if !reflect.DeepEqual(rpcErr.Data["supported"], wantSupported) ||
					!reflect.DeepEqual(rpcErr.Data["requested"], wantRequested) {
					t.Errorf("data %v, want supported %v requested %v", rpcErr.Data, wantSupported, wantRequested)
				}
			default:
				t.Fatal("the vector expects neither chosen nor error_code")
			}
			host.close()
			waitFinished(t, finished)
		})
	}
}

func initializeParamsFor(r Range) map[string]any {
	return map[string]any{
		"host":     map[string]string{"name": "agent-env", "version": "0.1.0"},
		"protocol": r,
		"package":  "agentenv-vector-test",
		"settings": map[string]any{},
	}
}

// testHost is the host's end of an in-process connection to a Plugin.
type testHost struct {
	conn *Conn
	out  *io.PipeWriter
}

func (h *testHost) close() { _ = h.out.Close() }

// servePlugin runs plugin.Serve over pipes; finished closes when Serve returns.
func servePlugin(t *testing.T, plugin *Plugin) (*testHost, <-chan struct{}) {
	t.Helper()
	return servePluginWith(t, plugin, nil)
}

func servePluginWith(t *testing.T, plugin *Plugin, hostHandler Handler) (*testHost, <-chan struct{}) {
	t.Helper()
	toPlugin, hostOut := io.Pipe()
	hostIn, fromPlugin := io.Pipe()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer fromPlugin.Close()
		plugin.Serve(toPlugin, fromPlugin, false)
	}()
	conn := NewConn(hostIn, hostOut, hostHandler, Options{Log: io.Discard})
	conn.Start()
	t.Cleanup(func() { _ = hostOut.Close() })
	return &testHost{conn: conn, out: hostOut}, finished
}

func waitFinished(t *testing.T, finished <-chan struct{}) {
	t.Helper()
	select {
	case <-finished:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after its input ended")
	}
}
