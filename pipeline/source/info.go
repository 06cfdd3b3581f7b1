package source

// Info describes a capture replay.
func (s *pcapSource) Info() Info {
	return Info{Name: "pcap:" + s.name, Replay: s.cfg.Replay.String()}
}

// Info describes synthetic traffic.
func (s *synthetic) Info() Info {
	return Info{Name: "synthetic:" + s.cfg.Name, Replay: s.cfg.Replay.String()}
}
