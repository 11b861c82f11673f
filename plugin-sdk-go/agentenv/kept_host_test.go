//go:build unix

package agentenv

import (
	"context"
	"errors"
)

// KeptHostHelper, added to the test binary's environment, makes it serve KeptHostPlugin (see TestMain).
const KeptHostHelper = helperVar + "=kept-host"

// KeptHostPlugin makes a mistake a plugin can make: its step keep_host keeps its call's StepCall (and
// so its Host) in a variable, and use_kept_host, a later call, reports progress, logs and calls the
// host through it. use_kept_host answers, for each host method it tried, "<kind>: <message>" of the
// error it got (with " (not ErrCallEnded)" after it when errors.Is does not match ErrCallEnded).
// return_kept_host_error, a later call still, returns the error of a put through the kept Host as it
// is, as a step that does not look at the error would. The tests in host_test.go serve it in the test process and as a child process.
func KeptHostPlugin() *Plugin {
	var kept *StepCall
	p := NewPlugin("agentenv-kept-host", "0.0.1")
	p.AddTaskStep(TaskStep{Type: "keep_host", Class: "KeepHost",
		Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
			kept = call
			url, err := call.Host.ObjectStore().Put(ctx, "kept.txt", []byte("during"), "text/plain", false)
			return map[string]any{"url": url, "ended": call.Host.Ended()}, err
		}})
	p.AddTaskStep(TaskStep{Type: "use_kept_host", Class: "UseKeptHost",
		Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
			if kept == nil {
				return nil, StepFailed("LookupError", "keep_host has not run")
			}
			host := kept.Host
			if err := kept.Progress(1, 2, "after the call"); err != nil {
				return nil, err
			}
			if err := host.Log("info", "logged after the call"); err != nil {
				return nil, err
			}
			attempts := map[string]func() error{
				"host.store.object.put": func() error {
					_, err := host.ObjectStore().Put(ctx, "late.txt", []byte("late"), "text/plain", false)
					return err
				},
				"host.store.document.count": func() error {
					_, err := host.DocumentStore().Count(ctx, "runs", nil)
					return err
				},
				"host.store.image.image_ref": func() error {
					_, err := host.ImageStore().ImageRef(ctx, "civ", "v1")
					return err
				},
				"host.store.secret.get": func() error {
					_, _, err := host.SecretStore().Get(ctx, "token")
					return err
				},
				"host.settings": func() error {
					_, err := host.Settings(ctx)
					return err
				},
				"host.anything": func() error { return host.Call(ctx, "host.anything", nil, nil) },
			}
			failed := map[string]any{}
			for method, attempt := range attempts {
				var rpcErr *Error
				switch err := attempt(); {
				case err == nil:
					failed[method] = "no error"
				case errors.As(err, &rpcErr):
					said := string(rpcErr.Kind()) + ": " + rpcErr.Message
					if !errors.Is(err, ErrCallEnded) {
						said += " (not ErrCallEnded)"
					}
					failed[method] = said
				default:
					failed[method] = "not an *Error: " + err.Error()
				}
			}
			return map[string]any{"failed": failed, "ended": host.Ended()}, nil
		}})
	p.AddTaskStep(TaskStep{Type: "return_kept_host_error", Class: "ReturnKeptHostError",
		Execute: func(ctx context.Context, call *StepCall) (map[string]any, error) {
			if kept == nil {
				return nil, StepFailed("LookupError", "keep_host has not run")
			}
			_, err := kept.Host.ObjectStore().Put(ctx, "late.txt", []byte("late"), "text/plain", false)
			return nil, err
		}})
	return p
}
