package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shared protocol test vectors (protocol/vectors), through the built plugin rather than the SDK alone.

const vectorsDir = "../../../../protocol/vectors"

type protocolRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

type handshakeVector struct {
	Name   string        `json:"name"`
	Host   protocolRange `json:"host"`
	Plugin protocolRange `json:"plugin"`
	Expect struct {
		Chosen    *int   `json:"chosen"`
		ErrorCode *int64 `json:"error_code"`
	} `json:"expect"`
}

type messageVector struct {
	Name   string `json:"name"`
	Line   string `json:"line"`
	Expect struct {
		Kind string `json:"kind"`
	} `json:"expect"`
}

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

// The plugin speaks protocol 1 only, so the vectors of a plugin with that range apply to it.
func TestHandshakeVectorsAgainstThePlugin(t *testing.T) {
	ran := 0
	for _, v := range readVectors[handshakeVector](t, "handshake.jsonl") {
		if v.Plugin != (protocolRange{Min: 1, Max: 1}) {
			continue
		}
		ran++
		t.Run(v.Name, func(t *testing.T) {
			h := startPlugin(t)
			params := initializeParams(v.Host.Min, v.Host.Max)
			switch {
			case v.Expect.Chosen != nil:
				var result initResult
				h.call("initialize", params, &result)
				if result.Protocol != *v.Expect.Chosen {
					t.Fatalf("chose protocol %d, want %d", result.Protocol, *v.Expect.Chosen)
				}
			case v.Expect.ErrorCode != nil:
				if e := h.callError("initialize", params); e.Code != *v.Expect.ErrorCode {
					t.Fatalf("error %d %s, want code %d", e.Code, e.Message, *v.Expect.ErrorCode)
				}
			default:
				t.Fatalf("the vector expects neither a version nor an error")
			}
		})
	}
	if ran < 2 {
		t.Fatalf("only %d handshake vectors are for a protocol-1 plugin", ran)
	}
}

func TestEveryNoiseVectorLeavesThePluginAnswering(t *testing.T) {
	h := startPlugin(t)
	noise := 0
	for _, v := range readVectors[messageVector](t, "messages.jsonl") {
		if v.Expect.Kind == "noise" {
			h.sendLine([]byte(v.Line))
			noise++
		}
	}
	if noise == 0 {
		t.Fatal("messages.jsonl holds no noise vectors")
	}
	if got := h.initialize(); got.Protocol != 1 {
		t.Fatalf("protocol %d after the noise", got.Protocol)
	}
	const ignored = "ignored a line that is not a JSON-RPC message"
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(h.stderr.String(), ignored) < noise && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := strings.Count(h.stderr.String(), ignored); got != noise {
		t.Fatalf("stderr reports %d ignored lines, want %d:\n%s", got, noise, h.stderr)
	}
}
