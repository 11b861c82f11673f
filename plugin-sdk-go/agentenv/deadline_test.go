package agentenv

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestTheDeadlineIsTimeoutMsAfterTheRequestWasRead(t *testing.T) {
	received := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := uint64(5000)
	deadline, ok := stepDeadline(received, &ms)
	if !ok || !deadline.Equal(received.Add(5*time.Second)) {
		t.Fatalf("deadline %v %v", deadline, ok)
	}
	if _, ok := stepDeadline(received, nil); ok {
		t.Fatal("a deadline without timeout_ms")
	}
	// Longer than a time.Duration holds: no limit, in effect.
	huge := uint64(math.MaxUint64)
	if _, ok := stepDeadline(received, &huge); ok {
		t.Fatal("a deadline past what a Duration holds")
	}
}

// deadlinePlugin's step "deadline" answers the time its ctx has left ("remaining_ms", nil when it
// has no deadline); "runs_out" waits for its ctx to end and returns ctx.Err().
func deadlinePlugin() *Plugin {
	p := NewPlugin("agentenv-deadline", "0.0.1")
	p.AddTaskStep(TaskStep{Type: "deadline", Class: "Deadline", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		deadline, ok := ctx.Deadline()
		if !ok {
			return map[string]any{"remaining_ms": nil}, nil
		}
		return map[string]any{"remaining_ms": time.Until(deadline).Milliseconds()}, nil
	}})
	p.AddTaskStep(TaskStep{Type: "runs_out", Class: "RunsOut", Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	return p
}

func executeRequest(stepType string, timeoutMs any) map[string]any {
	params := map[string]any{"type": stepType, "step": map[string]any{"id": "d", "type": stepType}, "context": map[string]any{}}
	if timeoutMs != nil {
		params["timeout_ms"] = timeoutMs
	}
	return params
}

func TestAStepsCtxHasTheTimeTheHostGaveItAndNoDeadlineWhenItGaveNone(t *testing.T) {
	host, _ := servePlugin(t, deadlinePlugin())
	ctx := withTimeout(t)
	if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err != nil {
		t.Fatal(err)
	}
	var result struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := host.conn.Call(ctx, "execute", executeRequest("deadline", 600_000), &result); err != nil {
		t.Fatal(err)
	}
	// Ten minutes from when the plugin read the request, less the moment the step took to look.
	left, ok := result.Metadata["remaining_ms"].(float64)
	if !ok || left < 300_000 || left > 600_000 {
		t.Fatalf("remaining_ms %v", result.Metadata)
	}
	result.Metadata = nil
	if err := host.conn.Call(ctx, "execute", executeRequest("deadline", nil), &result); err != nil {
		t.Fatal(err)
	}
	if v, found := result.Metadata["remaining_ms"]; !found || v != nil {
		t.Fatalf("remaining_ms without timeout_ms: %v", result.Metadata)
	}
}

func TestAStepThatRunsOutOfItsTimeFailsAsTimeoutError(t *testing.T) {
	host, _ := servePlugin(t, deadlinePlugin())
	ctx := withTimeout(t)
	if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err != nil {
		t.Fatal(err)
	}
	// No time at all: the step's ctx has ended when it starts.
	err := host.conn.Call(ctx, "execute", executeRequest("runs_out", 0), nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindStepFailed {
		t.Fatalf("not step-failed: %v", err)
	}
	if rpcErr.DataString("error_type") != "TimeoutError" || rpcErr.DataString("message") != context.DeadlineExceeded.Error() {
		t.Fatalf("data %v", rpcErr.Data)
	}
}

func TestATimeoutMsThatIsNotWholeMillisecondsIsInvalidParams(t *testing.T) {
	host, _ := servePlugin(t, deadlinePlugin())
	ctx := withTimeout(t)
	if err := host.conn.Call(ctx, "initialize", initializeParamsFor(Range{1, 1}), nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []any{-1, 1.5, "5000", true} {
		err := host.conn.Call(ctx, "execute", executeRequest("deadline", bad), nil)
		var rpcErr *Error
		if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindInvalidParams {
			t.Fatalf("timeout_ms %v: %v", bad, err)
		}
	}
}
