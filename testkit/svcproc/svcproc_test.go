package svcproc

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	dir := t.TempDir()
	// A shell that forks a sleep: both are in the group Stop ends.
	cmd := exec.Command("/bin/sh", "-c", "echo started; sleep 60 & wait")
	cmd.Env = Env(dir, dir)
	p, err := Start(cmd, filepath.Join(dir, "sh.log"))
	if err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.ReadLog(), "started") {
		if time.Now().After(deadline) {
			t.Fatalf("no output in the log: %q", p.ReadLog())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if exited, err := p.Exited(); exited {
		t.Fatalf("exited early: %v", err)
	}
	if err := p.Stop(syscall.SIGTERM, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if exited, _ := p.Exited(); !exited {
		t.Fatal("not exited after Stop")
	}
	// The group's last members may linger a moment as zombies until
	// their new parent reaps them.
	deadline = time.Now().Add(10 * time.Second)
	for err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH); err = syscall.Kill(-pgid, 0) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still there: %v", pgid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A second Stop finds nothing to do.
	if err := p.Stop(syscall.SIGTERM, time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("/bin/sh", "-c", "trap '' INT; echo ready; sleep 60")
	p, err := Start(cmd, filepath.Join(dir, "sh.log"))
	if err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(p.ReadLog(), "ready") {
		time.Sleep(10 * time.Millisecond)
	}
	began := time.Now()
	if err := p.Stop(syscall.SIGINT, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if exited, err := p.Exited(); !exited || err == nil {
		t.Fatalf("exited %v, err %v: want killed", exited, err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("Stop took %s", d)
	}
}

func TestStartMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := Start(exec.Command(filepath.Join(dir, "missing")), filepath.Join(dir, "x.log")); err == nil {
		t.Fatal("started a missing binary")
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d not bindable: %v", port, err)
	}
	l.Close()
	// Below the ephemeral range, where no outgoing connection's local
	// port can take it between the choice and the service's bind.
	if _, low, ok := belowEphemeral(); ok && port >= low {
		t.Errorf("port %d is in the ephemeral range (from %d)", port, low)
	}
}

func TestEnv(t *testing.T) {
	got := strings.Join(Env("/h", "/h/tmp", "X=1"), " ")
	want := "PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/h LANG=C.UTF-8 TMPDIR=/h/tmp X=1"
	if got != want {
		t.Fatalf("Env = %q, want %q", got, want)
	}
}

func TestTail(t *testing.T) {
	if got := Tail("short", 10); got != "short" {
		t.Errorf("Tail(short) = %q", got)
	}
	if got := Tail("0123456789", 3); got != "…789" {
		t.Errorf("Tail = %q, want …789", got)
	}
	dir := t.TempDir()
	p := &Proc{Log: filepath.Join(dir, "log")}
	if err := os.WriteFile(p.Log, []byte("abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := p.LogTail(2); got != "…ef" {
		t.Errorf("LogTail = %q, want …ef", got)
	}
}
