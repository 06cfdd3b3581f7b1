package virtiolab

import (
	"slices"
	"testing"
)

func TestNewestPackageOfSeries(t *testing.T) {
	names := []string{
		"linux-image-6.1.0-47-cloud-amd64-unsigned", "linux-image-6.1.0-57-cloud-amd64-unsigned",
		"linux-image-6.1.0-9-cloud-amd64-unsigned",
		"linux-image-6.12.107+deb12-cloud-amd64-unsigned", "linux-image-6.12.117+deb12-cloud-amd64-unsigned",
		"linux-image-6.12.99+deb12-cloud-amd64-unsigned", "linux-image-6.12.117+deb12-amd64-unsigned",
	}
	for series, want := range map[string]string{
		"6.1":  "linux-image-6.1.0-57-cloud-amd64-unsigned",
		"6.12": "linux-image-6.12.117+deb12-cloud-amd64-unsigned",
	} {
		var of []string
		for _, n := range names {
			if packagePattern(series).MatchString(n) {
				of = append(of, n)
			}
		}
		slices.SortFunc(of, comparePackages)
		if len(of) == 0 || of[len(of)-1] != want {
			t.Errorf("series %s: packages %v, newest last; want %s newest", series, of, want)
		}
		for _, n := range of {
			if n == "linux-image-6.12.117+deb12-amd64-unsigned" {
				t.Errorf("series %s took the non-cloud package %s", series, n)
			}
		}
	}
}
