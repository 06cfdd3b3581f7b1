package main

import (
	"time"

	"github.com/xdphash/xdphash/internal/output"
	"github.com/xdphash/xdphash/soak"
)

// claimOut gives the soak a directory for its reports that holds no other
// run's: without --out a fresh xdphash-soak-<time> (with a -2, -3, ...
// suffix when another soak took that name in the same second); a given
// --out that already holds a soak's reports is refused. It returns the
// function that removes what it made while the soak wrote nothing.
func (o *soakOptions) claimOut() (undo func(), err error) {
	if o.out == "" {
		dir, undo, err := output.NewDir("xdphash-soak-" + time.Now().Format("20060102-150405"))
		if err != nil {
			return nil, err
		}
		o.out = dir
		return undo, nil
	}
	return output.ClaimDir(o.out, soak.FileChecks, soak.FileRun, soak.FileReportText, soak.FileReportHTML, soak.FileSearch)
}
