package selftest

// rolloutMutants break Argo Rollouts so the rollout rules must fire.
var rolloutMutants = []Mutant{}
