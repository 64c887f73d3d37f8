package cmp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Param is one plugin parameter of the Application
// (spec.source.plugin.parameters): a string, a map or an array, as Argo CD
// marshals ApplicationSourcePluginParameter.
type Param struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
	Array  []string          `json:"array,omitempty"`
}

// MarshalJSON writes the parameter as Argo CD does: a map or array that is
// present but empty stays present ("map": {}), since that tells its kind.
func (p Param) MarshalJSON() ([]byte, error) {
	out := map[string]any{"name": p.Name}
	if p.String != nil {
		out["string"] = *p.String
	}
	if p.Map != nil {
		out["map"] = p.Map
	}
	if p.Array != nil {
		out["array"] = p.Array
	}
	return json.Marshal(out)
}

// The parameters the gate reads (README "Inside Argo CD"). They apply to a
// Helm chart only, as the matching fields of an Application's helm source.
const (
	ParamValuesFiles      = "values-files"           // array: helm.valueFiles, relative to the app's directory
	ParamValues           = "values"                 // string: helm.values (a YAML document), after the files
	ParamHelmParameters   = "helm-parameters"        // map: helm.parameters (--set)
	ParamHelmStringParams = "helm-string-parameters" // map: helm.parameters with forceString (--set-string)
	ParamReleaseName      = "release-name"           // string: helm.releaseName
)

// paramKinds says which of string, map, array each known parameter is.
var paramKinds = map[string]string{
	ParamValuesFiles: "array", ParamValues: "string", ParamHelmParameters: "map",
	ParamHelmStringParams: "map", ParamReleaseName: "string",
}

// maxParametersBytes bounds ARGOCD_APP_PARAMETERS: an environment variable
// cannot be larger than a page of the kernel's argument space anyway
// (MAX_ARG_STRLEN, 128 KiB); a larger value is not Argo CD's.
const maxParametersBytes = 128 << 10

// ParseParameters decodes ARGOCD_APP_PARAMETERS: a JSON array of
// parameters, each with a name and exactly the value its kind takes. A
// field Argo CD does not write, a parameter the gate does not know, one
// given twice or with the wrong kind of value is an error.
func ParseParameters(data []byte) ([]Param, error) {
	if len(data) > maxParametersBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(data), maxParametersBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw []struct {
		Name   string             `json:"name"`
		String *string            `json:"string"`
		Map    *map[string]string `json:"map"`
		Array  *[]string          `json:"array"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of parameters: %w", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	out := make([]Param, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		p := Param{Name: r.Name, String: r.String}
		got := []string{}
		if r.String != nil {
			got = append(got, "string")
		}
		if r.Map != nil {
			p.Map = *r.Map
			if p.Map == nil {
				p.Map = map[string]string{}
			}
			got = append(got, "map")
		}
		if r.Array != nil {
			p.Array = *r.Array
			if p.Array == nil {
				p.Array = []string{}
			}
			got = append(got, "array")
		}
		if err := check(p.Name, got, seen); err != nil {
			return nil, fmt.Errorf("parameter [%d]: %w", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// check validates one parameter's name and kind.
func check(name string, got []string, seen map[string]bool) error {
	want, known := paramKinds[name]
	switch {
	case !known:
		return fmt.Errorf("unknown parameter %q (the gate reads %s)", name, knownParams())
	case seen[name]:
		return fmt.Errorf("parameter %q is given twice", name)
	case len(got) != 1 || got[0] != want:
		return fmt.Errorf("parameter %q takes a %s, got %s", name, want, orNothing(got))
	}
	seen[name] = true
	return nil
}

func knownParams() string {
	names := make([]string, 0, len(paramKinds))
	for n := range paramKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func orNothing(got []string) string {
	if len(got) == 0 {
		return "no value"
	}
	return strings.Join(got, " and ")
}

// paramEnvName is how Argo CD names a parameter's PARAM_ variable
// (ApplicationSourcePluginParameters.Environ): upper case, every other
// character than A-Z, 0-9 and _ replaced by _.
var paramEnvChar = regexp.MustCompile("[^A-Z0-9_]")

func paramEnvName(name string) string {
	return "PARAM_" + paramEnvChar.ReplaceAllString(strings.ToUpper(name), "_")
}

// paramsFromEnviron reads the PARAM_* variables Argo CD sets beside
// ARGOCD_APP_PARAMETERS, for a run without the latter (by hand, another
// tool). Strings and arrays survive that form; map keys do not (they are
// upper-cased), so a map parameter there is an error.
func paramsFromEnviron(environ []string) ([]Param, error) {
	byName := map[string]*Param{}
	indexed := map[string]map[int]string{}
	var order []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "PARAM_") {
			continue
		}
		name, idx, err := matchParamEnv(k)
		if err != nil {
			return nil, err
		}
		if byName[name] == nil {
			byName[name] = &Param{Name: name}
			order = append(order, name)
		}
		if idx < 0 {
			byName[name].String = &v
			continue
		}
		if indexed[name] == nil {
			indexed[name] = map[int]string{}
		}
		indexed[name][idx] = v
	}
	sort.Strings(order)
	out := make([]Param, 0, len(order))
	for _, name := range order {
		p := byName[name]
		if items, ok := indexed[name]; ok {
			for i := range len(items) {
				v, ok := items[i]
				if !ok {
					return nil, fmt.Errorf("%s_%d is missing: array items must be numbered from 0 without gaps", paramEnvName(name), i)
				}
				p.Array = append(p.Array, v)
			}
		}
		out = append(out, *p)
	}
	return out, nil
}

// matchParamEnv maps a PARAM_ variable to its parameter and array index
// (-1 for a string).
func matchParamEnv(key string) (string, int, error) {
	for name, kind := range paramKinds {
		base := paramEnvName(name)
		switch {
		case key == base && kind == "string":
			return name, -1, nil
		case strings.HasPrefix(key, base+"_") && kind == "array":
			if i, err := strconv.Atoi(key[len(base)+1:]); err == nil && i >= 0 {
				return name, i, nil
			}
		case strings.HasPrefix(key, base+"_") && kind == "map":
			return "", 0, fmt.Errorf("%s: map parameter %q is read from %s only (PARAM_ variables upper-case its keys)", key, name, EnvParameters)
		}
	}
	return "", 0, fmt.Errorf("%s: no parameter of the gate is named so (the gate reads %s)", key, knownParams())
}
