package agentenv

// The document query rules (docs/protocol.md, "Documents"), evaluated on JSON values: what a document
// store that holds its documents itself (in files, in memory) needs to answer filters, sorts, updates,
// upserts and unique indexes the way every other document store does. They are agent-env's own
// evaluator's (the Rust crate's store-api/src/document/eval.rs, which the built-in stores use);
// protocol/vectors/document-queries.jsonl in the agent-env repository holds cases that the Rust, Python
// and Go evaluators all pass.
//
// Values are what encoding/json decodes into an any: map[string]any, []any, string, float64, bool and
// nil (Go's integer types and json.Number count as numbers too). Numbers compare by value, and true is
// not 1. As encoding/json reads every number as a float64, this evaluator cannot tell 2 from 2.0: two
// integers beyond 2^53 that differ only past a float64's precision compare equal here, where agent-env
// tells them apart, and a sort orders an object holding 2.0 as if it held 2.

import (
	"cmp"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ResolvePath is the values the dotted path reaches in doc; none when it is absent. A numeric part
// indexes an array (items.0.name); any other part reaches into each object an array holds (items.name
// is the name of every item), so a path may reach several values.
func ResolvePath(doc Document, path string) []any {
	names := strings.Split(path, ".")
	var found []any
	if value, ok := doc[names[0]]; ok {
		resolveIn(value, names[1:], &found)
	}
	return found
}

func resolveIn(value any, names []string, found *[]any) {
	if len(names) == 0 {
		*found = append(*found, value)
		return
	}
	switch v := value.(type) {
	case map[string]any:
		if inner, ok := v[names[0]]; ok {
			resolveIn(inner, names[1:], found)
		}
	case []any:
		if i, isIndex := arrayIndex(names[0]); isIndex {
			if i < uint64(len(v)) {
				resolveIn(v[i], names[1:], found)
			}
			return
		}
		for _, item := range v {
			if _, isObject := item.(map[string]any); isObject {
				resolveIn(item, names, found)
			}
		}
	}
}

// arrayIndex is the array index a path part names: digits, perhaps after a +, that fit in 64 bits.
func arrayIndex(name string) (uint64, bool) {
	digits := strings.TrimPrefix(name, "+")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.ParseUint(digits, 10, 64)
	return i, err == nil
}

// number is a JSON number: an integer compares exactly with another integer, any other pair as floats.
type number struct {
	isInt bool
	i     int64
	f     float64
}

func numberOf(value any) (number, bool) {
	integer := func(i int64) (number, bool) { return number{isInt: true, i: i, f: float64(i)}, true }
	switch v := value.(type) {
	case float64:
		return number{f: v}, true
	case float32:
		return number{f: float64(v)}, true
	case int:
		return integer(int64(v))
	case int8:
		return integer(int64(v))
	case int16:
		return integer(int64(v))
	case int32:
		return integer(int64(v))
	case int64:
		return integer(v)
	case uint8:
		return integer(int64(v))
	case uint16:
		return integer(int64(v))
	case uint32:
		return integer(int64(v))
	case uint:
		return numberOf(uint64(v))
	case uint64:
		if v <= math.MaxInt64 {
			return integer(int64(v))
		}
		return number{f: float64(v)}, true
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return integer(i)
		}
		if f, err := v.Float64(); err == nil {
			return number{f: f}, true
		}
	}
	return number{}, false
}

func (a number) compare(b number) int {
	if a.isInt && b.isInt {
		return cmp.Compare(a.i, b.i)
	}
	return cmp.Compare(a.f, b.f)
}

// JSONEqual is JSON equality: numbers by value (1 equals 1.0; true is not 1), arrays item by item,
// objects key by key.
func JSONEqual(a, b any) bool {
	if x, ok := numberOf(a); ok {
		y, ok := numberOf(b)
		return ok && x.compare(y) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, JSONEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for key, value := range x {
			if other, ok := y[key]; !ok || !JSONEqual(value, other) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// compareValues orders two numbers, two strings or two booleans; ok is false for any other pair.
func compareValues(a, b any) (order int, ok bool) {
	if x, isNumber := numberOf(a); isNumber {
		y, isNumber := numberOf(b)
		return x.compare(y), isNumber
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, true
			case y: // false before true
				return -1, true
			}
			return 1, true
		}
	}
	return 0, false
}

// asList is a predicate's list value (in): a []any, or any other slice.
func asList(value any) ([]any, bool) {
	if list, ok := value.([]any); ok {
		return list, true
	}
	v := reflect.ValueOf(value)
	if value == nil || v.Kind() != reflect.Slice {
		return nil, false
	}
	list := make([]any, v.Len())
	for i := range list {
		list[i] = v.Index(i).Interface()
	}
	return list, true
}

// CheckFilter refuses, with KindInvalidParams, a filter MatchesFilter cannot evaluate: a predicate
// whose Op is not eq, ne, gte, lte, in, exists, lte_or_absent or absent_or_null, or whose Value is not
// what the op takes (in a list, exists a bool, absent_or_null none). Check a request's filter once,
// before matching: MatchesFilter checks nothing.
func CheckFilter(filter Filter) error {
	for _, path := range sortedKeys(filter) {
		for _, p := range filter[path] {
			needs := ""
			switch p.Op {
			case "eq", "ne", "gte", "lte", "lte_or_absent":
			case "in":
				if _, ok := asList(p.Value); !ok {
					needs = "a list"
				}
			case "exists":
				if _, ok := p.Value.(bool); !ok {
					needs = "true or false"
				}
			case "absent_or_null":
				if p.Value != nil {
					needs = "no value"
				}
			default:
				return NewError(KindInvalidParams, "the filter on '%s' has the predicate '%s', which is not one: the ops are eq, ne, gte, lte, in, exists, lte_or_absent and absent_or_null", path, p.Op)
			}
			if needs != "" {
				return NewError(KindInvalidParams, "the filter on '%s' has '%s' with the value %v, but '%s' takes %s", path, p.Op, p.Value, p.Op, needs)
			}
		}
	}
	return nil
}

// equalsOne is eq: a value equals target or is an array holding it; an absent path equals only null.
func equalsOne(values []any, target any) bool {
	if len(values) == 0 {
		return target == nil
	}
	for _, value := range values {
		if JSONEqual(value, target) {
			return true
		}
		if items, ok := value.([]any); ok && slices.ContainsFunc(items, func(item any) bool { return JSONEqual(item, target) }) {
			return true
		}
	}
	return false
}

// anyCompares reports whether a value, or an element of an array value, compares to bound as accept
// wants (values of another type never do).
func anyCompares(values []any, bound any, accept func(order int) bool) bool {
	meets := func(value any) bool {
		order, ok := compareValues(value, bound)
		return ok && accept(order)
	}
	for _, value := range values {
		if meets(value) {
			return true
		}
		if items, ok := value.([]any); ok && slices.ContainsFunc(items, meets) {
			return true
		}
	}
	return false
}

func anyNull(values []any) bool {
	return slices.ContainsFunc(values, func(value any) bool { return value == nil })
}

// holds reports whether the values a path reached meet one predicate.
func holds(values []any, p Predicate) bool {
	present := len(values) > 0
	switch p.Op {
	case "eq":
		return equalsOne(values, p.Value)
	case "ne":
		return present && !equalsOne(values, p.Value)
	case "in":
		options, _ := asList(p.Value)
		return present && slices.ContainsFunc(options, func(option any) bool { return equalsOne(values, option) })
	case "gte":
		return anyCompares(values, p.Value, func(order int) bool { return order >= 0 })
	case "lte":
		return anyCompares(values, p.Value, func(order int) bool { return order <= 0 })
	case "exists":
		return present == (p.Value == true)
	case "lte_or_absent":
		return !present || anyNull(values) || anyCompares(values, p.Value, func(order int) bool { return order <= 0 })
	case "absent_or_null":
		return !present || anyNull(values)
	}
	return false // CheckFilter refuses any other op
}

// MatchesFilter reports whether doc meets every predicate of filter (an empty filter matches every
// document). On a path, eq matches an equal value, an array holding one, and, for nil, a null or absent
// field; ne needs the field present and different; in a value (or an element) in the list; gte and lte
// include the bound and match only a value of its type (numbers, strings, booleans); exists is
// presence, of null too; lte_or_absent an absent or null field or one <= the bound; absent_or_null an
// absent or null field. A predicate CheckFilter refuses matches nothing.
func MatchesFilter(doc Document, filter Filter) bool {
	for path, preds := range filter {
		values := ResolvePath(doc, path)
		for _, p := range preds {
			if !holds(values, p) {
				return false
			}
		}
	}
	return true
}

// rank is where a value's JSON type sorts: null, numbers, strings, objects, arrays, booleans.
func rank(value any) int {
	if _, ok := numberOf(value); ok {
		return 1
	}
	switch value.(type) {
	case nil:
		return 0
	case string:
		return 2
	case map[string]any:
		return 3
	case []any:
		return 4
	}
	return 5
}

// jsonText is value as agent-env's compact JSON text (keys sorted), which orders objects and arrays in
// a sort. A float64 with no fraction is written as the integer it was most likely read from.
func jsonText(value any) string {
	var out strings.Builder
	writeJSON(&out, value)
	return out.String()
}

func writeJSON(out *strings.Builder, value any) {
	switch v := value.(type) {
	case nil:
		out.WriteString("null")
	case bool:
		out.WriteString(strconv.FormatBool(v))
	case string:
		writeJSONString(out, v)
	case []any:
		out.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			writeJSON(out, item)
		}
		out.WriteByte(']')
	case map[string]any:
		out.WriteByte('{')
		for i, key := range sortedKeys(v) {
			if i > 0 {
				out.WriteByte(',')
			}
			writeJSONString(out, key)
			out.WriteByte(':')
			writeJSON(out, v[key])
		}
		out.WriteByte('}')
	case uint64:
		out.WriteString(strconv.FormatUint(v, 10))
	default:
		n, ok := numberOf(v)
		switch {
		case !ok:
			data, _ := json.Marshal(v)
			out.Write(data)
		case n.isInt:
			out.WriteString(strconv.FormatInt(n.i, 10))
		case n.f == math.Trunc(n.f) && n.f >= -(1<<63) && n.f < 1<<64 && !(n.f == 0 && math.Signbit(n.f)):
			out.WriteString(strconv.FormatFloat(n.f, 'f', 0, 64))
		default:
			out.WriteString(floatText(n.f))
		}
	}
}

// writeJSONString writes s quoted, with agent-env's escapes: \" \\ \b \f \n \r \t, and \u00XX for the
// other control characters.
func writeJSONString(out *strings.Builder, s string) {
	out.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			out.WriteByte('\\')
			out.WriteByte(c)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if c < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte("0123456789abcdef"[c>>4])
				out.WriteByte("0123456789abcdef"[c&0xf])
			} else {
				out.WriteByte(c)
			}
		}
	}
	out.WriteByte('"')
}

// floatText is x as agent-env writes a float: the shortest digits that read back as x, in plain
// notation for exponents -5 to 15 (0.00001, 1000000000000000.0), else as 1.5e+16 or 1e-6.
func floatText(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "null" // never read from JSON
	}
	if x == 0 {
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	mantissa, exponent, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	exp, _ := strconv.Atoi(exponent)
	point := exp + 1 // the digits before the decimal point
	digits = strings.TrimRight(digits, "0")
	switch {
	case point < -4 || point > 16:
		rest := ""
		if len(digits) > 1 {
			rest = "." + digits[1:]
		}
		expSign := "+"
		if exp < 0 {
			expSign, exp = "-", -exp
		}
		return sign + digits[:1] + rest + "e" + expSign + strconv.Itoa(exp)
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
	default:
		return sign + digits[:point] + "." + digits[point:]
	}
}

// sortValue is the value a sort key sees: the first value the path reaches, or nil when absent.
func sortValue(doc Document, field string) any {
	if found := ResolvePath(doc, field); len(found) > 0 {
		return found[0]
	}
	return nil
}

// documentOrder orders a and b by keys: see SortDocuments.
func documentOrder(a, b Document, keys []SortKey) int {
	for _, key := range keys {
		x, y := sortValue(a, key.Field), sortValue(b, key.Field)
		order := cmp.Compare(rank(x), rank(y))
		if order == 0 {
			var ok bool
			if order, ok = compareValues(x, y); !ok {
				order = strings.Compare(jsonText(x), jsonText(y))
			}
		}
		if key.Descending {
			order = -order
		}
		if order != 0 {
			return order
		}
	}
	return 0
}

// SortDocuments sorts docs in place by keys, primary first (no keys leave the order as it is). On each
// key a document sorts by the first value its field reaches (absent counts as null): by type first
// (null, numbers, strings, objects, arrays, booleans), then by value (objects and arrays by their JSON
// text). Absent and null values come first ascending and last descending; later keys break ties, and
// documents that tie on every key keep their order.
func SortDocuments(docs []Document, keys []SortKey) {
	if len(keys) > 0 {
		slices.SortStableFunc(docs, func(a, b Document) int { return documentOrder(a, b, keys) })
	}
}

// QueryDocuments is what Query answers over docs: the documents that match filter, sorted by keys,
// then offset of them skipped, then limit kept (0 or a negative limit keeps all; a negative offset skips
// none, as the Python SDK's query_documents). FindOne is its first with limit 1, Count
// its length. It refuses a filter CheckFilter refuses; docs is left as it is.
func QueryDocuments(docs []Document, filter Filter, keys []SortKey, limit, offset int) ([]Document, error) {
	if err := CheckFilter(filter); err != nil {
		return nil, err
	}
	found := []Document{}
	for _, doc := range docs {
		if MatchesFilter(doc, filter) {
			found = append(found, doc)
		}
	}
	SortDocuments(found, keys)
	found = found[min(max(offset, 0), len(found)):]
	if limit > 0 && limit < len(found) {
		found = found[:limit]
	}
	return found, nil
}

// updatePaths is every path update writes, with repeats, in the order its parts apply.
func updatePaths(update Update) []string {
	paths := sortedKeys(update.Set)
	paths = append(paths, update.Unset...)
	paths = append(paths, sortedKeys(update.Inc)...)
	paths = append(paths, sortedKeys(update.AddToSet)...)
	return append(paths, sortedKeys(update.Push)...)
}

func quotedList(paths []string) string {
	quoted := make([]string, len(paths))
	for i, path := range paths {
		quoted[i] = "'" + path + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// CheckUpdate refuses, with KindInvalidValue, an update that writes a path twice or a path and one
// inside it (a and a.b). Check a request's update before looking for the document to change: such an
// update is refused even when nothing matches.
func CheckUpdate(update Update) error {
	paths := updatePaths(update)
	var repeated, nested []string
	for i, p := range paths {
		if slices.Contains(paths[:i], p) && !slices.Contains(repeated, p) {
			repeated = append(repeated, p)
		}
		for _, q := range paths {
			if strings.HasPrefix(q, p+".") {
				nested = append(nested, p, q)
			}
		}
	}
	if len(repeated) > 0 {
		sort.Strings(repeated)
		return NewError(KindInvalidValue, "UpdateSpec emits the same path under multiple operators: %s", quotedList(repeated))
	}
	if len(nested) > 0 {
		sort.Strings(nested)
		return NewError(KindInvalidValue, "UpdateSpec emits a path and one of its ancestors: %s", quotedList(slices.Compact(nested)))
	}
	return nil
}

// place is where a path ends: a key of an object or an index of an array.
type place struct {
	object map[string]any
	key    string
	array  []any
	index  int
}

func (p place) get() any {
	if p.object != nil {
		return p.object[p.key]
	}
	return p.array[p.index]
}

func (p place) set(value any) {
	if p.object != nil {
		p.object[p.key] = value
	} else {
		p.array[p.index] = value
	}
}

// slot is where path ends in doc. The objects on the way are made where they are missing or hold
// something else than an object or an array; a part that reaches an array must be an index inside it.
func slot(doc Document, path string) (place, error) {
	names := strings.Split(path, ".")
	at := place{object: doc, key: names[0]}
	for _, name := range names[1:] {
		switch current := at.get().(type) {
		case []any:
			i, isIndex := arrayIndex(name)
			if !isIndex {
				return place{}, NewError(KindInvalidValue, "cannot set '%s': '%s' is not an index of the array it names", path, name)
			}
			if i >= uint64(len(current)) {
				return place{}, NewError(KindInvalidValue, "cannot set '%s': index %d is past the end of an array of %d", path, i, len(current))
			}
			at = place{array: current, index: int(i)}
		case map[string]any:
			if current == nil {
				current = map[string]any{}
				at.set(current)
			}
			at = place{object: current, key: name}
		default:
			object := map[string]any{}
			at.set(object)
			at = place{object: object, key: name}
		}
	}
	return at, nil
}

func unsetPath(doc Document, path string) {
	names := strings.Split(path, ".")
	var holder any = doc
	for _, name := range names[:len(names)-1] {
		switch h := holder.(type) {
		case map[string]any:
			inner, ok := h[name]
			if !ok {
				return
			}
			holder = inner
		case []any:
			i, isIndex := arrayIndex(name)
			if !isIndex || i >= uint64(len(h)) {
				return
			}
			holder = h[i]
		default:
			return
		}
	}
	last := names[len(names)-1]
	switch h := holder.(type) {
	case map[string]any:
		delete(h, last)
	case []any:
		if i, isIndex := arrayIndex(last); isIndex && i < uint64(len(h)) {
			h[i] = nil // an array keeps its length
		}
	}
}

func addNumbers(path string, current, by any) (any, error) {
	if current == nil {
		current = 0 // an absent or null field counts as 0
	}
	x, isNumber := numberOf(current)
	y, byNumber := numberOf(by)
	if !isNumber || !byNumber {
		return nil, NewError(KindInvalidValue, "cannot inc '%s': both the field and the amount must be numbers", path)
	}
	if x.isInt && y.isInt {
		if sum := x.i + y.i; (sum > x.i) == (y.i > 0) {
			return sum, nil
		}
	}
	if sum := x.f + y.f; !math.IsInf(sum, 0) {
		return sum, nil
	}
	return nil, nil
}

// CopyDocument is a copy of doc that shares no map or slice with it: what a store that keeps its
// documents in memory hands out and takes in, so that a caller's change to one cannot reach the store.
func CopyDocument(doc Document) Document {
	if doc == nil {
		return nil
	}
	return copyValue(doc).(map[string]any)
}

// copyValue copies a JSON value, so that a change to the copy leaves the original as it was.
func copyValue(value any) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, inner := range v {
			out[key] = copyValue(inner)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, inner := range v {
			out[i] = copyValue(inner)
		}
		return out
	}
	return value
}

// appendAt appends value to the array at path (an absent or null field starts as an empty one); with
// once, not when an equal value is there already.
func appendAt(doc Document, path, part string, value any, once bool) error {
	at, err := slot(doc, path)
	if err != nil {
		return err
	}
	current := at.get()
	items, isArray := current.([]any)
	if current != nil && !isArray {
		return NewError(KindInvalidValue, "cannot %s to '%s': it holds a value that is not an array", part, path)
	}
	if once && slices.ContainsFunc(items, func(item any) bool { return JSONEqual(item, value) }) {
		return nil
	}
	at.set(append(items, copyValue(value)))
	return nil
}

// ApplyUpdate changes doc in place by update: Set (making the objects on the way), Unset (an array
// element becomes null), Inc (an absent or null field counts as 0), AddToSet (appends unless an equal
// value is there) and Push (appends), in that order, each part's paths in sorted order. It refuses what
// CheckUpdate refuses, and, with KindInvalidValue, a part that cannot apply (inc of a string, a path
// through an array that is not an index in it); doc may then be half changed, so change a copy. The
// values written are copies: doc shares nothing with update.
func ApplyUpdate(doc Document, update Update) error {
	if err := CheckUpdate(update); err != nil {
		return err
	}
	if doc == nil {
		return NewError(KindInvalidValue, "cannot update a nil document")
	}
	for _, path := range sortedKeys(update.Set) {
		at, err := slot(doc, path)
		if err != nil {
			return err
		}
		at.set(copyValue(update.Set[path]))
	}
	for _, path := range update.Unset {
		unsetPath(doc, path)
	}
	for _, path := range sortedKeys(update.Inc) {
		at, err := slot(doc, path)
		if err != nil {
			return err
		}
		sum, err := addNumbers(path, at.get(), update.Inc[path])
		if err != nil {
			return err
		}
		at.set(sum)
	}
	for _, path := range sortedKeys(update.AddToSet) {
		if err := appendAt(doc, path, "add_to_set", update.AddToSet[path], true); err != nil {
			return err
		}
	}
	for _, path := range sortedKeys(update.Push) {
		if err := appendAt(doc, path, "push", update.Push[path], false); err != nil {
			return err
		}
	}
	return nil
}

// UpsertedFrom is the document an upsert inserts on a miss: the eq values of filter at their paths (in
// path order, making the objects on the way), then update applied to it. (An upsert of Replace inserts
// its document as it is.)
func UpsertedFrom(filter Filter, update Update) (Document, error) {
	if err := CheckFilter(filter); err != nil {
		return nil, err
	}
	doc := Document{}
	for _, path := range sortedKeys(filter) {
		for _, p := range filter[path] {
			if p.Op != "eq" {
				continue
			}
			at, err := slot(doc, path)
			if err != nil {
				return nil, err
			}
			at.set(copyValue(p.Value))
		}
	}
	if err := ApplyUpdate(doc, update); err != nil {
		return nil, err
	}
	return doc, nil
}

// UniqueKey is the values a unique index on fields holds for doc: the first value each field reaches.
// ok is false when one is absent or null: such a document is not in the index (two never collide).
func UniqueKey(doc Document, fields []string) (key []any, ok bool) {
	for _, field := range fields {
		found := ResolvePath(doc, field)
		if len(found) == 0 || found[0] == nil {
			return nil, false
		}
		key = append(key, found[0])
	}
	return key, true
}

func sameKey(a, b []any) bool { return slices.EqualFunc(a, b, JSONEqual) }

func refused(fields []string) error {
	names := strings.Join(fields, ", ")
	return NewError(KindDuplicateKey, "another document has the same %s, which the unique index on [%s] refuses", names, names)
}

// CheckUnique refuses, with KindDuplicateKey, doc when one of the unique indexes (each a list of
// fields) holds its key in one of docs already, leaving out docs[skip] (the document doc takes the
// place of; -1 for none).
func CheckUnique(docs []Document, indexes [][]string, doc Document, skip int) error {
	for _, fields := range indexes {
		key, indexed := UniqueKey(doc, fields)
		if !indexed {
			continue
		}
		for i, other := range docs {
			if taken, ok := UniqueKey(other, fields); ok && i != skip && sameKey(key, taken) {
				return refused(fields)
			}
		}
	}
	return nil
}

// coarse is value with every number a float64 (and -0 as 0): equal values have the same text then.
func coarse(value any) any {
	if n, ok := numberOf(value); ok {
		return n.f + 0
	}
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, inner := range v {
			out[key] = coarse(inner)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, inner := range v {
			out[i] = coarse(inner)
		}
		return out
	}
	return value
}

// CheckUniqueIndex refuses, with KindDuplicateKey, docs when two of them have the same key on fields:
// what a new unique index on a collection that holds documents already must refuse.
func CheckUniqueIndex(docs []Document, fields []string) error {
	groups := map[string][][]any{}
	for _, doc := range docs {
		key, indexed := UniqueKey(doc, fields)
		if !indexed {
			continue
		}
		text := jsonText(coarse(key))
		if slices.ContainsFunc(groups[text], func(taken []any) bool { return sameKey(key, taken) }) {
			return refused(fields)
		}
		groups[text] = append(groups[text], key)
	}
	return nil
}
