// Package schema holds the schema rules: every rendered object validated
// against its schema the way the API server validates a strict create
// (schema), objects whose kind has no schema anywhere (schema-unknown), and
// apiVersions the target Kubernetes version no longer serves (api-removed)
// or has deprecated (api-deprecated). The engine is internal/schema; the
// four rules share one validation pass per run.
package schema
