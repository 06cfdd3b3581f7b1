package xdptest

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Chromium returns the path of the Chromium binary. It ends the test
// (Unavailable) when there is none: CI installs it (Debian package
// chromium).
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Unavailable(tb, "chromium is not installed (hint: apt-get install -y chromium)")
	return ""
}

// Screenshot opens page (a file; fragment, such as "#loss", scrolls to an
// element, "" shows the top) in headless Chromium, offline, with a window
// of w×h CSS pixels, and returns its screenshot. Chromium and its helper
// processes are killed if it takes over 90 seconds.
func Screenshot(tb testing.TB, page, fragment string, w, h int) image.Image {
	tb.Helper()
	bin := Chromium(tb)
	dir := tb.TempDir()
	shot := filepath.Join(dir, "shot.png")
	url := "file://" + page
	if fragment != "" {
		// Headless Chromium scrolls to a fragment but screenshots a blank
		// page; a frame of the window's size scrolled to it shows it.
		frame := filepath.Join(dir, "frame.html")
		html := fmt.Sprintf(`<!DOCTYPE html><html><body style="margin:0"><iframe src="%s" style="border:0;width:%dpx;height:%dpx"></iframe></body></html>`,
			url+fragment, w, h)
		if err := os.WriteFile(frame, []byte(html), 0o644); err != nil {
			tb.Fatal(err)
		}
		url = "file://" + frame
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h), url)
	// Chromium starts helper processes: on a timeout, kill them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("chromium: %v\n%s", err, out)
	}
	r, err := os.Open(shot)
	if err != nil {
		tb.Fatalf("no screenshot: %v", err)
	}
	defer r.Close()
	img, err := png.Decode(r)
	if err != nil {
		tb.Fatalf("decode screenshot: %v", err)
	}
	return img
}
