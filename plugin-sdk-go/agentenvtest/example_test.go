package agentenvtest_test

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

// A task step tested end to end: the plugin is served in the process, the test host sends initialize
// and execute as agent-env does, and an in-memory object store plays the host's, so the test reads
// back what the step wrote. In a test function, ServeInProcess(t, ...) does the same and closes the
// host when the test ends; StartPlugin drives the built binary instead.
func Example() {
	p := agentenv.NewPlugin("agentenv-letters", "0.1.0")
	p.AddTaskStep(agentenv.TaskStep{Type: "count_letters", Class: "CountLetters",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			var step struct {
				Word string `json:"word"`
			}
			if err := call.DecodeStep(&step); err != nil {
				return nil, err
			}
			letters := utf8.RuneCountInString(step.Word) // not len(step.Word), which counts bytes
			text := fmt.Sprintf("%s has %d letters", step.Word, letters)
			url, err := call.Host.ObjectStore().Put(ctx, "letters.txt", []byte(text), "text/plain", false)
			return map[string]any{"letters": letters, "url": url}, err
		}})

	store := agentenvtest.NewMemoryObjectStore("host")
	host, err := agentenvtest.NewInProcessHost(p, agentenvtest.HostOptions{ObjectStore: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer host.Close()
	ctx := context.Background()
	if _, err := host.Initialize(ctx, "agentenv-letters", nil); err != nil {
		fmt.Println(err)
		return
	}
	var result struct {
		Metadata struct {
			Letters int    `json:"letters"`
			URL     string `json:"url"`
		} `json:"metadata"`
	}
	err = host.Call(ctx, agentenv.ExecuteMethod, map[string]any{
		"type":    "count_letters",
		"step":    map[string]any{"id": "count", "type": "count_letters", "word": "café"},
		"context": map[string]any{"instance_id": "@local/~/demo/letters-1"},
	}, &result)
	if err != nil {
		fmt.Println(err)
		return
	}
	written, _ := store.Get(ctx, result.Metadata.URL)
	fmt.Println(result.Metadata.Letters, result.Metadata.URL)
	fmt.Println(string(written))
	// Output:
	// 4 mem://host/letters.txt
	// café has 4 letters
}
