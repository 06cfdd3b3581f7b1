package report

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// chromium returns the path of the Chromium binary. It skips the test when
// there is none, unless CI=true, where a missing browser is a failure
// (xdptest.Unavailable): CI installs it (Debian package chromium).
func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	xdptest.Unavailable(tb, "chromium is not installed (hint: apt-get install -y chromium)")
	return ""
}

// TestHTMLInBrowser opens the HTML report of a simulated run in headless
// Chromium, offline, and checks its screenshot: not blank, and with the
// charts' bars drawn.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, simulatedRun(t, 300, 2, 4, time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,2000", "file://"+page)
	// Chromium starts helper processes: on a timeout, kill them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	r, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer r.Close()
	img, err := png.Decode(r)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1200 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1200×2000", b)
	}
	colours := map[[3]uint32]bool{}
	nonWhite, bars := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			c := [3]uint32{r >> 8, g >> 8, b >> 8}
			colours[c] = true
			if c != [3]uint32{255, 255, 255} {
				nonWhite++
			}
			if near8(c, barColor.R, barColor.G, barColor.B) {
				bars++
			}
		}
	}
	total := b.Dx() * b.Dy()
	t.Logf("%d colours, %.1f%% not white, %.2f%% bar colour", len(colours), 100*float64(nonWhite)/float64(total), 100*float64(bars)/float64(total))
	if len(colours) < 50 || nonWhite < total/50 {
		t.Errorf("the page looks blank: %d colours, %d of %d pixels not white", len(colours), nonWhite, total)
	}
	if bars < total/200 {
		t.Errorf("%d pixels of the bars' colour: the charts are not drawn", bars)
	}
}

func near8(c [3]uint32, r, g, b uint8) bool {
	d := func(a uint32, b uint8) bool { return a+6 >= uint32(b) && a <= uint32(b)+6 }
	return d(c[0], r) && d(c[1], g) && d(c[2], b)
}
