package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyFileErrorsNeverQuoteTheFile: a policy path may name a token or
// a key; whatever the file holds, the error names the file and says what is
// wrong, but carries none of its content.
func TestPolicyFileErrorsNeverQuoteTheFile(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"a one-line token", "ghp_S3cr3tT0kenAbCdEf0123456789\n", "is a scalar (plain text), not an object"},
		{"a token without a newline", "glpat-Xy12Zz9SecretValue", "is a scalar (plain text), not an object"},
		{"a docker config", `{"auths": {"registry.example.com": {"auth": "dXNlcjpTM2NyM3RQYXNz"}}}`, "apiVersion and kind are required"},
		{"a docker config with a kind", `{"kind": "x", "auths": {"registry.example.com": {"auth": "dXNlcjpTM2NyM3RQYXNz"}}}`, "apiVersion and kind are required"},
		{"a .netrc line", "machine example.com login bot password S3cr3tPass\n", "is a scalar (plain text), not an object"},
		{"an env file", "TOKEN=S3cr3tEnvValue\nOTHER=x\n", "is a scalar (plain text), not an object"},
		{"a key with a broken quote", "token: \"S3cr3tQuoted\n", "not valid YAML: line 2: found unexpected end of stream"},
		{"mapping values in a secret", "S3cr3t: value: more\n", "not valid YAML: mapping values are not allowed in this context"},
		{"a tab in a secret", "a:\n\tS3cr3tTabbed: x\n", "not valid YAML"},
		{"a list of secrets", "- S3cr3tListItem\n", "is a list, not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPaths([]string{file})
			if err == nil {
				t.Fatal("loaded a policy from a secret")
			}
			msg := err.Error()
			if !strings.Contains(msg, file) || !strings.Contains(msg, tc.want) {
				t.Errorf("want the file and %q, got %q", tc.want, msg)
			}
			for _, secret := range []string{"S3cr3t", "ghp_", "glpat", "dXNlcj", "auths", "TOKEN", "machine"} {
				if strings.Contains(msg, secret) {
					t.Errorf("the error quotes the file (%q): %q", secret, msg)
				}
			}
		})
	}
}
