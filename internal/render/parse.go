package render

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// parallelAbove is the stream size from which documents are parsed
// concurrently: YAML parsing is most of a large check.
const parallelAbove = 256 << 10

// parseStream parses a YAML stream into objects, concurrently for large
// streams, keeping document order, and sets the path and index annotations.
func parseStream(data []byte, path string) ([]*yaml.RNode, error) {
	chunks := [][]byte{data}
	if len(data) > parallelAbove {
		chunks = splitDocuments(data, runtime.GOMAXPROCS(0)*4)
	}
	results := make([][]*yaml.RNode, len(chunks))
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, c := range chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := kio.ByteReader{Reader: bytes.NewReader(c), OmitReaderAnnotations: true, PreserveSeqIndent: false}
			results[i], errs[i] = r.Read()
		}()
	}
	wg.Wait()
	var out []*yaml.RNode
	for i := range chunks {
		if errs[i] != nil {
			return nil, fmt.Errorf("parsing %s: %w", path, errs[i])
		}
		out = append(out, results[i]...)
	}
	for i, n := range out {
		yamlpath.SetAnnotation(n.YNode(), kioutil.PathAnnotation, path)
		yamlpath.SetAnnotation(n.YNode(), kioutil.IndexAnnotation, strconv.Itoa(i))
	}
	return out, nil
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
