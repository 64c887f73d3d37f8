package resolve

import (
	"context"
	"sync"
)

// memo answers each key once for its lifetime. Concurrent asks for a key
// share one look-up (like singleflight), and later asks get the kept
// answer. Answers that depend on the asker's deadline (timeouts,
// cancellations) are not kept: the next asker looks again.
type memo struct {
	mu      sync.Mutex
	flights map[string]*flight
}

type flight struct {
	done   chan struct{}
	digest string
	err    error
}

func newMemo() *memo { return &memo{flights: map[string]*flight{}} }

// do returns the answer for key, running fn only if no answer is kept or
// under way. shared reports that the answer came from another ask.
func (m *memo) do(ctx context.Context, key string, fn func(context.Context) (string, error)) (digest string, shared bool, err error) {
	for {
		f, owner := m.join(key)
		if owner {
			m.run(ctx, key, f, fn)
			return f.digest, false, f.err
		}
		select {
		case <-f.done:
			if memoizable(f.err) || ctx.Err() != nil {
				return f.digest, true, f.err
			}
			// The owner ran out of time, but this asker has some left.
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
	}
}

// join returns the flight for key, creating it (owner) if there is none.
func (m *memo) join(key string) (f *flight, owner bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.flights[key]; ok {
		return f, false
	}
	f = &flight{done: make(chan struct{})}
	m.flights[key] = f
	return f, true
}

func (m *memo) run(ctx context.Context, key string, f *flight, fn func(context.Context) (string, error)) {
	defer close(f.done)
	f.digest, f.err = fn(ctx)
	if memoizable(f.err) {
		return
	}
	m.mu.Lock()
	delete(m.flights, key)
	m.mu.Unlock()
}
