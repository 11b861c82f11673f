package agentenv

import "context"

// documentArgs are the params of any store.document.<op>, read as each operation needs them.
type documentArgs struct {
	collection  string
	filter      Filter
	sort        []SortKey
	update      Update
	doc         Document
	upsert      bool
	returnAfter bool
	limit       int
	offset      int
	fields      []string
	unique      bool
}

// documentOpParams lists, per operation, the params it requires beside collection; the others it takes
// are optional. A param an operation does not know is ignored (a newer host may send more).
var documentOpParams = map[string][]string{
	"find_one":           {"filter"},
	"query":              {"filter"},
	"count":              {"filter"},
	"insert":             {"doc"},
	"update":             {"filter", "update"},
	"update_one_and_get": {"filter", "update"},
	"replace":            {"filter", "doc"},
	"delete":             {"filter"},
	"ensure_index":       {"fields"},
	"drop_collection":    {},
}

func readDocumentArgs(op string, p storeParams) (*documentArgs, error) {
	a := &documentArgs{returnAfter: true, filter: Filter{}}
	var err error
	if a.collection, err = p.str("collection"); err != nil {
		return nil, err
	}
	for _, name := range documentOpParams[op] {
		if !p.has(name) {
			return nil, NewError(KindInvalidParams, "%s needs '%s'", p.method, name)
		}
	}
	for name, target := range map[string]any{
		"filter": &a.filter, "sort": &a.sort, "update": &a.update, "doc": &a.doc, "upsert": &a.upsert,
		"return_after": &a.returnAfter, "limit": &a.limit, "offset": &a.offset, "fields": &a.fields,
		"unique": &a.unique,
	} {
		if err := p.decode(name, target); err != nil {
			return nil, err
		}
	}
	if a.limit < 0 || a.offset < 0 {
		return nil, NewError(KindInvalidParams, "%s: 'limit' and 'offset' must be 0 or more", p.method)
	}
	return a, nil
}

// serveDocument answers store.document.<op>.
func serveDocument(ctx context.Context, s DocumentStore, op string, p storeParams) (any, error) {
	if _, known := documentOpParams[op]; !known {
		return nil, unknownStoreOp(p.method, DocumentKind, op)
	}
	dropper, drops := s.(CollectionDropper)
	if op == "drop_collection" && !drops {
		return nil, NewError(KindMethodNotFound, "no method '%s': %T does not implement drop_collection", p.method, s)
	}
	a, err := readDocumentArgs(op, p)
	if err != nil {
		return nil, err
	}
	switch op {
	case "find_one":
		doc, err := s.FindOne(ctx, a.collection, a.filter, a.sort)
		return keyed("doc", doc, err)
	case "query":
		docs, err := s.Query(ctx, a.collection, a.filter, a.sort, a.limit, a.offset)
		return keyed("docs", orEmpty(docs), err)
	case "count":
		n, err := s.Count(ctx, a.collection, a.filter)
		return keyed("count", n, err)
	case "insert":
		return nil, s.Insert(ctx, a.collection, a.doc)
	case "update":
		n, err := s.Update(ctx, a.collection, a.filter, a.update, a.upsert)
		return keyed("matched", n, err)
	case "update_one_and_get":
		doc, err := s.UpdateOneAndGet(ctx, a.collection, a.filter, a.update, a.returnAfter, a.upsert)
		return keyed("doc", doc, err)
	case "replace":
		n, err := s.Replace(ctx, a.collection, a.filter, a.doc, a.upsert)
		return keyed("matched", n, err)
	case "delete":
		n, err := s.Delete(ctx, a.collection, a.filter)
		return keyed("deleted", n, err)
	case "drop_collection":
		return nil, dropper.DropCollection(ctx, a.collection)
	default: // ensure_index
		return nil, s.EnsureIndex(ctx, a.collection, a.fields, a.unique)
	}
}

func keyed(key string, value any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{key: value}, nil
}
