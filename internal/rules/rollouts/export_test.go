package rollouts

// NarrowerTexts are the parts of the controller's messages that
// rollout-invalid-spec leaves to a narrower rule, for the test that keeps
// them equal to the controller's own constants.
func NarrowerTexts() []string {
	out := make([]string, len(narrower))
	for i, n := range narrower {
		out[i] = n.text
	}
	return out
}
