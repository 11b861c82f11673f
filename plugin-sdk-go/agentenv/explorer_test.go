package agentenv_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

func wordsPlugin() *agentenv.Plugin {
	p := agentenv.NewPlugin("agentenv-words", "0.1.0")
	p.AddExplorer(agentenv.Explorer{Name: "words", Class: "WordsPage", Page: "/ext/words", Title: "Words",
		Routes: []agentenv.ExplorerRoute{
			{Method: "get", Path: "/ext/words", Handle: func(context.Context, *agentenv.ExplorerRequest) (*agentenv.ExplorerResponse, error) {
				return agentenv.HTMLResponse("<h1>Words</h1>"), nil
			}},
			{Method: "GET", Path: "/ext/words/{word}", Handle: func(_ context.Context, r *agentenv.ExplorerRequest) (*agentenv.ExplorerResponse, error) {
				return agentenv.JSONResponse(200, map[string]string{"word": r.Param("word"), "upper": r.QueryValue("upper")})
			}},
			{Method: "POST", Path: "/ext/words/echo", Handle: func(_ context.Context, r *agentenv.ExplorerRequest) (*agentenv.ExplorerResponse, error) {
				return &agentenv.ExplorerResponse{Status: 202, Headers: map[string]string{"X-Length": "3"}, Body: r.Body}, nil
			}},
		}})
	return p
}

func TestAnExplorerDeclaresItsRoutesAndAnswersRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := wordsPlugin()
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Manifest(), "[provides.explorer_plugins]\nwords = \"WordsPage\"") {
		t.Fatalf("manifest:\n%s", p.Manifest())
	}
	host := agentenvtest.ServeInProcess(t, p, agentenvtest.HostOptions{})
	if _, err := host.Initialize(ctx, "agentenv-words", nil); err != nil {
		t.Fatal(err)
	}
	routes := asJSON(t, call(t, host, ctx, "explorer.router", map[string]string{"name": "words", "class": "WordsPage"}))
	want := `{"page":"/ext/words","routes":[{"method":"GET","path":"/ext/words"},{"method":"GET","path":"/ext/words/{word}"},{"method":"POST","path":"/ext/words/echo"}],"title":"Words"}`
	if routes != want {
		t.Fatalf("router answered %s, want %s", routes, want)
	}
	request := func(method, route string, extra map[string]any) map[string]any {
		params := map[string]any{"name": "words", "class": "WordsPage", "route": route, "method": method, "path": route}
		for k, v := range extra {
			params[k] = v
		}
		return call(t, host, ctx, "explorer.request", params).(map[string]any)
	}
	page := request("HEAD", "/ext/words", nil)
	body, _ := base64.StdEncoding.DecodeString(page["body_base64"].(string))
	if page["status"].(float64) != 200 || string(body) != "<h1>Words</h1>" {
		t.Fatalf("page: %v", page)
	}
	word := request("GET", "/ext/words/{word}", map[string]any{"path_params": map[string]string{"word": "caf%C3%A9%2Fx"}, "query": "upper=yes+please"})
	body, _ = base64.StdEncoding.DecodeString(word["body_base64"].(string))
	if string(body) != `{"upper":"yes please","word":"café/x"}` {
		t.Fatalf("word: %s", body)
	}
	raw := []byte{0, 255, 10}
	echo := request("POST", "/ext/words/echo", map[string]any{"body_base64": base64.StdEncoding.EncodeToString(raw)})
	body, _ = base64.StdEncoding.DecodeString(echo["body_base64"].(string))
	if echo["status"].(float64) != 202 || string(body) != string(raw) || echo["headers"].(map[string]any)["x-length"] != "3" {
		t.Fatalf("echo: %v", echo)
	}
	e := callErr(t, host, ctx, "explorer.request", map[string]any{"name": "words", "route": "/ext/words", "method": "DELETE"})
	if e.Kind() != agentenv.KindMethodNotFound || !strings.Contains(e.Message, "no route 'DELETE /ext/words'") {
		t.Fatalf("unknown route: %v", e)
	}
}

func TestExplorerRegistrationMistakesAreReported(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-words", "0.1.0")
	ok := func(context.Context, *agentenv.ExplorerRequest) (*agentenv.ExplorerResponse, error) { return nil, nil }
	p.AddExplorer(agentenv.Explorer{Name: "a", Routes: []agentenv.ExplorerRoute{{Method: "GET", Path: "ext", Handle: ok}}})
	p.AddExplorer(agentenv.Explorer{Name: "b"})
	p.AddExplorer(agentenv.Explorer{Name: "c", Routes: []agentenv.ExplorerRoute{{Method: "GET", Path: "/x", Handle: ok}, {Method: "get", Path: "/x", Handle: ok}}})
	err := p.Check()
	if err == nil {
		t.Fatal("no problems reported")
	}
	for _, want := range []string{"route 'GET ext' must start with '/'", "'b' has no Routes", "route 'GET /x' is registered twice"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// A Page no GET route answers exactly would be a navigation link to a 404: Check says so.
func TestAPageWithoutItsOwnRouteIsReported(t *testing.T) {
	ok := func(context.Context, *agentenv.ExplorerRequest) (*agentenv.ExplorerResponse, error) { return nil, nil }
	register := func(page string, routes ...agentenv.ExplorerRoute) error {
		p := agentenv.NewPlugin("agentenv-words", "0.1.0")
		p.AddExplorer(agentenv.Explorer{Name: "words", Page: page, Routes: routes})
		return p.Check()
	}
	word := agentenv.ExplorerRoute{Method: "GET", Path: "/ext/words/{word}", Handle: ok}
	err := register("/ext/words", word)
	if err == nil || !strings.Contains(err.Error(), "Page '/ext/words' is answered by none of its GET routes") {
		t.Fatalf("a page only a longer route matches: %v", err)
	}
	err = register("/ext/words", agentenv.ExplorerRoute{Method: "POST", Path: "/ext/words", Handle: ok})
	if err == nil || !strings.Contains(err.Error(), "Page '/ext/words'") {
		t.Fatalf("a page only a POST route has: %v", err)
	}
	if err := register("/ext/words/", word); err == nil {
		t.Fatal("a page whose last segment is empty matched a {word} route")
	}
	for _, page := range []string{"/ext/words/index", "/ext/words/all?sort=1"} {
		if err := register(page, word); err != nil {
			t.Errorf("page %s is answered by %s: %v", page, word.Path, err)
		}
	}
	if err := register("/ext/words", agentenv.ExplorerRoute{Method: "get", Path: "/ext/words", Handle: ok}); err != nil {
		t.Errorf("a page with its own route: %v", err)
	}
	err = register("", agentenv.ExplorerRoute{Method: "GET", Path: "/ext/a{id}", Handle: ok})
	if err == nil || !strings.Contains(err.Error(), "segment 'a{id}' is neither a literal nor one whole {name}") {
		t.Fatalf("a route the explorer cannot read: %v", err)
	}
}
