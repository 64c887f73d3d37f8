// Package rollouts holds the Argo Rollouts rules. Each is judged as the
// Argo Rollouts v1.10 controller sees the Rollout; where a rule is narrower
// or wider than a first reading of the strategy would suggest, its Doc says
// so and its check function's comment says why, citing the controller.
package rollouts
