package stream

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/workers"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// DefaultMaxBytes is how much one input may hold unless the caller says
// otherwise: far above any real render, far below what exhausts a CI runner
// (parsing costs about ten times the input in memory).
const DefaultMaxBytes = 256 << 20

// TooLargeError is input over the size cap.
type TooLargeError struct {
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes, the input size cap (--max-input-bytes)", e.What, e.Limit)
}

// ReadAll reads r up to limit bytes; more is a [*TooLargeError] naming what.
// A limit of 0 means [DefaultMaxBytes].
func ReadAll(r io.Reader, limit int64, what string) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	// A regular file's size sizes the buffer once: a 6 MB render read by
	// doubling allocated 14 MB. The limit still decides, whatever the size.
	var buf bytes.Buffer
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= limit {
			buf = *bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Limit: limit}
	}
	return data, nil
}

// parallelAbove is the stream size from which documents are parsed
// concurrently: YAML parsing is most of a large check.
const parallelAbove = 256 << 10

// Parse reads a YAML or JSON stream as kubectl does: every document is an
// object (a list, a scalar or a document without apiVersion and kind is an
// error), normalized ([Normalize]), and an object with a top-level items
// list stands for its items (kind: List, DeploymentList, …; items that are
// not a list of objects is an error, as in kubectl). Plain scalars are
// resolved as kubectl's YAML 1.1 reader resolves them (yaml11.go: `on` is
// true). Objects carry the path and their index in it as annotations.
func Parse(data []byte, path string) ([]*yaml.RNode, error) {
	return parse(data, path, nil, true)
}

// ParseAsKustomize is [Parse] with plain scalars read as YAML 1.2, as
// kustomize reads them (`on` is the string "on"): for a file kustomize
// read, to find in it a field of its render.
func ParseAsKustomize(data []byte, path string) ([]*yaml.RNode, error) {
	return parse(data, path, nil, false)
}

// Each is told of the objects of a stream as they are read, a run of them
// at a time, before the stream is read to its end: objs are the stream's
// objects first … first+len(objs)-1, annotated as [Parse] annotates them.
// Runs come from several goroutines at once and in no set order; each
// object is in exactly one run. Each must not panic (a panic would be
// taken for the YAML reader's), and the runs it is told of may be of a
// stream that turns out not to parse.
type Each func(first int, objs []*yaml.RNode)

// ParseEach is [Parse], telling each of the objects as they are read: a
// caller that judges objects one by one does so while the rest of the
// stream is read, and may release what it no longer needs of them before
// the stream is whole (the gate's streamed check). The stream is read in
// smaller chunks, with the collector running, so that what each releases
// is freed as the reading goes on. nil each is Parse.
func ParseEach(data []byte, path string, each Each) ([]*yaml.RNode, error) {
	return parse(data, path, each, true)
}

// parse is ParseEach; yaml11 resolves plain scalars as kubectl does.
func parse(data []byte, path string, each Each, yaml11 bool) (_ []*yaml.RNode, err error) {
	defer func() {
		// The YAML reader has panicked on hostile input before (a document
		// that is a bare list); no input may crash the gate.
		if r := recover(); r != nil {
			err = fmt.Errorf("parsing %s: the YAML reader failed: %v", path, r)
		}
	}()
	chunks, err := parseChunks(data, path, each, yaml11)
	if err != nil {
		return nil, err
	}
	// The first document that is no object decides, counted in the whole
	// stream: every chunk before it parsed whole.
	docs := 0
	for _, c := range chunks {
		if c.objErr != nil {
			if c.panicked {
				return nil, fmt.Errorf("parsing %s: the YAML reader failed: %v", path, c.objErr)
			}
			return nil, fmt.Errorf("parsing %s: document %d (counting from 1): %w", path, docs+c.objDoc+1, c.objErr)
		}
		docs += c.docs
	}
	// Each object carries the path and its index in the stream; the
	// chunks are annotated on every core, as they were parsed (with each,
	// already as each was told of them).
	base := make([]int, len(chunks))
	n := 0
	for i, c := range chunks {
		base[i] = n
		n += len(c.objs)
	}
	if each == nil {
		workers.Each(len(chunks), func(i int) bool {
			annotate(chunks[i].objs, path, base[i])
			return true
		})
	}
	out := make([]*yaml.RNode, 0, n)
	for _, c := range chunks {
		out = append(out, c.objs...)
	}
	return out, nil
}

// annotate gives objects, the stream's first … first+len(objs)-1, its
// path and their index.
func annotate(objs []*yaml.RNode, path string, first int) {
	for j, o := range objs {
		yamlpath.SetAnnotation(o.YNode(), kioutil.PathAnnotation, path)
		yamlpath.SetAnnotation(o.YNode(), kioutil.IndexAnnotation, strconv.Itoa(first+j))
	}
}

// objects checks one document and flattens a list object into its items;
// yaml11 resolves plain scalars as kubectl does.
func objects(d *yaml.RNode, yaml11 bool) ([]*yaml.RNode, error) {
	if d.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: a %s, not a Kubernetes object", d.YNode().Line, kindName(d.YNode()))
	}
	if err := normalize(d, yaml11); err != nil {
		return nil, err
	}
	// After Normalize, which expands aliases: metadata may be an alias of
	// a list.
	if err := metadataNotAList(d.YNode(), ""); err != nil {
		return nil, err
	}
	items := d.Field("items")
	if items == nil || items.Value.YNode().Tag == "!!null" {
		if kind, apiVersion := d.GetKind(), d.GetApiVersion(); kind == "" || apiVersion == "" {
			missing := "apiVersion and kind"
			if kind != "" {
				missing = "apiVersion"
			} else if apiVersion != "" {
				missing = "kind"
			}
			return nil, fmt.Errorf("not a Kubernetes object: it has no %s (a patch fragment or a values file is not a rendered manifest)", missing)
		}
		return []*yaml.RNode{d}, nil
	}
	return listItems(d, items.Value, yaml11)
}

// listItems returns a list object's items; kubectl decodes any object with
// a top-level items field as a list (unstructured.UnstructuredJSONScheme).
func listItems(list, items *yaml.RNode, yaml11 bool) ([]*yaml.RNode, error) {
	kind := list.GetKind()
	if items.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: %s items is a %s, not a list of objects", items.YNode().Line, kindOr(kind), kindName(items.YNode()))
	}
	var out []*yaml.RNode
	for j, e := range items.YNode().Content {
		item := yaml.NewRNode(e)
		if e.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: %s item %d is a %s, not an object", e.Line, kindOr(kind), j, kindName(e))
		}
		if item.GetKind() == "" || item.GetApiVersion() == "" {
			return nil, fmt.Errorf("line %d: %s item %d has no apiVersion or kind", e.Line, kindOr(kind), j)
		}
		if err := normalize(item, yaml11); err != nil {
			return nil, err
		}
		if err := metadataNotAList(e, fmt.Sprintf("%s item %d: ", kindOr(kind), j)); err != nil {
			return nil, err
		}
		if f := item.Field("items"); f != nil && f.Value.YNode().Tag != "!!null" {
			return nil, fmt.Errorf("line %d: %s item %d is a list inside a list, which kubectl refuses", e.Line, kindOr(kind), j)
		}
		out = append(out, item)
	}
	return out, nil
}

// metadataNotAList refuses an object whose metadata is a list. kubectl
// cannot decode it (an ObjectMeta is a mapping) and never sends it; kyaml's
// readers of metadata (GetName, GetNamespace, GetAnnotations…), which the
// rendering and Argo CD stages call, take a list's items in pairs and
// panic on an odd count. Metadata written as a string or left empty stays
// the schema stage's to report.
func metadataNotAList(obj *yaml.Node, what string) error {
	for i := 0; i+1 < len(obj.Content); i += 2 {
		if k, v := obj.Content[i], obj.Content[i+1]; k.Value == "metadata" && v.Kind == yaml.SequenceNode {
			return fmt.Errorf("line %d: %smetadata is a list, not a mapping: not a Kubernetes object (kubectl cannot decode it)", v.Line, what)
		}
	}
	return nil
}

func kindOr(kind string) string {
	if kind == "" {
		return "the list"
	}
	return kind
}

// chunk is one piece of a stream, parsed on its own core: its objects
// (documents checked, normalized and lists flattened by objects), how
// many documents it held, and the first document that is no object.
type chunk struct {
	objs []*yaml.RNode
	docs int
	// objErr is why document objDoc (counting from 0 in the chunk) is
	// no object; panicked says objects panicked on it.
	objErr   error
	objDoc   int
	panicked bool
}

// parseChunks splits a large stream into chunks of whole documents and
// parses and checks them concurrently (readDocuments, then objects on
// each document), keeping document order. A YAML error in any chunk
// decides before a document that is no object, as when the whole stream
// was parsed before any document was checked.
//
// With each, the stream is cut in chunks of about eachChunkBytes and the
// collector keeps running; once a chunk's objects are checked and the
// chunks before it have counted theirs, its objects are annotated and
// each is told of them (teller).
func parseChunks(data []byte, path string, each Each, yaml11 bool) ([]chunk, error) {
	if err := invalidUTF8(data); err != nil {
		return nil, readError(path, err, 0, false)
	}
	parts := [][]byte{data}
	switch {
	case each != nil && len(data) > eachChunkBytes:
		parts = splitDocuments(data, max(runtime.GOMAXPROCS(0)*4, len(data)/eachChunkBytes))
	case each == nil && len(data) > parallelAbove:
		parts = splitDocuments(data, runtime.GOMAXPROCS(0)*4)
		defer pauseGC()()
	}
	chunks := make([]chunk, len(parts))
	t := &teller{each: each, path: path, chunks: chunks, counted: make([]bool, len(parts)), bad: make([]bool, len(parts))}
	errs := make([]error, len(parts))
	// lines before each chunk: node lines count from the stream's start
	offsets := make([]int, len(parts))
	for i := 1; i < len(parts); i++ {
		offsets[i] = offsets[i-1] + bytes.Count(parts[i-1], []byte("\n"))
	}
	workers.Each(len(parts), func(i int) bool {
		var docs []*yaml.RNode
		func() {
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("the YAML reader failed: %v", r)
				}
			}()
			docs, errs[i] = readDocuments(parts[i])
		}()
		if errs[i] == nil {
			if unicodeBreaks(parts[i]) {
				fileLines(docs, parts[i])
			}
			if offsets[i] > 0 {
				for _, n := range docs {
					shiftLines(n.YNode(), offsets[i])
				}
			}
			chunks[i] = checkDocuments(docs, yaml11)
		}
		if each != nil {
			t.counts(i, errs[i] == nil && chunks[i].objErr == nil)
		}
		return true
	})
	for i, err := range errs {
		if err != nil {
			return nil, readError(path, err, offsets[i], len(parts) > 1)
		}
	}
	return chunks, nil
}

// invalidUTF8 refuses a stream that is not UTF-8 where the YAML reader
// would, naming the line, before it is cut in chunks: the reader reads
// ahead of the token it parses, so a stream read whole failed on a bad
// byte in a later document, and the same stream read in chunks on a
// syntax error before it. Data in UTF-16 (a byte order mark first) is the
// reader's to decode.
func invalidUTF8(data []byte) error {
	if utf8.Valid(data) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Errorf("yaml: line %d: invalid UTF-8 (byte 0x%02x)", bytes.Count(data[:i], []byte("\n"))+1, data[i])
		}
		i += n
	}
	return nil
}

// yamlLine is the line a YAML reader's error names, in its chunk.
var yamlLine = regexp.MustCompile(`^yaml: line ([0-9]+): `)

// readError says where in the stream a chunk's YAML error is, however the
// stream was cut: the line the reader names, counted in the whole stream;
// for an error that names none, the line the chunk starts at.
func readError(path string, err error, offset int, chunked bool) error {
	if m := yamlLine.FindStringSubmatchIndex(err.Error()); m != nil {
		line, _ := strconv.Atoi(err.Error()[m[2]:m[3]])
		return fmt.Errorf("parsing %s: yaml: line %d: %s", path, line+offset, err.Error()[m[1]:])
	}
	if chunked {
		return fmt.Errorf("parsing %s (the chunk from line %d): %w", path, offset+1, err)
	}
	return fmt.Errorf("parsing %s: %w", path, err)
}

// eachChunkBytes is about how much of a stream ParseEach reads before it
// tells of the objects read: small enough that the objects being read are
// a small part of a large render, large enough that a chunk's work
// dwarfs its cost. (A variable: the fuzz target cuts small inputs too.)
var eachChunkBytes = 64 << 10

// teller tells each of the chunks' objects in stream order of counting:
// once a chunk and every chunk before it have counted their objects, its
// first object's index is known, and the worker that counted last tells
// each of it, and of any chunk after it that was waiting for it. No worker
// waits for another: it goes on to read the next chunk.
type teller struct {
	each    Each
	path    string
	chunks  []chunk
	mu      sync.Mutex
	counted []bool
	bad     []bool // read with an error: holds no objects
	next    int    // the first chunk not told
	first   int    // its first object's index in the stream
	failed  bool   // a chunk up to next holds no objects (an error): none after it is told
}

// counts says chunk i is read (ok: its objects checked), and tells each of
// the chunks that makes ready.
func (t *teller) counts(i int, ok bool) {
	type ready struct{ chunk, first int }
	var todo []ready
	t.mu.Lock()
	t.counted[i], t.bad[i] = true, !ok
	for !t.failed && t.next < len(t.chunks) && t.counted[t.next] {
		if t.bad[t.next] {
			t.failed = true
			break
		}
		todo = append(todo, ready{t.next, t.first})
		t.first += len(t.chunks[t.next].objs)
		t.next++
	}
	t.mu.Unlock()
	for _, r := range todo {
		if objs := t.chunks[r.chunk].objs; len(objs) > 0 {
			annotate(objs, t.path, r.first)
			t.each(r.first, objs)
		}
	}
}

// checkDocuments turns a chunk's documents into objects, stopping at the
// first that is none.
func checkDocuments(docs []*yaml.RNode, yaml11 bool) (c chunk) {
	c.docs = len(docs)
	for i, d := range docs {
		c.objDoc = i
		objs, err := objectsGuarded(d, &c.panicked, yaml11)
		if err != nil {
			c.objErr = err
			c.objs = nil
			return c
		}
		c.objs = append(c.objs, objs...)
	}
	return c
}

// objectsGuarded is objects, a panic made an error (panicked set).
func objectsGuarded(d *yaml.RNode, panicked *bool, yaml11 bool) (_ []*yaml.RNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			*panicked = true
			err = fmt.Errorf("%v", r)
		}
	}()
	return objects(d, yaml11)
}

// pauseGC pauses the garbage collector while a large stream is read, and
// returns the function that ends the pause. Every node read is kept: a
// collection while the trees grow marks them again and again and frees
// little (on the 9,020-object bench render, nine collections during the
// read marked ~295 MB to free ~60 MB; pausing them saved ~4% of a check's
// CPU, with the same peak memory). The soft memory limit still
// applies (supervise sets it), so a paused collector cannot run the
// process out of memory. Reads can overlap (renders on several cores):
// the first pauses, the last ends the pause (gcfloor.Pause).
func pauseGC() (resume func()) { return gcfloor.Pause() }

// shiftLines adds offset to the line of every node of a tree.
// The line breaks YAML 1.1 adds to "\n" and "\r": NEL, LINE SEPARATOR and
// PARAGRAPH SEPARATOR. The YAML reader counts them as breaks (inside a
// quoted string, where they are allowed); a file's lines, as editors,
// GitHub and the report's readers count them, do not.
var (
	nel = []byte("\u0085")
	ls  = []byte("\u2028")
	ps  = []byte("\u2029")
)

// unicodeBreaks reports whether a chunk holds a break its lines do not
// count.
func unicodeBreaks(c []byte) bool {
	return bytes.Contains(c, nel) || bytes.Contains(c, ls) || bytes.Contains(c, ps)
}

// fileLines gives the nodes of a chunk's documents the lines of the chunk
// as a file counts them ("\n", "\r\n" and a lone "\r" end one), not the
// YAML reader's, which also counts NEL, LS and PS: a finding on a line
// after one of them named the line below its own.
func fileLines(docs []*yaml.RNode, c []byte) {
	real := realLines(c)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Line > 0 && n.Line < len(real) {
			n.Line = real[n.Line]
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, d := range docs {
		walk(d.YNode())
	}
}

// realLines maps the YAML reader's lines of c to the file's:
// real[reader's line] = the file's line.
func realLines(c []byte) []int {
	real := []int{0, 1}
	line := 1
	for i := 0; i < len(c); i++ {
		switch {
		case c[i] == '\n', c[i] == '\r' && (i+1 == len(c) || c[i+1] != '\n'):
			line++
		case bytes.HasPrefix(c[i:], nel):
			i += len(nel) - 1
		case bytes.HasPrefix(c[i:], ls), bytes.HasPrefix(c[i:], ps):
			i += len(ls) - 1
		default:
			continue
		}
		real = append(real, line)
	}
	return real
}

func shiftLines(n *yaml.Node, offset int) {
	n.Line += offset
	for _, c := range n.Content {
		shiftLines(c, offset)
	}
}

// readDocuments parses every document of a chunk, empty ones skipped:
// with the fast reader where it reads them all (fastyaml.go), else with
// the general one.
func readDocuments(c []byte) ([]*yaml.RNode, error) {
	if docs, ok := fastDocuments(c); ok {
		return docs, nil
	}
	return readDocumentsGeneral(c)
}

// readDocumentsGeneral parses a chunk's documents with the YAML reader.
func readDocumentsGeneral(c []byte) ([]*yaml.RNode, error) {
	d := yaml.NewDecoder(bytes.NewReader(c))
	var out []*yaml.RNode
	for {
		var n yaml.Node
		err := d.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if n.Kind == yaml.DocumentNode {
			if len(n.Content) == 0 {
				continue
			}
			r := n.Content[0]
			if r.Kind == yaml.ScalarNode && r.Tag == "!!null" {
				continue // an empty document ("---\n---")
			}
			n = *r
		}
		out = append(out, yaml.NewRNode(&n))
	}
}

// splitDocuments cuts a stream at document separators ("---" lines at
// column 0, which cannot occur inside a scalar) into about n chunks of
// whole documents.
func splitDocuments(data []byte, n int) [][]byte {
	target := len(data)/n + 1
	var chunks [][]byte
	start := 0
	for i := 0; i < len(data); {
		nl := bytes.IndexByte(data[i:], '\n')
		end := len(data)
		if nl >= 0 {
			end = i + nl + 1
		}
		line := data[i:end]
		if i-start >= target && isSeparator(line) {
			chunks = append(chunks, data[start:i])
			start = i
		}
		i = end
	}
	return append(chunks, data[start:])
}

func isSeparator(line []byte) bool {
	line = bytes.TrimRight(line, "\r\n")
	return bytes.Equal(line, []byte("---")) || bytes.HasPrefix(line, []byte("--- ")) || bytes.HasPrefix(line, []byte("---\t"))
}
