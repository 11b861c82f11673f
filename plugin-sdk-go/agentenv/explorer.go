package agentenv

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
)

// The explorer_plugins group's methods: the explorer asks for the routes once per start of the plugin
// and forwards each HTTP request that matches one.
const (
	ExplorerRouterMethod  = "explorer.router"
	ExplorerRequestMethod = "explorer.request"
)

// Explorer is an explorer plugin: HTTP routes served inside `agent-env up`, and optionally a page the
// explorer's navigation links to. Register it with Plugin.AddExplorer.
//
// The explorer matches every request against plugin routes before its own, so keep pages under a
// prefix of your own ("/ext/<name>/..."). A path segment "{name}" matches any one segment; read it with
// ExplorerRequest.Param.
type Explorer struct {
	// Name is its name under [provides.explorer_plugins].
	Name string
	// Class is the class label the manifest names; "" means Name.
	Class string
	// Page (optional) is the path the explorer's navigation links to; Title is the link's text. One of
	// the GET Routes must answer exactly that path ("/ext/words" is not answered by
	// "/ext/words/{word}"), else Check reports it: the link would be a 404.
	Page, Title string
	// Routes are the routes it serves.
	Routes []ExplorerRoute
}

// ExplorerRoute is one route: a method ("GET", "POST", ...), an absolute path, and its handler. Each
// segment of the path is a literal, which matches itself, or one whole "{name}" (letters, digits and
// "_"), which matches any one non-empty segment.
type ExplorerRoute struct {
	Method, Path string
	Handle       func(ctx context.Context, req *ExplorerRequest) (*ExplorerResponse, error)
}

// ExplorerRequest is one HTTP request the explorer forwarded.
type ExplorerRequest struct {
	// Method and Path (still percent-encoded) as sent; Route is the route that matched, as declared.
	Method, Path, Route string
	// PathParams are the route's "{name}" segments, still percent-encoded (Param decodes).
	PathParams map[string]string
	// Query is the query string after "?", as sent.
	Query string
	// Headers are the request headers, names lowercased.
	Headers map[string]string
	// Body is the request body.
	Body []byte
	// Host reaches the host (its stores) while the handler runs.
	Host *Host
	// Settings is the plugin's settings table from initialize.
	Settings map[string]any
}

// Param is the route segment "{name}", percent-decoded ("" when absent).
func (r *ExplorerRequest) Param(name string) string {
	raw := r.PathParams[name]
	if decoded, err := url.PathUnescape(raw); err == nil {
		return decoded
	}
	return raw
}

// QueryValue is the first value of name in the query string, decoded.
func (r *ExplorerRequest) QueryValue(name string) string {
	values, _ := url.ParseQuery(r.Query)
	return values.Get(name)
}

// ExplorerResponse is the HTTP answer to a forwarded request.
type ExplorerResponse struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// TextResponse is a text/plain answer.
func TextResponse(status int, body string) *ExplorerResponse {
	return &ExplorerResponse{Status: status, Headers: map[string]string{"content-type": "text/plain; charset=utf-8"}, Body: []byte(body)}
}

// HTMLResponse is a 200 HTML page.
func HTMLResponse(body string) *ExplorerResponse {
	return &ExplorerResponse{Status: 200, Headers: map[string]string{"content-type": "text/html; charset=utf-8"}, Body: []byte(body)}
}

// JSONResponse is a JSON answer of v.
func JSONResponse(status int, v any) (*ExplorerResponse, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &ExplorerResponse{Status: status, Headers: map[string]string{"content-type": "application/json"}, Body: body}, nil
}

// AddExplorer registers an explorer plugin.
func (p *Plugin) AddExplorer(e Explorer) {
	if e.Class == "" {
		e.Class = e.Name
	}
	switch {
	case e.Name == "":
		p.problem("an explorer plugin needs a Name")
		return
	case len(e.Routes) == 0:
		p.problem("explorer plugin '%s' has no Routes", e.Name)
		return
	case p.explorers[e.Name] != nil || p.generics[GroupExplorerPlugins][e.Name] != nil:
		p.problem("explorer_plugins contribution '%s' is registered twice", e.Name)
		return
	}
	seen := map[string]bool{}
	for i, r := range e.Routes {
		e.Routes[i].Method = strings.ToUpper(r.Method)
		key := e.Routes[i].Method + " " + r.Path
		switch {
		case !strings.HasPrefix(r.Path, "/"):
			p.problem("explorer plugin '%s': route '%s' must start with '/'", e.Name, key)
			return
		case r.Handle == nil:
			p.problem("explorer plugin '%s': route '%s' has no Handle", e.Name, key)
			return
		case seen[key]:
			p.problem("explorer plugin '%s': route '%s' is registered twice", e.Name, key)
			return
		}
		if segment, bad := badRouteSegment(r.Path); bad {
			p.problem("explorer plugin '%s': route '%s': segment '%s' is neither a literal nor one whole {name}, so the explorer would not serve it",
				e.Name, key, segment)
			return
		}
		seen[key] = true
	}
	if e.Page != "" && !e.answersPage() {
		// Its routes work; only the link is wrong, so it stays registered for Serve without Check.
		p.problem("explorer plugin '%s': Page '%s' is answered by none of its GET routes, so the explorer's link to it would be a 404; add a GET route with the path '%s'",
			e.Name, e.Page, e.Page)
	}
	p.explorers[e.Name] = &e
}

// answersPage reports whether one of e's GET routes answers a request for e.Page (its query dropped).
func (e *Explorer) answersPage() bool {
	page, _, _ := strings.Cut(e.Page, "?")
	for _, r := range e.Routes {
		if r.Method == "GET" && routeMatches(r.Path, page) {
			return true
		}
	}
	return false
}

// routeMatches reports whether a route's path answers a request path, as the explorer matches them
// (docs/protocol.md §4.6): the same number of segments, "{name}" matching any non-empty one, any other
// segment only itself.
func routeMatches(route, path string) bool {
	want, got := strings.Split(route, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return false
	}
	for i, segment := range want {
		if isRouteParam(segment) {
			if got[i] == "" {
				return false
			}
		} else if segment != got[i] {
			return false
		}
	}
	return true
}

// isRouteParam reports whether a route segment is one whole "{name}" (letters, digits and "_").
func isRouteParam(segment string) bool {
	name, ok := strings.CutPrefix(segment, "{")
	name, closed := strings.CutSuffix(name, "}")
	if !ok || !closed || name == "" {
		return false
	}
	for _, ch := range name {
		if !(ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			return false
		}
	}
	return true
}

// badRouteSegment finds a segment of a route's path with a brace that is not one whole "{name}".
func badRouteSegment(path string) (string, bool) {
	for _, segment := range strings.Split(path, "/") {
		if strings.ContainsAny(segment, "{}") && !isRouteParam(segment) {
			return segment, true
		}
	}
	return "", false
}

type explorerRouterParams struct {
	Name string `json:"name"`
}

type explorerRequestParams struct {
	Name       string            `json:"name"`
	Route      string            `json:"route"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	PathParams map[string]string `json:"path_params"`
	Query      string            `json:"query"`
	Headers    map[string]string `json:"headers"`
	Body       *string           `json:"body"`
	BodyBase64 *string           `json:"body_base64"`
}

func (s *session) explorer(method, name string) (*Explorer, error) {
	e, ok := s.plugin.explorers[name]
	if !ok {
		return nil, NewError(KindMethodNotFound, "no method '%s' in %s (no explorer plugin '%s')", method, s.plugin.Name, name)
	}
	return e, nil
}

func (s *session) explorerRouter(req *Request) (any, error) {
	var params explorerRouterParams
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	e, err := s.explorer(req.Method, params.Name)
	if err != nil {
		return nil, err
	}
	routes := make([]map[string]string, 0, len(e.Routes))
	for _, r := range e.Routes {
		routes = append(routes, map[string]string{"method": r.Method, "path": r.Path})
	}
	out := map[string]any{"routes": routes}
	if e.Page != "" {
		out["page"] = e.Page
	}
	if e.Title != "" {
		out["title"] = e.Title
	}
	return out, nil
}

func (s *session) explorerRequest(ctx context.Context, req *Request, host *Host, settings map[string]any) (any, error) {
	var params explorerRequestParams
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	e, err := s.explorer(req.Method, params.Name)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(params.Method)
	var route *ExplorerRoute
	for i := range e.Routes {
		r := &e.Routes[i]
		if r.Path == params.Route && (r.Method == method || (method == "HEAD" && r.Method == "GET")) {
			route = r
			break
		}
	}
	if route == nil {
		return nil, NewError(KindMethodNotFound, "the explorer plugin '%s' has no route '%s %s'", e.Name, method, params.Route)
	}
	body := []byte(nil)
	switch {
	case params.Body != nil:
		body = []byte(*params.Body)
	case params.BodyBase64 != nil:
		decoded, err := base64.StdEncoding.DecodeString(*params.BodyBase64)
		if err != nil {
			return nil, NewError(KindInvalidParams, "explorer.request: 'body_base64' is not base64: %v", err)
		}
		body = decoded
	}
	request := &ExplorerRequest{
		Method: method, Path: params.Path, Route: params.Route, PathParams: params.PathParams,
		Query: params.Query, Headers: params.Headers, Body: body, Host: host, Settings: settings,
	}
	answer, err := route.Handle(ctx, request)
	if err != nil {
		return nil, err
	}
	if answer == nil {
		answer = &ExplorerResponse{Status: 204}
	}
	headers := map[string]string{}
	for k, v := range answer.Headers {
		headers[strings.ToLower(k)] = v
	}
	out := map[string]any{"status": answer.Status, "headers": headers}
	if len(answer.Body) > 0 {
		out["body_base64"] = base64.StdEncoding.EncodeToString(answer.Body)
	}
	return out, nil
}
