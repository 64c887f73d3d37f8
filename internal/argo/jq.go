package argo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/itchyny/gojq"
)

// What a jqPathExpression hides is read by running it as Argo CD does
// (util/argo/normalizers: gojq.Parse("del(" + expr + ")"), compiled with no
// options, run with a 1 s timeout on the object; the first output replaces
// the object, and an error, a timeout, no output or a second output skips
// the expression on that object; a parse or compile error fails the
// Application's diff settings) on a synthetic object of the entry's kind
// that holds every field the rule protects, and reading which of those
// fields the result no longer holds. A pull request writes the expression,
// so the gate evaluates only what cannot run away with it: no loops,
// recursion or functions that build a value of any size in one step, and a
// budget of steps, heap and time; beyond it the gate says it cannot decide.

const (
	// jqMaxLen bounds the expressions the gate evaluates.
	jqMaxLen = 4096
	// jqMaxSteps bounds the steps (gojq instructions) of one evaluation.
	jqMaxSteps = 200_000
	// jqMaxAlloc bounds the bytes one evaluation allocates.
	jqMaxAlloc = 64 << 20
	// jqTimeout is Argo CD's DefaultJQExecutionTimeout.
	jqTimeout = time.Second
)

// jqVerdict is what del(EXPR) does to the synthetic object.
type jqVerdict struct {
	// parseErr: Argo CD cannot parse or compile del(EXPR).
	parseErr error
	// hides names the broadest protected field the expression removes or
	// rewrites ("spec", "metadata", …); "" when none.
	hides string
	// undecided says why the gate cannot tell what it hides.
	undecided string
}

// judgeJQ evaluates one jqPathExpression of e.
func judgeJQ(expr string, e ignoreEntry) jqVerdict {
	if len(expr) > jqMaxLen {
		return jqVerdict{undecided: fmt.Sprintf("it is %d bytes long, more than the %d the gate evaluates", len(expr), jqMaxLen)}
	}
	code, refused, err := compileJQ(expr)
	if err != nil {
		return jqVerdict{parseErr: err}
	}
	if refused != "" {
		return jqVerdict{undecided: refused}
	}
	if jqRunning.Load() >= jqMaxRunning {
		return jqVerdict{undecided: "earlier jqPathExpressions of this run are still being evaluated past their budget, so the gate evaluates no more"}
	}
	obj, targets := syntheticObject(e)
	out, skipped := runJQ(code, obj)
	if skipped != "" {
		return jqVerdict{undecided: skipped}
	}
	return jqVerdict{hides: hidden(obj, out, targets)}
}

// compileJQ parses and compiles del(expr) as Argo CD does; refused says
// why the gate will not run it.
func compileJQ(expr string) (code *gojq.Code, refused string, err error) {
	q, err := gojq.Parse("del(" + expr + ")")
	if err != nil {
		return nil, "", err
	}
	// The gate's environment is not Argo CD's: env and $ENV read nothing
	// (and are refused below), so no variable of the gate's reaches a result.
	code, err = gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, "", err
	}
	if why := jqRefuse(q, 0); why != "" {
		return nil, why, nil
	}
	return code, "", nil
}

// jqFuncs are the functions (name/arity) the gate evaluates: none loops,
// recurses without bound or builds a value larger than its input in one
// step. Each is what a jq path or filter over an object needs.
var jqFuncs = map[string]bool{
	"empty/0": true, "error/0": true, "error/1": true, "not/0": true, "select/1": true,
	"path/1": true, "paths/0": true, "paths/1": true, "leaf_paths/0": true, "getpath/1": true, "del/1": true,
	"has/1": true, "in/1": true, "contains/1": true, "inside/1": true, "IN/1": true, "IN/2": true,
	"any/0": true, "any/1": true, "any/2": true, "all/0": true, "all/1": true, "all/2": true,
	"startswith/1": true, "endswith/1": true, "ltrimstr/1": true, "rtrimstr/1": true,
	"test/1": true, "test/2": true, "ascii_downcase/0": true, "ascii_upcase/0": true,
	"length/0": true, "keys/0": true, "keys_unsorted/0": true, "type/0": true,
	"values/0": true, "nulls/0": true, "booleans/0": true, "numbers/0": true, "strings/0": true,
	"arrays/0": true, "objects/0": true, "iterables/0": true, "scalars/0": true,
	"map/1": true, "map_values/1": true, "to_entries/0": true, "from_entries/0": true, "with_entries/1": true,
	"first/0": true, "last/0": true, "first/1": true, "isempty/1": true, "recurse/0": true,
}

// jqRefuse walks the query and names the first construct the gate does not
// evaluate; depth bounds the walk (the parser's own nesting is bounded by
// jqMaxLen).
func jqRefuse(q *gojq.Query, depth int) string {
	if q == nil {
		return ""
	}
	if depth > jqMaxLen {
		return "it nests deeper than the gate evaluates"
	}
	if len(q.FuncDefs) > 0 {
		return "it defines a function (def), which may recurse without bound"
	}
	if len(q.Imports) > 0 {
		return "it imports a module"
	}
	switch q.Op {
	case gojq.OpSub:
		return "it subtracts (`-` of two arrays compares every pair in one step)"
	case gojq.OpMul:
		return "it multiplies (`*` repeats a string or merges objects into a value of any size in one step)"
	case gojq.OpAssign, gojq.OpModify, gojq.OpUpdateAdd, gojq.OpUpdateSub, gojq.OpUpdateMul, gojq.OpUpdateDiv, gojq.OpUpdateMod, gojq.OpUpdateAlt:
		return fmt.Sprintf("it assigns (`%s`): Argo CD takes the result as the object, and an assignment can build an array of any size in one step", q.Op)
	}
	for _, p := range q.Patterns {
		if why := jqRefusePattern(p, depth+1); why != "" {
			return why
		}
	}
	if why := jqRefuseTerm(q.Term, depth+1); why != "" {
		return why
	}
	if why := jqRefuse(q.Left, depth+1); why != "" {
		return why
	}
	return jqRefuse(q.Right, depth+1)
}

func jqRefusePattern(p *gojq.Pattern, depth int) string {
	if p == nil {
		return ""
	}
	for _, a := range p.Array {
		if why := jqRefusePattern(a, depth+1); why != "" {
			return why
		}
	}
	for _, o := range p.Object {
		if why := jqRefuseString(o.KeyString, depth+1); why != "" {
			return why
		}
		if why := jqRefuse(o.KeyQuery, depth+1); why != "" {
			return why
		}
		if why := jqRefusePattern(o.Val, depth+1); why != "" {
			return why
		}
	}
	return ""
}

func jqRefuseString(s *gojq.String, depth int) string {
	if s != nil && len(s.Queries) > 0 {
		return "it interpolates a value into a string, which writes a value of any size in one step"
	}
	return ""
}

func jqRefuseIndex(x *gojq.Index, depth int) string {
	if x == nil {
		return ""
	}
	if why := jqRefuseString(x.Str, depth); why != "" {
		return why
	}
	if why := jqRefuse(x.Start, depth+1); why != "" {
		return why
	}
	return jqRefuse(x.End, depth+1)
}

func jqRefuseTerm(t *gojq.Term, depth int) string {
	if t == nil {
		return ""
	}
	switch t.Type {
	case gojq.TermTypeReduce:
		return "it uses reduce, a loop"
	case gojq.TermTypeForeach:
		return "it uses foreach, a loop"
	case gojq.TermTypeFormat:
		return fmt.Sprintf("it uses the format %s, which writes a value of any size in one step", t.Format)
	case gojq.TermTypeFunc:
		name := t.Func.Name
		if strings.HasPrefix(name, "$") {
			if name == "$ENV" {
				return "it reads $ENV, the environment of Argo CD's controller, which the gate does not know"
			}
			break // a variable bound by `as` (the compiler refused any other)
		}
		if !jqFuncs[fmt.Sprintf("%s/%d", name, len(t.Func.Args))] {
			return fmt.Sprintf("it calls %s/%d, which the gate does not evaluate (it may loop, read outside the object or build a value of any size)", name, len(t.Func.Args))
		}
		for _, a := range t.Func.Args {
			if why := jqRefuse(a, depth+1); why != "" {
				return why
			}
		}
	case gojq.TermTypeIndex:
		if why := jqRefuseIndex(t.Index, depth); why != "" {
			return why
		}
	case gojq.TermTypeObject:
		if len(t.Object.KeyVals) == 0 {
			break // {}
		}
		return "it builds an object, which can nest a value in itself without bound"
	case gojq.TermTypeArray:
		if !jqConstant(t.Array.Query) {
			return "it builds an array of values that are not literals, which can nest a value in itself without bound"
		}
	case gojq.TermTypeUnary:
		if why := jqRefuseTerm(t.Unary.Term, depth+1); why != "" {
			return why
		}
	case gojq.TermTypeString:
		if why := jqRefuseString(t.Str, depth); why != "" {
			return why
		}
	case gojq.TermTypeIf:
		for _, q := range []*gojq.Query{t.If.Cond, t.If.Then, t.If.Else} {
			if why := jqRefuse(q, depth+1); why != "" {
				return why
			}
		}
		for _, e := range t.If.Elif {
			if why := jqRefuse(e.Cond, depth+1); why != "" {
				return why
			}
			if why := jqRefuse(e.Then, depth+1); why != "" {
				return why
			}
		}
	case gojq.TermTypeTry:
		if why := jqRefuse(t.Try.Body, depth+1); why != "" {
			return why
		}
		if why := jqRefuse(t.Try.Catch, depth+1); why != "" {
			return why
		}
	case gojq.TermTypeLabel:
		if why := jqRefuse(t.Label.Body, depth+1); why != "" {
			return why
		}
	case gojq.TermTypeQuery:
		if why := jqRefuse(t.Query, depth+1); why != "" {
			return why
		}
	}
	for _, s := range t.SuffixList {
		if why := jqRefuseIndex(s.Index, depth); why != "" {
			return why
		}
	}
	return ""
}

// jqConstant reports whether q is literals joined by commas (["spec"],
// ["a", "b"]).
func jqConstant(q *gojq.Query) bool {
	if q == nil {
		return true
	}
	if q.Op == gojq.OpComma {
		return jqConstant(q.Left) && jqConstant(q.Right)
	}
	if q.Op != 0 || q.Term == nil || len(q.Term.SuffixList) > 0 || len(q.Patterns) > 0 {
		return false
	}
	switch q.Term.Type {
	case gojq.TermTypeNumber, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse:
		return true
	case gojq.TermTypeString:
		return len(q.Term.Str.Queries) == 0
	}
	return false
}

// jqRunning counts evaluations still running, those abandoned past their
// time included (one step of gojq, a comparison, cannot be interrupted);
// past jqMaxRunning the gate evaluates no more, so runaway expressions
// cannot take every CPU of the run.
var jqRunning atomic.Int32

const jqMaxRunning = 4

// errJQBudget stops an evaluation that ran out of its budget.
var errJQBudget = errors.New("the gate's evaluation budget ran out")

// jqBudget is the context of one evaluation: gojq asks for Done before
// every instruction, so it counts the steps and the bytes allocated since
// the start and stops the evaluation beyond either bound or the timeout.
type jqBudget struct {
	context.Context
	steps      int
	start      uint64
	sample     []metrics.Sample
	done       chan struct{}
	once       sync.Once
	why        string
	parentDone <-chan struct{}
}

func newJQBudget(parent context.Context) *jqBudget {
	b := &jqBudget{Context: parent, done: make(chan struct{}), parentDone: parent.Done(),
		sample: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}}
	b.start = b.allocated()
	return b
}

func (b *jqBudget) allocated() uint64 {
	metrics.Read(b.sample)
	if b.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return b.sample[0].Value.Uint64()
}

func (b *jqBudget) stop(why string) {
	b.once.Do(func() { b.why = why; close(b.done) })
}

// Done is called by the evaluating goroutine alone, before each step.
func (b *jqBudget) Done() <-chan struct{} {
	b.steps++
	switch {
	case b.steps > jqMaxSteps:
		b.stop(fmt.Sprintf("it ran more than %d steps", jqMaxSteps))
	case b.steps%4 == 0 && b.allocated()-b.start > jqMaxAlloc:
		// Every fourth step: reading the counter costs more than a step,
		// and a value at most doubles in four (`. + .` takes more).
		b.stop(fmt.Sprintf("it allocated more than %d MB", jqMaxAlloc>>20))
	default:
		select {
		case <-b.parentDone:
			b.stop(fmt.Sprintf("it ran longer than %v", jqTimeout))
		default:
		}
	}
	return b.done
}

func (b *jqBudget) Err() error {
	select {
	case <-b.done:
		return errJQBudget
	default:
		return nil
	}
}

// runJQ runs code on obj as Argo CD's jqNormalizerPatch does and returns
// its first output; skipped says why Argo CD would skip it (an error, no
// output, a second output) or why the gate stopped it (its budget). The
// evaluation runs in its own goroutine: one step the budget cannot
// interrupt (a comparison of two large values) leaves it running, and the
// gate goes on.
func runJQ(code *gojq.Code, obj map[string]any) (out any, skipped string) {
	type result struct {
		out     any
		skipped string
	}
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	b := newJQBudget(ctx)
	ch := make(chan result, 1)
	jqRunning.Add(1)
	go func() {
		defer jqRunning.Add(-1)
		defer func() {
			if r := recover(); r != nil {
				ch <- result{skipped: fmt.Sprintf("its evaluation failed (%v)", r)}
			}
		}()
		iter := code.RunWithContext(b, obj)
		first, ok := iter.Next()
		switch {
		case !ok:
			ch <- result{skipped: "it returns no object (Argo CD skips it)"}
			return
		case isErr(first):
			if errors.Is(first.(error), errJQBudget) {
				ch <- result{skipped: b.why}
				return
			}
			ch <- result{skipped: fmt.Sprintf("it errors (%v): Argo CD skips an expression that errors, so it hides nothing where it errors", first)}
			return
		}
		if _, more := iter.Next(); more {
			ch <- result{skipped: "it returns more than one object (Argo CD skips it)"}
			return
		}
		ch <- result{out: first}
	}()
	select {
	case r := <-ch:
		return r.out, r.skipped
	case <-time.After(jqTimeout + 250*time.Millisecond):
		return nil, fmt.Sprintf("it ran longer than %v", jqTimeout)
	}
}

func isErr(v any) bool {
	_, ok := v.(error)
	return ok
}

// jqTarget is a protected field of the synthetic object.
type jqTarget struct {
	name string
	path []any
}

// syntheticObject is an object of the entry's kind (a Deployment for an
// entry of every kind) named as the entry names it, that holds every field
// the rule protects, a second container and init container (so hiding
// "the first image" differs from hiding every image), and the fields the
// documented narrow entries name (replicas, caBundle, a Route's host, a
// ConfigMap key, status), so that those do not error. targets lists the
// protected fields, broadest first.
func syntheticObject(e ignoreEntry) (map[string]any, []jqTarget) {
	kind := e.kind
	if kind == "" || strings.ContainsAny(kind, "*?[") {
		kind = "Deployment"
	}
	name := e.name
	if name == "" {
		name = "app"
	}
	container := func(n string) map[string]any {
		return map[string]any{
			"name": n, "image": "registry.example/" + n + ":1.0", "args": []any{"--port=8080"},
			"env":          []any{map[string]any{"name": "MODE", "value": "prod"}},
			"ports":        []any{map[string]any{"containerPort": 8080, "protocol": "TCP"}},
			"volumeMounts": []any{map[string]any{"name": "data", "mountPath": "/data"}},
			"resources":    map[string]any{"requests": map[string]any{"cpu": "100m"}},
		}
	}
	pod := map[string]any{
		"containers":         []any{container("app"), container("sidecar")},
		"initContainers":     []any{container("init"), container("migrate")},
		"volumes":            []any{map[string]any{"name": "data", "emptyDir": map[string]any{}}},
		"serviceAccountName": name,
	}
	template := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": name}, "annotations": map[string]any{"checksum/config": "0"}},
		"spec":     pod,
	}
	spec := map[string]any{
		"replicas": 2, "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": template, "host": name + ".example.com",
	}
	tmpl := []any{"spec", "template"}
	switch kind {
	case "Pod":
		spec, tmpl = pod, nil
	case "CronJob":
		spec = map[string]any{"schedule": "0 * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": template}}}
		tmpl = []any{"spec", "jobTemplate", "spec", "template"}
	}
	apiVersion := "v1"
	switch {
	case strings.ContainsAny(e.group, "*?["):
		apiVersion = "apps/v1"
	case e.group != "":
		apiVersion = e.group + "/v1"
	}
	meta := map[string]any{"name": name, "labels": map[string]any{"app": name}, "annotations": map[string]any{"team": "shop"}}
	if e.namespace != "" {
		meta["namespace"] = e.namespace
	} else {
		meta["namespace"] = "default"
	}
	obj := map[string]any{
		"apiVersion": apiVersion, "kind": kind, "metadata": meta, "spec": spec,
		"data":     map[string]any{"config.yaml": "a: 1\n"},
		"webhooks": []any{map[string]any{"name": "a.example.com", "clientConfig": map[string]any{"caBundle": "Q0E="}}},
		"status":   map[string]any{"replicas": 2, "conditions": []any{map[string]any{"type": "Available", "status": "True"}}},
	}
	targets := []jqTarget{{"the whole object", nil}, {"metadata", []any{"metadata"}}, {"spec", []any{"spec"}}}
	if tmpl != nil {
		targets = append(targets, jqTarget{strings.Join(strs(tmpl), "."), tmpl}, jqTarget{strings.Join(strs(tmpl), ".") + ".spec", append(append([]any{}, tmpl...), "spec")})
	}
	return obj, targets
}

func strs(path []any) []string {
	out := make([]string, len(path))
	for i, p := range path {
		out[i] = fmt.Sprint(p)
	}
	return out
}

// hidden names the broadest target whose every leaf in obj is missing or
// changed in out (Argo CD then diffs neither side of it), or "the image of
// every container" when the image of every container (not init container)
// is, of two or more; "" when none is.
func hidden(obj map[string]any, out any, targets []jqTarget) string {
	if _, ok := out.(map[string]any); !ok {
		return "the whole object (the result is not an object)"
	}
	for _, t := range targets {
		v, ok := lookup(obj, t.path)
		if !ok {
			continue
		}
		kept := false
		n := 0
		leaves(v, t.path, func(path []any, leaf any) {
			n++
			if got, ok := lookup(out, path); ok && reflect.DeepEqual(got, leaf) {
				kept = true
			}
		})
		if n > 0 && !kept {
			return t.name
		}
	}
	images, kept := 0, false
	leaves(obj, nil, func(path []any, leaf any) {
		if len(path) < 3 || path[len(path)-1] != "image" {
			return
		}
		if path[len(path)-3] != "containers" {
			return // an init container's image runs once, before the pod's
		}
		images++
		if got, ok := lookup(out, path); ok && reflect.DeepEqual(got, leaf) {
			kept = true
		}
	})
	if images > 1 && !kept {
		return "the image of every container"
	}
	return ""
}

// leaves calls fn with the path and value of every scalar under v.
func leaves(v any, path []any, fn func(path []any, leaf any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			leaves(x, append(append([]any{}, path...), k), fn)
		}
	case []any:
		for i, x := range v {
			leaves(x, append(append([]any{}, path...), i), fn)
		}
	default:
		fn(path, v)
	}
}

// lookup reads the value at path in v.
func lookup(v any, path []any) (any, bool) {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil, false
			}
			v = a[k]
		}
	}
	return v, true
}
