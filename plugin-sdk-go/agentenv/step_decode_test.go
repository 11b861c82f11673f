package agentenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

// A step's document arrives as map[string]any (numbers float64); DecodeStep reads it typed, numbers
// exact as the wire gave them, and a field of the wrong type fails the step naming the field.
func TestDecodeStepReadsTheStepIntoAStruct(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-typed", "0.0.1")
	p.AddTaskStep(agentenv.TaskStep{Type: "typed", Class: "Typed",
		Execute: func(_ context.Context, call *agentenv.StepCall) (map[string]any, error) {
			var step struct {
				Word  string `json:"word"`
				Times int    `json:"times"`
				Big   int64  `json:"big"`
			}
			if err := call.DecodeStep(&step); err != nil {
				return nil, err
			}
			_, isFloat := call.Step["times"].(float64)
			return map[string]any{"word": step.Word, "times": step.Times, "big_exact": step.Big == 9007199254740993, "map_float": isFloat}, nil
		}})
	host := agentenvtest.ServeInProcess(t, p, agentenvtest.HostOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := host.Initialize(ctx, "agentenv-typed", nil); err != nil {
		t.Fatal(err)
	}
	execute := func(step string) (string, error) {
		var result any
		err := host.Call(ctx, "execute", map[string]any{"type": "typed", "step": json.RawMessage(step), "context": map[string]any{}}, &result)
		return asJSON(t, result), err
	}
	got, err := execute(`{"id":"t","type":"typed","word":"café","times":3,"big":9007199254740993}`)
	want := `{"metadata":{"big_exact":true,"map_float":true,"times":3,"word":"café"}}`
	if err != nil || got != want {
		t.Fatalf("execute answered %s (%v), want %s", got, err, want)
	}
	_, err = execute(`{"id":"t","type":"typed","times":"three"}`)
	var rpcErr *agentenv.Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != agentenv.KindStepFailed || rpcErr.Data["error_type"] != "ValueError" ||
		rpcErr.Message != "ValueError: the step 't' does not fit: 'times' must be an integer, not string" {
		t.Fatalf("a field of the wrong type: %v", err)
	}
}

// A DecodeStep on a StepCall built by hand (a unit test of Execute) reads its Step map.
func TestDecodeStepOnAStepCallBuiltByHand(t *testing.T) {
	call := &agentenv.StepCall{Type: "typed", Step: map[string]any{"times": 2.0}}
	var step struct {
		Times int `json:"times"`
	}
	if err := call.DecodeStep(&step); err != nil || step.Times != 2 {
		t.Fatalf("DecodeStep: %+v %v", step, err)
	}
	err := call.DecodeStep(&struct {
		Times string `json:"times"`
	}{})
	if err == nil || !strings.Contains(err.Error(), "the step of type 'typed' does not fit") {
		t.Fatalf("want a ValueError naming the step type, got %v", err)
	}
}

// A one-letter root option is a short flag whatever the letter's size in bytes, as the host counts it.
func TestAOneLetterRootOptionIsAShortFlag(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-short", "0.0.1")
	p.AddRootOption(agentenv.RootOption{Name: "é", Class: "E", Value: "V",
		Apply: func(_ context.Context, call *agentenv.RootOptionCall) (string, error) { return "/" + *call.Value, nil }})
	host := agentenvtest.ServeInProcess(t, p, agentenvtest.HostOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := host.Initialize(ctx, "agentenv-short", nil); err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, call(t, host, ctx, "cli.root_option", map[string]any{"flag": "-é", "value": "x"})); got != `{"config_path":"/x"}` {
		t.Fatalf("-é answered %s", got)
	}
}
