package rules

// liveRules are the ids of the live rules of `kubectl gate status` (SPEC
// §5.7). Their checks run against a cluster, in internal/live; they are
// registered here with a nil Check, which the engine skips, so config,
// output and docs know them.
var liveRules = []Rule{
	{
		ID: "live-revision", Default: SeverityError, Family: "live",
		Doc:    "`status`: the Application's synced revision (status.sync.revision, or one of status.sync.revisions) is not the expected commit (--revision SHA, or the HEAD of --git DIR), or Argo CD reports it OutOfSync",
		Outage: "the green light is for an older commit: the fix that was merged is not what runs",
	},
	{
		ID: "live-images", Default: SeverityError, Family: "live",
		Doc:    "`status`: pods of the Application's workloads run an image that is not expected (the -k render, else status.summary.images), or an expected image runs in no pod; digests are compared when both sides have one",
		Outage: "Synced, yet pods still run the old image (a moved tag, a stuck rollout, a manual `kubectl set image`)",
	},
	{
		ID: "live-resource-count", Default: SeverityError, Family: "live",
		Doc:    "`status`: the Application manages 0 objects or a different number than the -k render holds (local config excluded), or lists a managed object that does not exist",
		Outage: "an empty or wrong source syncs green: nothing to diff, nothing deployed",
	},
	{
		ID: "live-health", Default: SeverityError, Family: "live",
		Doc:    "`status`: a managed object exists but its controller rejected it or has not caught up: Rollout Degraded, InvalidSpec or aborted; Certificate or ExternalSecret Ready=False; any Ready/Available=False or ProgressDeadlineExceeded; status.observedGeneration < metadata.generation",
		Outage: "applied is not working: a Rollout aborted, a certificate never issued, a secret never synced",
	},
}
