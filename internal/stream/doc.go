// Package stream parses rendered manifests exactly as kubectl reads them,
// so the gate checks the objects the cluster would receive.
//
// kubectl converts every YAML document to JSON before it decodes it
// (sigs.k8s.io/yaml): aliases are expanded, merge keys ("<<") are applied,
// a key written twice is an error under strict decoding, and an object with
// a top-level items list (kind: List, DeploymentList, …) stands for its
// items. It reads YAML 1.1: a plain `on` or `yes` is a boolean, a key
// `on` the string "true". A YAML node tree read naively sees none of that:
// `image: *img` holds no image, of two `image:` keys a reader takes the
// first while kubectl takes the last, and `tier: on` is a string. [Parse]
// and [Normalize] close those gaps on the node tree itself, keeping line
// numbers for the report.
//
// Input is untrusted: [ReadAll] bounds how much is read, alias expansion is
// bounded (a "billion laughs" document is an error, not an out-of-memory),
// and a document that is not an object is an error, never a panic.
package stream
