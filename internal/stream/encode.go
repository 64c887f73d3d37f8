package stream

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Encode writes objects as one YAML stream, byte for byte what kyaml's
// kio.ByteWriter writes (reader annotations and empty annotation maps
// removed, sequences indented as the object's seqindent annotation says),
// on every core and without its deep copy of the whole render: an object
// is copied only when it carries something to remove. The render stays
// untouched.
func Encode(objs []*yaml.RNode) ([]byte, error) {
	if len(objs) < 2 || !plainObjects(objs) {
		// One object may be written as JSON (kio.ByteWriter's
		// single-bare-node case), and what is not a plain object (see
		// plainObjects) is left to kyaml, errors included.
		var buf bytes.Buffer
		if err := (kio.ByteWriter{Writer: &buf}).Write(objs); err != nil {
			return nil, fmt.Errorf("writing the objects: %w", err)
		}
		return buf.Bytes(), nil
	}
	docs := make([][]byte, len(objs))
	errs := make([]error, len(objs))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(objs) {
					return
				}
				docs[k], errs[k] = encodeOne(objs[k])
			}
		}()
	}
	wg.Wait()
	var out bytes.Buffer
	for k, d := range docs {
		if errs[k] != nil {
			return nil, fmt.Errorf("writing object %d: %w", k, errs[k])
		}
		if k > 0 {
			out.WriteString("---\n")
		}
		out.Write(d)
	}
	return out.Bytes(), nil
}

// plainObjects reports whether every object is a mapping with at most one
// metadata key, itself a mapping (or null) with at most one annotations
// key: the objects the stream parser yields, for which Encode and
// kio.ByteWriter agree byte for byte.
func plainObjects(objs []*yaml.RNode) bool {
	for _, o := range objs {
		n := o.YNode()
		if n.Kind != yaml.MappingNode {
			return false
		}
		var md *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value != yaml.MetadataField {
				continue
			}
			if md != nil {
				return false
			}
			md = n.Content[i+1]
		}
		if md == nil || (md.Kind == yaml.ScalarNode && md.Tag == "!!null") {
			continue
		}
		if md.Kind != yaml.MappingNode {
			return false
		}
		annotations := 0
		for i := 0; i+1 < len(md.Content); i += 2 {
			if md.Content[i].Value == yaml.AnnotationsField {
				annotations++
			}
		}
		if annotations > 1 {
			return false
		}
	}
	return true
}

// readerAnnotations are what kio.ByteWriter removes by default.
var readerAnnotations = []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation}

func encodeOne(n *yaml.RNode) ([]byte, error) {
	anno := n.GetAnnotations()
	wide := anno[kioutil.SeqIndentAnnotation] == string(yaml.WideSequenceStyle)
	if needsCleaning(n, anno) {
		n = ownMetadata(n)
		for _, a := range readerAnnotations {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return nil, err
			}
		}
		if err := yaml.ClearEmptyAnnotations(n); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if wide {
		enc.DefaultSeqIndent()
	} else {
		enc.CompactSeqIndent()
	}
	doc := n.Document()
	// kio.ByteWriter's upWrapBareSequenceNode: a bare sequence read into a
	// wrapper mapping is written as the sequence.
	if seq, err := n.Pipe(yaml.Lookup(yaml.BareSeqNodeWrappingKey)); err == nil && !seq.IsNilOrEmpty() {
		doc = seq.YNode()
	}
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ownMetadata returns a copy of n that shares everything but metadata
// with n: the document and top mapping nodes and its field list are new,
// and metadata is a deep copy. What the cleaning changes is all in metadata, or is the
// metadata field itself.
func ownMetadata(n *yaml.RNode) *yaml.RNode {
	top := *n.YNode()
	top.Content = append([]*yaml.Node(nil), top.Content...)
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == yaml.MetadataField {
			top.Content[i+1] = yaml.CopyYNode(top.Content[i+1])
		}
	}
	// The document node the reader kept holds the document's head
	// comment (one set apart by a blank line); kio.ByteWriter writes it.
	if doc := n.Document(); doc != nil && doc.Kind == yaml.DocumentNode {
		d := *doc
		d.Content = []*yaml.Node{&top}
		return yaml.NewRNode(&d)
	}
	return yaml.NewRNode(&top)
}

// needsCleaning: the object has a reader annotation, or an empty (or
// null) annotations or metadata field: kio.ByteWriter removes all of them.
func needsCleaning(n *yaml.RNode, anno map[string]string) bool {
	for _, a := range readerAnnotations {
		if _, ok := anno[a]; ok {
			return true
		}
	}
	md := n.Field(yaml.MetadataField)
	if md == nil {
		return false
	}
	if md.Value.IsNilOrEmpty() {
		return true
	}
	return len(anno) == 0 && md.Value.Field(yaml.AnnotationsField) != nil
}
