package supervise

// WithoutCrashPipe makes Run start the child as on Windows, with no
// descriptor beyond the standard three.
func WithoutCrashPipe() { crashPipe = false }
