package rules

// liveRules are the ids of the live rules of `kubectl gate status` (SPEC
// §5.7). Their checks run against a cluster, in internal/live; they are
// registered here so config, output and docs know them.
var liveRules = []Rule{}
