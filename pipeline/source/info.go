package source

// Info describes synthetic traffic.
func (s *synthetic) Info() Info {
	return Info{Name: "synthetic:" + s.cfg.Name, Replay: s.cfg.Replay.String()}
}
