package nicrss

// refParse is a straightforward reference of the device's parse, written
// apart from Parse for the fuzzer and the corpus tests to compare with: one
// function, plain offsets, the rules of docs/nic-rss.md read top to bottom.
func refParse(c ParseConfig, f []byte) (Tuple, bool) {
	var t Tuple
	q72 := c.Quirks&QuirkQEMU72 != 0
	have := func(off, n int) bool { return off >= 0 && off+n <= len(f) }
	u16 := func(off int) uint16 { return uint16(f[off])<<8 | uint16(f[off+1]) }
	if !have(0, 14) {
		return t, false
	}
	et, off := u16(12), 14
	if et == 0x8100 || et == 0x88a8 {
		if !have(off, 4) {
			return t, false
		}
		outer := et
		et, off = u16(off+2), off+4
		if outer == 0x88a8 && et == 0x8100 {
			if !have(off, 4) {
				return t, false
			}
			et, off = u16(off+2), off+4
		}
	}
	type ipInfo struct {
		ok, v6, frag, broken, stale bool
		src, dst, exS, exD          [16]byte
		hasS, hasD                  bool
		proto                       int
		l4                          int
	}
	readIP := func(off int, et uint16) ipInfo {
		var r ipInfo
		if et == 0x0800 {
			if !have(off, 20) {
				if q72 && off <= len(f) {
					return ipInfo{ok: true, stale: true, broken: true}
				}
				return r
			}
			if f[off]>>4 != 4 {
				if !q72 {
					return r
				}
				r.broken = true
			}
			r.ok = true
			copy(r.src[:], f[off+12:off+16])
			copy(r.dst[:], f[off+16:off+20])
			r.proto = int(f[off+9])
			r.frag = u16(off+6)&0x3fff != 0
			ihl := int(f[off]&15) * 4
			r.l4 = off + ihl
			if ihl < 20 && !q72 {
				r.broken = true
			}
			return r
		}
		if et != 0x86dd || !have(off, 40) {
			return r
		}
		r.ok, r.v6 = true, true
		copy(r.src[:], f[off+8:off+24])
		copy(r.dst[:], f[off+24:off+40])
		next, p := int(f[off+6]), off+40
		for next == 0 || next == 43 || next == 44 || next == 51 || next == 60 || next == 135 {
			if !have(p, 2) {
				if !q72 {
					return ipInfo{}
				}
				r.broken = true
				break
			}
			n := (int(f[p+1]) + 1) * 8
			switch next {
			case 43:
				if have(p, 8) && f[p+1] == 2 {
					r.hasD = false
					if f[p+2] == 2 && f[p+3] == 1 && have(p+8, 16) {
						copy(r.exD[:], f[p+8:p+24])
						r.hasD = true
					}
				}
			case 60:
				r.hasS = false
				for o, left := p+2, n-2; left > 2; {
					if !have(o, 2) {
						break
					}
					l := int(f[o+1]) + 2
					if f[o] == 0 {
						l = 1
					}
					if l > left {
						break
					}
					if f[o] == 0xc9 {
						if have(o+2, 16) {
							copy(r.exS[:], f[o+2:o+18])
							r.hasS = true
						}
						break
					}
					o, left = o+l, left-l
				}
			case 44:
				r.frag = true
			}
			next, p = int(f[p]), p+n
		}
		r.proto, r.l4 = next, p
		return r
	}
	ip := readIP(off, et)
	if !ip.ok {
		return t, false
	}
	if c.Level == LevelInner && !ip.frag && !ip.broken {
		inner, p := uint16(0), ip.l4
		switch ip.proto {
		case 4:
			inner = 0x0800
		case 41:
			inner = 0x86dd
		case 47:
			if have(p, 4) && u16(p)&0x4007 == 0 && (u16(p+2) == 0x0800 || u16(p+2) == 0x86dd) {
				fl := u16(p)
				inner, p = u16(p+2), p+4
				for _, b := range []uint16{0x8000, 0x2000, 0x1000} {
					if fl&b != 0 {
						p += 4
					}
				}
			}
		}
		if inner != 0 {
			if in := readIP(p, inner); in.ok {
				ip = in
			}
		}
	}
	tcp := ip.proto == 6 && !ip.broken
	udp := ip.proto == 17 && !ip.broken
	if ip.frag {
		tcp, udp = false, false
	} else if !ip.broken {
		tcp = tcp && have(ip.l4, 20)
		udp = udp && have(ip.l4, 8)
	}
	if ip.stale {
		if c.Types&TypeIPv4 == 0 {
			return t, false
		}
		return Tuple{Report: ReportIPv4, Stale: true}, true
	}
	ty := c.Types
	ex := false
	switch {
	case !ip.v6 && tcp && ty&TypeTCPv4 != 0:
		t.Report = ReportTCPv4
	case !ip.v6 && udp && ty&TypeUDPv4 != 0:
		t.Report = ReportUDPv4
	case !ip.v6 && ty&TypeIPv4 != 0:
		t.Report = ReportIPv4
	case !ip.v6:
		return t, false
	case tcp && ty&TypeTCPv6Ex != 0:
		t.Report, ex = ReportTCPv6Ex, true
	case tcp && ty&TypeTCPv6 != 0:
		t.Report = ReportTCPv6
	case udp && ty&TypeUDPv6Ex != 0:
		t.Report, ex = ReportUDPv6Ex, true
	case udp && ty&TypeUDPv6 != 0:
		t.Report = ReportUDPv6
	case ty&TypeIPv6Ex != 0:
		t.Report, ex = ReportIPv6Ex, true
	case ty&TypeIPv6 != 0:
		t.Report = ReportIPv6
	default:
		return t, false
	}
	t.Src, t.Dst = ip.src, ip.dst
	if ex && ip.hasS {
		t.Src = ip.exS
	}
	if ex && ip.hasD {
		t.Dst = ip.exD
	}
	if t.Report.HasPorts() {
		t.Sport, t.Dport = u16(ip.l4), u16(ip.l4+2)
	}
	return t, true
}
