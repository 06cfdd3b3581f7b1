package virtiolab

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdphash/xdphash/internal/virtiolab/cpio"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
)

// guestModules are the modules the guest's virtio-net device needs:
// Kernel.Modules adds what they depend on (failover, net_failover; on 6.1
// virtio and virtio_ring too) and leaves out what the kernel has built in
// (6.12 has virtio_pci built in, 6.1 has it as a module).
var guestModules = []string{"virtio_pci", "virtio_net"}

// writeInitramfs writes the guest's initramfs to path: binary as /init with
// the shared libraries it needs, the modules, and cfg.
func writeInitramfs(path, binary string, k Kernel, cfg guest.Config) error {
	mods, err := k.Modules(guestModules...)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	defer f.Close()
	w := cpio.NewWriter(f)
	dirs := map[string]bool{}
	mkdirs := func(name string) {
		var parts []string
		for d := filepath.Dir(name); d != "." && d != "/"; d = filepath.Dir(d) {
			parts = append(parts, d)
		}
		for i := len(parts) - 1; i >= 0; i-- {
			if !dirs[parts[i]] {
				dirs[parts[i]] = true
				w.Dir(parts[i], 0o755)
			}
		}
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "lib/modules"} {
		mkdirs(d + "/x")
	}
	// The kernel opens /dev/console for /init's standard streams before
	// /init mounts devtmpfs over /dev.
	w.CharDev("dev/console", 0o600, 5, 1)
	addFile := func(name string, src string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("write initramfs: %w", err)
		}
		name = strings.TrimPrefix(name, "/")
		mkdirs(name)
		return w.File(name, 0o755, b)
	}
	if err := addFile(guest.InitPath, binary); err != nil {
		return err
	}
	libs, err := sharedLibraries(binary)
	if err != nil {
		return err
	}
	for _, l := range libs {
		real, err := filepath.EvalSymlinks(l)
		if err != nil {
			return fmt.Errorf("write initramfs: %w", err)
		}
		if err := addFile(l, real); err != nil {
			return err
		}
	}
	for _, m := range mods {
		name := "lib/modules/" + filepath.Base(m)
		if err := addFile(name, m); err != nil {
			return err
		}
		cfg.Modules = append(cfg.Modules, "/"+name)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	name := strings.TrimPrefix(guest.ConfigPath, "/")
	mkdirs(name)
	w.File(name, 0o644, b)
	if err := w.Close(); err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	return f.Close()
}

// libDirs are where the dynamic linker looks on Debian amd64, after the
// binary's own run paths.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// sharedLibraries lists what a dynamically linked executable needs to run
// in a guest without the host's file system: its ELF interpreter and every
// DT_NEEDED library, transitively, as absolute paths. A static executable
// needs none.
func sharedLibraries(binary string) ([]string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", binary, err)
	}
	defer f.Close()
	var out []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("read the interpreter of %s: %w", binary, err)
			}
			out = append(out, strings.TrimRight(string(b), "\x00"))
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var walk func(file *elf.File, who string) error
	walk = func(file *elf.File, who string) error {
		needed, err := file.DynString(elf.DT_NEEDED)
		if err != nil {
			return fmt.Errorf("read the libraries %s needs: %w", who, err)
		}
		for _, n := range needed {
			if seen[n] {
				continue
			}
			seen[n] = true
			path := ""
			for _, d := range libDirs {
				if _, err := os.Stat(filepath.Join(d, n)); err == nil {
					path = filepath.Join(d, n)
					break
				}
			}
			if path == "" {
				return fmt.Errorf("%s needs %s, found in none of %s", who, n, strings.Join(libDirs, ", "))
			}
			out = append(out, path)
			lib, err := elf.Open(path)
			if err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			err = walk(lib, path)
			lib.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(f, binary); err != nil {
		return nil, err
	}
	return out, nil
}
