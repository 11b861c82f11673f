// Command agentenv-go-kept-host is a Go plugin that makes a mistake on purpose: its step keep_host
// keeps the Host of its call in a package variable, and use_kept_host, a later step, puts an object
// through it and returns the error that gives as it is. The cross-language suite runs the two in a
// bundle and expects the second to fail without writing anything.
package main

import (
	"context"
	"sync"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// kept is the Host keep_host kept past its call.
var (
	keptMu sync.Mutex
	kept   *agentenv.Host
)

func main() {
	p := agentenv.NewPlugin("agentenv-go-kept-host", "0.1.0")
	p.Description = "Keeps a host handle past its call"
	p.AddTaskStep(agentenv.TaskStep{Type: "keep_host", Class: "KeepHost",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			keptMu.Lock()
			kept = call.Host
			keptMu.Unlock()
			url, err := call.Host.ObjectStore().Put(ctx, "kept/go-during.txt", []byte("during its call"), "text/plain", true)
			if err != nil {
				return nil, err
			}
			return map[string]any{"during": url}, nil
		}})
	p.AddTaskStep(agentenv.TaskStep{Type: "use_kept_host", Class: "UseKeptHost",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			keptMu.Lock()
			host := kept
			keptMu.Unlock()
			if host == nil {
				return nil, agentenv.StepFailed("LookupError", "keep_host has not run in this process")
			}
			_, err := host.ObjectStore().Put(ctx, "kept/go-after.txt", []byte("after its call"), "text/plain", true)
			if err != nil {
				return nil, err
			}
			return map[string]any{}, nil
		}})
	p.Main()
}
