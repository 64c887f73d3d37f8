package rules

// argocdRules are the Argo CD rules (SPEC §5.4).
var argocdRules = []Rule{}
