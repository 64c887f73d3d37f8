package rules

// rolloutRules are the Argo Rollouts rules (SPEC §5.3).
var rolloutRules = []Rule{}
