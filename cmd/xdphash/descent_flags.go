package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/xdphash/xdphash/dissect"
)

// descentFlags are --descend, --fou-port and --gue-port: the opt-in UDP
// tunnel descent policy (dissect.Descent), off by default.
type descentFlags struct {
	tunnels dissect.Tunnels
	ports   []dissect.EncapPort
	p       dissect.Descent // the policy, once resolve has read the flags
}

// resolve reads the flags into p.
func (d *descentFlags) resolve() error {
	p, err := d.policy()
	d.p = p
	return err
}

// register adds the flags to f.
func (d *descentFlags) register(f *pflag.FlagSet) {
	f.Var((*tunnelsFlag)(&d.tunnels), "descend", "descend into these UDP tunnels' inner flows (opt-in policy of the kernel series, changes hashes): vxlan,geneve,gtpu,gue,fou, all or none")
	f.Var(&encapPortFlag{ports: &d.ports}, "fou-port", "FOU table: direct FOU on UDP port PORT carrying ipip or ipv6 (repeatable)")
	f.Var(&encapPortFlag{ports: &d.ports, gue: true}, "gue-port", "FOU table: GUE on UDP port PORT (repeatable)")
}

// policy is the Descent the flags ask for.
func (d *descentFlags) policy() (dissect.Descent, error) {
	p, err := dissect.NewDescent(d.tunnels, d.ports...)
	if err != nil {
		return dissect.Descent{}, fmt.Errorf("--descend: %w", err)
	}
	return p, nil
}

type tunnelsFlag dissect.Tunnels

func (f *tunnelsFlag) Set(s string) error {
	ts, err := dissect.ParseTunnels(s)
	if err != nil {
		return err
	}
	*f = tunnelsFlag(ts)
	return nil
}

func (f *tunnelsFlag) String() string { return dissect.Tunnels(*f).String() }
func (f *tunnelsFlag) Type() string   { return "LIST|all|none" }

type encapPortFlag struct {
	ports *[]dissect.EncapPort
	gue   bool
}

func (f *encapPortFlag) Set(s string) error {
	parse := dissect.ParseFOUPort
	if f.gue {
		parse = dissect.ParseGUEPort
	}
	e, err := parse(s)
	if err != nil {
		return err
	}
	*f.ports = append(*f.ports, e)
	return nil
}

func (f *encapPortFlag) String() string {
	var s string
	for _, p := range *f.ports {
		if p.GUE == f.gue {
			if s != "" {
				s += ","
			}
			s += p.String()
		}
	}
	return s
}

func (f *encapPortFlag) Type() string {
	if f.gue {
		return "PORT"
	}
	return "PORT:ipip|ipv6"
}
