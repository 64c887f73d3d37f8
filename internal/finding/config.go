package finding

import (
	"fmt"
	"strings"
)

// Kinds of ConfigSource.Source: where a layer of a configuration came from.
const (
	// ConfigDefaults is the gate's built-in defaults (no --config).
	ConfigDefaults = "defaults"
	// ConfigFile is the caller's trusted config file (--config).
	ConfigFile = "file"
	// ConfigInTree is a Gate or Pin found in the render (the
	// kustomization's own, which the pull request controls).
	ConfigInTree = "in-tree"
	// ConfigFlags is the command line's overrides (--rule, --digest, …).
	ConfigFlags = "flags"
)

// Roles of a ConfigSource: what it may decide.
const (
	// RoleBase is the configuration the others start from.
	RoleBase = "base"
	// RoleTighten may only make the base stricter (config.Tighten).
	RoleTighten = "tighten"
	// RoleDecides replaces the base (an in-tree Gate under
	// spec.allowInTreeLoosening).
	RoleDecides = "decides"
	// RoleOverride sets what it names over the rest (flags).
	RoleOverride = "override"
)

// ConfigSource is one layer of the configuration that decided a verdict,
// in the order the layers apply.
type ConfigSource struct {
	// Source is ConfigDefaults, ConfigFile, ConfigInTree or ConfigFlags.
	Source string `json:"source"`
	// Path is the file of a ConfigFile.
	Path string `json:"path,omitempty"`
	// Kind and Name name an in-tree object (Gate or Pin).
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	// Role is RoleBase, RoleTighten, RoleDecides or RoleOverride.
	Role string `json:"role"`
	// Sets lists what the layer set: the spec fields where a config
	// differs from the built-in defaults ("failOn",
	// "images.allowedRegistries", "rules"), or the flags given.
	Sets []string `json:"sets,omitempty"`
	// Ignored lists what the layer set that the gate did not use (an
	// in-tree Gate's registry settings when it may only tighten).
	Ignored []string `json:"ignored,omitempty"`
}

// Config is one configuration that decided the verdict of some inputs.
type Config struct {
	Sources []ConfigSource `json:"sources"`
	// Inputs are the inputs it decided ("-k overlays/prod", …).
	Inputs []string `json:"inputs"`
}

// String is the configuration in one line, without its inputs:
// "--config ci/gate.yaml + in-tree Gate prod (may only tighten it) + flags".
func (c Config) String() string {
	parts := make([]string, 0, len(c.Sources))
	for _, s := range c.Sources {
		parts = append(parts, s.String())
	}
	return strings.Join(parts, " + ")
}

// String is the layer in a few words.
func (s ConfigSource) String() string {
	switch s.Source {
	case ConfigDefaults:
		return "built-in defaults"
	case ConfigFile:
		return "--config " + s.Path
	case ConfigFlags:
		return "flags"
	case ConfigInTree:
		mode := "may only tighten it"
		if s.Role == RoleDecides {
			mode = "decides alone: spec.allowInTreeLoosening"
		}
		if len(s.Ignored) > 0 {
			mode += "; its registry settings are ignored"
		}
		return fmt.Sprintf("in-tree %s %s (%s)", s.Kind, s.Name, mode)
	}
	return s.Source
}
