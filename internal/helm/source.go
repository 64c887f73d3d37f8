package helm

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// AnnoSource names the chart template an object was rendered from: the
// chart directory as the user named it joined with the template's path in
// the chart ("charts/web/templates/rollout.yaml"). The gate sets it during
// its own render and strips it before printing.
const AnnoSource = manifest.AnnoHelmSource

const sourcePrefix = "# Source: "

// SplitManifest splits helm's rendered manifest text ("---\n# Source: p\n…"
// per document, as in a release's manifest or `helm template` output) into
// documents. Text before the first "---" belongs to a document with an
// empty Source.
func SplitManifest(text string) []Document {
	var docs []Document
	var cur *Document
	var body strings.Builder
	first := false // the line after "---", where helm puts the Source
	flush := func() {
		if cur != nil {
			cur.Body = strings.TrimRight(body.String(), "\n")
			if strings.TrimSpace(cur.Body) != "" || cur.Source != "" {
				docs = append(docs, *cur)
			}
		}
		body.Reset()
	}
	// Lines split on "\n" only: a "\r" is the document's (bufio's line
	// scanner would drop it).
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.TrimRight(line, " \t") == "---":
			flush()
			cur = &Document{}
			first = true
			continue
		case first && strings.HasPrefix(line, sourcePrefix):
			cur.Source = strings.TrimPrefix(line, sourcePrefix)
		default:
			if cur == nil {
				cur = &Document{}
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		first = false
	}
	flush()
	return docs
}

// Parse parses rendered documents into objects, each annotated with
// AnnoSource: display (the chart directory as the user named it) joined
// with the Source path inside the chart. Empty documents (a template that
// rendered nothing) are skipped, as kubectl does.
func Parse(docs []Document, display string) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, d := range docs {
		nodes, err := (&kio.ByteReader{
			Reader:                strings.NewReader(d.Body),
			OmitReaderAnnotations: true,
		}).Read()
		if err != nil {
			return nil, fmt.Errorf("parsing %s rendered by helm: %w", orChart(d.Source), err)
		}
		for _, n := range nodes {
			if n.YNode().Kind != yaml.MappingNode {
				return nil, fmt.Errorf("parsing %s rendered by helm: a document is not a mapping", orChart(d.Source))
			}
			switch {
			case d.File != "":
				yamlpath.SetAnnotation(n.YNode(), AnnoSource, path.Join(filepath.ToSlash(display), d.File))
			case d.Source != "":
				yamlpath.SetAnnotation(n.YNode(), AnnoSource, SourcePath(display, d.Source))
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// SourcePath maps helm's Source path ("web/templates/x.yaml": the chart's
// name, then the file in the chart) to the file under the chart directory
// as the user named it ("charts/web/templates/x.yaml"). A subchart's
// template maps under charts/<subchart>/, where `helm dependency build`
// puts it (an archive there is not unpacked, but the path still names it).
func SourcePath(chartDir, source string) string {
	_, rest, ok := strings.Cut(source, "/")
	if !ok {
		rest = source
	}
	if chartDir == "" {
		return rest
	}
	return path.Join(filepath.ToSlash(chartDir), rest)
}

func orChart(source string) string {
	if source == "" {
		return "a document"
	}
	return source
}
