// Package gate is the engine both shells call: it takes rendered resources
// and a configuration, resolves images when asked (through a Resolver it is
// given), runs every enabled rule and returns a Report.
//
//	report, err := gate.Run(ctx, resources, gate.Options{Config: cfg}, gate.Deps{})
//
// An error from Run means the gate could not evaluate at all; findings,
// including "could not resolve this image", are data in the Report.
package gate
