package helm

import (
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// FalseBools lists the values of the chart at dir that are the boolean
// false once o's values files and --set values are merged over the chart's
// values.yaml, as paths --set accepts ("bluegreen.autoPromotion"), sorted.
// Keys --set cannot name plainly (holding '.', ',', '=', '[', ']' or '\')
// are left out. selftest flips them one at a time to find the value that
// turns a Rollout's autoPromotionEnabled on.
func FalseBools(dir string, o Options) ([]string, error) {
	if !IsChart(dir) {
		return nil, fmt.Errorf("reading the values of %s: %w", dir, ErrNotChart)
	}
	root, err := o.boundary(dir)
	if err != nil {
		return nil, err
	}
	if err := checkChart(root, dir); err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	if err := checkValueFiles(root, o); err != nil {
		return nil, fmt.Errorf("reading values for chart %s: %w", dir, err)
	}
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	user, err := mergeValues(o)
	if err != nil {
		return nil, fmt.Errorf("reading values for chart %s: %w", dir, err)
	}
	var out []string
	walkFalse(overlay(ch.Values, user), "", &out)
	sort.Strings(out)
	return out, nil
}

// overlay returns base with over merged in: maps merge key by key, any
// other value of over replaces base's (helm's coalescing for the values a
// template reads).
func overlay(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = overlay(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

func walkFalse(m map[string]any, prefix string, out *[]string) {
	for k, v := range m {
		if k == "" || strings.ContainsAny(k, ".,=[]\\") {
			continue
		}
		switch v := v.(type) {
		case bool:
			if !v {
				*out = append(*out, prefix+k)
			}
		case map[string]any:
			walkFalse(v, prefix+k+".", out)
		}
	}
}
