package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A policy path may name any file the caller or an in-tree Gate points at
// (a token, a key); the errors about one must never carry its content.
// YAML libraries quote what they could not read ("cannot unmarshal !!str
// `ghp_…`", "value: {…}", "Object 'Kind' is missing in '…'"): the errors
// below keep only the line and the parser's own words.

// yamlLine finds the line a YAML error is about.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// parserWords are yaml.v3's scanner and parser messages: lower-case words
// and the syntax they name (',' or ']', <document start>), never a value.
var parserWords = regexp.MustCompile(`^[a-z][a-z ,'<>:\[\]-]*$`)

// contentFreeYAMLError is err without anything the file held: "line N: "
// and the parser's message when it is one of its fixed texts.
func contentFreeYAMLError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "MalformedYAMLError: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	where := ""
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil && m[0] == 0 {
		where = "line " + msg[m[2]:m[3]]
		msg = strings.TrimPrefix(msg[m[1]:], ": ")
	}
	words := parserWords.MatchString(msg) && !strings.Contains(msg, "value:")
	switch {
	case words && where != "":
		return fmt.Errorf("not valid YAML: %s: %s", where, msg)
	case words:
		return fmt.Errorf("not valid YAML: %s", msg)
	case where != "":
		return fmt.Errorf("not valid YAML (%s)", where)
	}
	return errors.New("not valid YAML")
}

// notAnObject describes a document that is not a mapping, without its
// content.
func notAnObject(doc *yaml.RNode) error {
	what := "not a mapping"
	switch doc.YNode().Kind {
	case yaml.ScalarNode:
		what = "a scalar (plain text), not an object"
	case yaml.SequenceNode:
		what = "a list, not an object"
	}
	if line := doc.YNode().Line; line > 0 {
		return fmt.Errorf("decode object: the document at line %d is %s", line, what)
	}
	return fmt.Errorf("decode object: the document is %s", what)
}
