package agentenv

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

// documentVector is one line of document-queries.jsonl (this module's copy of the shared vectors, which
// the Rust evaluator passes in store-api/tests/document_vectors.rs).
type documentVector struct {
	Name    string          `json:"name"`
	Op      string          `json:"op"`
	Doc     Document        `json:"doc"`
	Docs    []Document      `json:"docs"`
	Filter  json.RawMessage `json:"filter"`
	Sort    json.RawMessage `json:"sort"`
	Limit   *int            `json:"limit"`
	Offset  int             `json:"offset"`
	Update  json.RawMessage `json:"update"`
	Matches *bool           `json:"matches"`
	Expect  json.RawMessage `json:"expect"`
	Error   string          `json:"error"`
}

// decodeParam reads a filter, sort or update as the SDK reads a request's params: a wrong shape is
// invalid-params.
func decodeParam(raw json.RawMessage, into any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return NewError(KindInvalidParams, "%v", err)
	}
	return nil
}

// run is what the evaluator makes of a vector: a result, or an error.
func (v documentVector) run() (any, error) {
	var filter Filter
	var keys []SortKey
	var update Update
	for raw, into := range map[*json.RawMessage]any{&v.Filter: &filter, &v.Sort: &keys, &v.Update: &update} {
		if err := decodeParam(*raw, into); err != nil {
			return nil, err
		}
	}
	switch v.Op {
	case "match":
		if err := CheckFilter(filter); err != nil {
			return nil, err
		}
		return MatchesFilter(v.Doc, filter), nil
	case "query":
		limit := 0
		if v.Limit != nil {
			limit = *v.Limit
		}
		return QueryDocuments(v.Docs, filter, keys, limit, v.Offset)
	case "update":
		return v.Doc, ApplyUpdate(v.Doc, update)
	case "upsert":
		return UpsertedFrom(filter, update)
	}
	return nil, errors.New("no op " + v.Op)
}

// asJSON is a value as encoding/json reads it back, so results compare with what the vector says.
func asJSON(t *testing.T, value any) any {
	t.Helper()
	data, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTheDocumentVectors(t *testing.T) {
	vectors := readVectors[documentVector](t, "document-queries.jsonl")
	ops := map[string]int{}
	for _, v := range vectors {
		ops[v.Op]++
		t.Run(v.Name, func(t *testing.T) {
			got, err := v.run()
			if v.Error != "" {
				var rpcErr *Error
				if !errors.As(err, &rpcErr) || string(rpcErr.Kind()) != v.Error {
					t.Fatalf("got %v (error %v), want a %s error", got, err, v.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			want := any(v.Matches)
			if v.Op != "match" {
				want = jsonValue(t, v.Expect)
			}
			if got, want := asJSON(t, got), asJSON(t, want); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
	for _, op := range []string{"match", "query", "update", "upsert"} {
		if ops[op] == 0 {
			t.Errorf("no %s vector", op)
		}
	}
}

func eq(value any) Predicate { return Predicate{Op: "eq", Value: value} }

func TestGoValuesCountAsJSON(t *testing.T) {
	// Go's integer types and json.Number are numbers; any slice is a list for in.
	doc := Document{"n": 3, "u": uint64(math.MaxUint64), "j": json.Number("2.5"), "tags": []any{"x"}}
	for _, c := range []struct {
		path string
		p    Predicate
		want bool
	}{
		{"n", eq(3.0), true},
		{"n", Predicate{Op: "gte", Value: int64(3)}, true},
		{"n", eq(true), false},
		{"u", Predicate{Op: "gte", Value: 1e19}, true},
		{"j", eq(2.5), true},
		{"tags", Predicate{Op: "in", Value: []string{"y", "x"}}, true},
	} {
		filter := Filter{c.path: {c.p}}
		if err := CheckFilter(filter); err != nil {
			t.Fatal(err)
		}
		if got := MatchesFilter(doc, filter); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.path, c.p, got, c.want)
		}
	}
	if err := ApplyUpdate(doc, Update{Inc: map[string]any{"n": 4}}); err != nil || doc["n"] != int64(7) {
		t.Errorf("inc of ints: %v (%T), %v", doc["n"], doc["n"], err)
	}
	if err := ApplyUpdate(doc, Update{Inc: map[string]any{"n": int64(math.MaxInt64)}}); err != nil || doc["n"] != float64(math.MaxInt64)+7 {
		t.Errorf("inc past the 64-bit range: %v (%T), %v", doc["n"], doc["n"], err)
	}
}

func TestApplyUpdateCopiesWhatItWrites(t *testing.T) {
	list := []any{1.0}
	doc := Document{}
	if err := ApplyUpdate(doc, Update{Set: map[string]any{"l": list}, Push: map[string]any{"p": map[string]any{"k": 1.0}}}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyUpdate(doc, Update{Push: map[string]any{"l": 2.0}, Set: map[string]any{"p.0.k": 5.0}}); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !reflect.DeepEqual(doc, Document{"l": []any{1.0, 2.0}, "p": []any{map[string]any{"k": 5.0}}}) {
		t.Fatalf("doc %v, the update's list %v", doc, list)
	}
	if err := ApplyUpdate(nil, Update{Set: map[string]any{"a": 1}}); !IsKind(err, KindInvalidValue) {
		t.Fatalf("a nil document: %v", err)
	}
}

func TestCheckUpdateSaysWhichPaths(t *testing.T) {
	err := CheckUpdate(Update{Set: map[string]any{"b": 1, "a": 1}, Unset: []string{"b", "a"}})
	if err == nil || err.Error() != "UpdateSpec emits the same path under multiple operators: ['a', 'b']" {
		t.Fatalf("%v", err)
	}
	err = CheckUpdate(Update{Set: map[string]any{"a": 1}, Inc: map[string]any{"a.b": 1, "a.c": 1}})
	if err == nil || err.Error() != "UpdateSpec emits a path and one of its ancestors: ['a', 'a.b', 'a.c']" {
		t.Fatalf("%v", err)
	}
}

func TestSortTextIsAgentEnvs(t *testing.T) {
	for value, want := range map[any]string{
		1.0: "1", 0.0: "0", math.Copysign(0, -1): "-0.0", 0.5: "0.5", 0.00001: "0.00001", 1e-6: "1e-6",
		1.5e16: "15000000000000000", 1.5e300: "1.5e+300", 123.25: "123.25", uint64(math.MaxUint64): "18446744073709551615",
		"a\"\\\n\x01é<": `"a\"\\\n\u0001é<"`, true: "true",
	} {
		if got := jsonText(value); got != want {
			t.Errorf("%v: %s, want %s", value, got, want)
		}
	}
	object := map[string]any{"b": []any{nil, 2.5}, "a": map[string]any{}}
	if got := jsonText(object); got != `{"a":{},"b":[null,2.5]}` {
		t.Errorf("%s", got)
	}
}

func TestSortDocumentsIsStableAndLeavesNoKeysAlone(t *testing.T) {
	docs := []Document{{"i": 0.0, "r": 1.0}, {"i": 1.0}, {"i": 2.0, "r": 1.0}, {"i": 3.0, "r": nil}}
	SortDocuments(docs, nil)
	SortDocuments(docs, []SortKey{{Field: "r", Descending: true}})
	order := []any{}
	for _, d := range docs {
		order = append(order, d["i"])
	}
	if !reflect.DeepEqual(order, []any{0.0, 2.0, 1.0, 3.0}) {
		t.Fatalf("%v", order)
	}
}

func TestUniqueIndexes(t *testing.T) {
	fields := []string{"id", "v"}
	docs := []Document{{"id": "a", "v": 1.0}, {"id": "a"}, {"id": "a", "v": nil}, {"id": "b", "v": 1.0}}
	if key, ok := UniqueKey(docs[0], fields); !ok || !reflect.DeepEqual(key, []any{"a", 1.0}) {
		t.Fatalf("key %v %v", key, ok)
	}
	for _, doc := range docs[1:3] {
		if _, ok := UniqueKey(doc, fields); ok {
			t.Fatalf("%v has a key: absent and null fields are not indexed", doc)
		}
	}
	indexes := [][]string{{"x"}, fields}
	if err := CheckUnique(docs, indexes, Document{"id": "a", "v": 1}, -1); !IsKind(err, KindDuplicateKey) {
		t.Fatalf("a repeated key (1 and 1.0): %v", err)
	}
	if err := CheckUnique(docs, indexes, Document{"id": "a", "v": 1.0, "n": 2.0}, 0); err != nil {
		t.Fatalf("the document a key is taken by is left out: %v", err)
	}
	if err := CheckUnique(docs, indexes, Document{"id": "a"}, -1); err != nil {
		t.Fatalf("a document without the field: %v", err)
	}
	if err := CheckUniqueIndex(docs, fields); err != nil {
		t.Fatalf("no repeated key: %v", err)
	}
	docs = append(docs, Document{"id": "b", "v": int64(1)})
	if err := CheckUniqueIndex(docs, fields); !IsKind(err, KindDuplicateKey) {
		t.Fatalf("b, 1 twice: %v", err)
	}
	nested := []Document{{"k": map[string]any{"x": math.Copysign(0, -1)}}, {"k": map[string]any{"x": 0}}}
	if err := CheckUniqueIndex(nested, []string{"k"}); !IsKind(err, KindDuplicateKey) {
		t.Fatalf("equal objects: %v", err)
	}
}

func TestCopyDocumentSharesNothing(t *testing.T) {
	doc := Document{"a": []any{map[string]any{"b": 1.0}}, "n": nil}
	copied := CopyDocument(doc)
	copied["a"].([]any)[0].(map[string]any)["b"] = 2.0
	if !reflect.DeepEqual(doc, Document{"a": []any{map[string]any{"b": 1.0}}, "n": nil}) || CopyDocument(nil) != nil {
		t.Fatalf("%v", doc)
	}
}

func TestQueryDocumentsTreatsNegativeWindowsAsNone(t *testing.T) {
	docs := []Document{{"i": 0}, {"i": 1}, {"i": 2}, {"i": 3}}
	for _, c := range []struct{ limit, offset, from, to int }{
		{-1, 0, 0, 4}, {0, -2, 0, 4}, {-1, -2, 0, 4}, {2, -2, 0, 2}, {-3, 1, 1, 4}, {2, 1, 1, 3}, {0, 9, 4, 4},
	} {
		got, err := QueryDocuments(docs, Filter{}, nil, c.limit, c.offset)
		if err != nil {
			t.Fatal(err)
		}
		if want := docs[c.from:c.to]; !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d, offset %d: %v, want %v", c.limit, c.offset, got, want)
		}
	}
}
