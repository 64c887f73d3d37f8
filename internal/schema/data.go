package schema

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// data holds what `make schemas` generates (internal/schema/gen): the
// built-in API per Kubernetes minor, the API lifecycle and the CRDs of the
// projects the gate knows. data/PROVENANCE.md says where each comes from.
//
//go:embed data/*.zst data/lifecycle.json
var data embed.FS

// kindInfo is one creatable built-in kind.
type kindInfo struct {
	Schema     string `json:"schema"`
	Namespaced bool   `json:"namespaced"`
}

// kubeData is one Kubernetes minor's built-in API.
type kubeData struct {
	Version string                         `json:"version"`
	Kinds   map[string]map[string]kindInfo `json:"kinds"`
	Schemas map[string]json.RawMessage     `json:"schemas"`
}

// lifecycle is a built-in kind's deprecation and removal releases.
type lifecycle struct {
	Introduced  string `json:"introduced,omitempty"`
	Deprecated  string `json:"deprecated,omitempty"`
	Removed     string `json:"removed,omitempty"`
	Replacement string `json:"replacement,omitempty"`
}

var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
})

func readZstd(name string) ([]byte, error) {
	raw, err := data.ReadFile("data/" + name)
	if err != nil {
		return nil, fmt.Errorf("reading embedded %s: %w", name, err)
	}
	dec, err := decoder()
	if err != nil {
		return nil, fmt.Errorf("creating zstd decoder: %w", err)
	}
	out, err := dec.DecodeAll(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("decompressing embedded %s: %w", name, err)
	}
	return out, nil
}

// Versions lists the embedded Kubernetes minors, oldest first ("1.28", …).
func Versions() []string {
	entries, _ := data.ReadDir("data")
	var out []string
	for _, e := range entries {
		if v, ok := strings.CutPrefix(e.Name(), "kubernetes-"); ok {
			out = append(out, strings.TrimSuffix(v, ".json.zst"))
		}
	}
	sort.Slice(out, func(i, j int) bool { return minorOf(out[i]) < minorOf(out[j]) })
	return out
}

// minorOf returns the minor number of "1.37", "v1.37.2" or "1.37.2"; -1 when
// the text is not a 1.x version.
func minorOf(v string) int {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 || parts[0] != "1" {
		return -1
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return -1
	}
	return n
}

// resolveVersion maps a requested version to an embedded minor; empty means
// the newest.
func resolveVersion(want string) (string, error) {
	versions := Versions()
	if len(versions) == 0 {
		return "", fmt.Errorf("no embedded Kubernetes schemas")
	}
	if want == "" {
		return versions[len(versions)-1], nil
	}
	m := minorOf(want)
	for _, v := range versions {
		if minorOf(v) == m {
			return v, nil
		}
	}
	return "", fmt.Errorf("kubernetes version %q: not a supported minor (supported: %s)", want, SupportedRange())
}

// SupportedRange names the embedded minors for messages: "1.28 to 1.37".
func SupportedRange() string {
	versions := Versions()
	if len(versions) == 0 {
		return "none"
	}
	return versions[0] + " to " + versions[len(versions)-1]
}

// kubeLoaded holds each version's data once decoded: every unit of a run
// builds its own Validator (an estate of Applications has thousands), and
// decoding it again cost ~5 ms each. The data is only read.
var kubeLoaded sync.Map // version → *kubeData

func loadKube(version string) (*kubeData, error) {
	if kd, ok := kubeLoaded.Load(version); ok {
		return kd.(*kubeData), nil
	}
	kd, err := decodeKube(version)
	if err != nil {
		return nil, err
	}
	actual, _ := kubeLoaded.LoadOrStore(version, kd)
	return actual.(*kubeData), nil
}

func decodeKube(version string) (*kubeData, error) {
	raw, err := readZstd("kubernetes-" + version + ".json.zst")
	if err != nil {
		return nil, err
	}
	var kd kubeData
	if err := json.Unmarshal(raw, &kd); err != nil {
		return nil, fmt.Errorf("decoding embedded Kubernetes %s schemas: %w", version, err)
	}
	return &kd, nil
}

func loadLifecycle() (map[string]map[string]lifecycle, error) {
	raw, err := data.ReadFile("data/lifecycle.json")
	if err != nil {
		return nil, fmt.Errorf("reading embedded lifecycle.json: %w", err)
	}
	var out map[string]map[string]lifecycle
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decoding embedded lifecycle.json: %w", err)
	}
	return out, nil
}

// builtinCRDFiles lists the embedded CRD sets.
func builtinCRDFiles() []string {
	entries, _ := data.ReadDir("data")
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "crds-") {
			out = append(out, e.Name())
		}
	}
	return out
}
