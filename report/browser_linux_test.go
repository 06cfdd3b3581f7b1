package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestHTMLInBrowser opens the HTML report of a simulated run in headless
// Chromium, offline, and checks its screenshot: not blank, and with the
// charts' bars drawn.
func TestHTMLInBrowser(t *testing.T) {
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
	img := xdptest.Screenshot(t, page, "", 1200, 2000)
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
