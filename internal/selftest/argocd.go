package selftest

// argocdMutants break Argo CD Applications so the argocd rules must fire.
var argocdMutants = []Mutant{}
