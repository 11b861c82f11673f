//go:build unix

package agentenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

// recordingHost answers the plugin's host.* requests and notes each of them, and the notifications
// the plugin sends.
type recordingHost struct {
	mu            sync.Mutex
	calls         []string
	notifications []string
}

func (h *recordingHost) HandleRequest(_ context.Context, req *agentenv.Request) (any, error) {
	h.mu.Lock()
	h.calls = append(h.calls, req.Method+" "+string(req.Params))
	h.mu.Unlock()
	return map[string]any{"url": "mem://host/kept.txt"}, nil
}

func (h *recordingHost) HandleNotification(method string, params json.RawMessage) {
	h.mu.Lock()
	h.notifications = append(h.notifications, method+" "+string(params))
	h.mu.Unlock()
}

func (h *recordingHost) seen() ([]string, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...), append([]string(nil), h.notifications...)
}

// A Host kept past its call fails every host call with a clear error before anything is sent, while
// the Host of the call in flight works: in the test process, and in a plugin process of its own.
func TestAHostKeptPastItsCallFailsWithoutSendingAnything(t *testing.T) {
	t.Run("in process", func(t *testing.T) {
		recorder := &recordingHost{}
		host := agentenvtest.ServeInProcess(t, agentenv.KeptHostPlugin(), agentenvtest.HostOptions{HostHandler: recorder})
		checkKeptHost(t, host, recorder)
	})
	t.Run("child process", func(t *testing.T) {
		recorder := &recordingHost{}
		host := agentenvtest.StartPlugin(t, os.Args[0], agentenvtest.HostOptions{
			HostHandler: recorder, Env: []string{agentenv.KeptHostHelper}})
		checkKeptHost(t, host, recorder)
	})
}

func checkKeptHost(t *testing.T, host *agentenvtest.Host, recorder *recordingHost) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := host.Initialize(ctx, "agentenv-kept-host", nil); err != nil {
		t.Fatal(err)
	}
	during := call(t, host, ctx, "execute", map[string]any{"type": "keep_host", "step": map[string]any{}, "context": map[string]any{}})
	if got := asJSON(t, during); got != `{"metadata":{"ended":false,"url":"mem://host/kept.txt"}}` {
		t.Fatalf("the step that kept its Host answered %s", got)
	}
	var after struct {
		Metadata struct {
			Failed map[string]string `json:"failed"`
			Ended  bool              `json:"ended"`
		} `json:"metadata"`
	}
	raw := asJSON(t, call(t, host, ctx, "execute", map[string]any{"type": "use_kept_host", "step": map[string]any{}, "context": map[string]any{}}))
	if err := json.Unmarshal([]byte(raw), &after); err != nil {
		t.Fatal(err)
	}
	if !after.Metadata.Ended || len(after.Metadata.Failed) != 6 {
		t.Fatalf("want the 6 host methods tried through an ended Host, got %s", raw)
	}
	for method, got := range after.Metadata.Failed {
		// The keep_host execute was the request with id 2 (initialize was 1).
		want := "invalid-request: " + method + " was not sent: the call 2 this host handle was given for has ended; " +
			"a host handle is valid only while its call runs, so call the host from inside the handler, not from a " +
			"thread or value that outlives it"
		if got != want {
			t.Errorf("%s failed with\n  %s\nwant\n  %s", method, got, want)
		}
	}
	// A step that returns that error as it is fails as CallEndedError, as a Python step does.
	err := host.Call(ctx, "execute", map[string]any{"type": "return_kept_host_error", "step": map[string]any{}, "context": map[string]any{}}, nil)
	var rpcErr *agentenv.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("return_kept_host_error did not fail with an error answer: %v", err)
	}
	wantMessage := "host.store.object.put was not sent: the call 2 this host handle was given for has ended; " +
		"a host handle is valid only while its call runs, so call the host from inside the handler, not from a " +
		"thread or value that outlives it"
	if rpcErr.Kind() != agentenv.KindStepFailed || rpcErr.DataString("error_type") != "CallEndedError" ||
		rpcErr.DataString("message") != wantMessage {
		t.Errorf("return_kept_host_error failed with kind %q, data %v", rpcErr.Kind(), rpcErr.Data)
	}
	calls, notifications := recorder.seen()
	wantCalls := []string{`host.store.object.put {"allow_overwrite":false,"call_id":2,"content_type":"text/plain","data":"ZHVyaW5n","key":"kept.txt"}`}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("the host was asked\n%q\nwant only the put made during the call\n%q", calls, wantCalls)
	}
	// Progress about the ended call is dropped; the log line is sent, naming the call, as the Rust SDK does.
	wantNotifications := []string{`$/log {"call_id":2,"level":"info","message":"logged after the call"}`}
	if !reflect.DeepEqual(notifications, wantNotifications) {
		t.Errorf("the plugin sent\n%q\nwant\n%q", notifications, wantNotifications)
	}
}
