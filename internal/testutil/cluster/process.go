package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one child (etcd or kube-apiserver) whose output goes to a file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done is closed
}

func startProcess(name, bin, logPath string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log %s: %w", name, logPath, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process is gone, and how it ended.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM, waits up to grace, then kills. Safe on a nil process
// and on one that has already exited.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	if done, _ := p.exited(); done {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// failure describes why a process did not become ready, with its log tail.
func (p *process) failure(cause error) error {
	return fmt.Errorf("%s not ready: %w\n--- last lines of %s ---\n%s", p.name, cause, p.logPath, tail(p.logPath, 40))
}

// addrInUse reports whether the process log says a port was taken between
// freePorts and the bind (the only race in picking ports this way).
func (p *process) addrInUse() bool {
	b, _ := os.ReadFile(p.logPath)
	return bytes.Contains(b, []byte("address already in use"))
}

// waitReady polls check every 100 ms until it succeeds, the process exits or
// the timeout passes.
func (p *process) waitReady(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if done, werr := p.exited(); done {
			return p.failure(fmt.Errorf("exited early (%v); last check: %w", werr, err))
		}
		if time.Now().After(deadline) {
			return p.failure(fmt.Errorf("timed out after %s; last check: %w", timeout, err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1, holding all the
// listeners open together so no two of them are the same.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("listen on 127.0.0.1:0 for a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errNotReady is returned by readiness checks that got an answer, but not yes.
var errNotReady = errors.New("not ready yet")
