package virtiolab

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Environment variables that override the kernel the lab boots and where it
// keeps it.
const (
	// EnvKernelPackage names the package to boot (such as
	// linux-image-6.12.117+deb12-cloud-amd64-unsigned) instead of the newest
	// of the series.
	EnvKernelPackage = "XDPHASH_GUEST_KERNEL"
	// EnvCache is the directory the packages are kept in.
	EnvCache = "XDPHASH_GUEST_CACHE"
)

// Kernel is a guest kernel unpacked in the cache.
type Kernel struct {
	Package string // the Debian package
	Release string // its uname -r
	Root    string // where it is unpacked
	Vmlinuz string // the kernel image
}

// CacheDir is where guest kernels are kept: $XDPHASH_GUEST_CACHE, else
// $XDG_CACHE_HOME/xdphash/guest, else /var/cache/xdphash/guest for root
// and ~/.cache/xdphash/guest for anyone else.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "xdphash", "guest"), nil
	}
	if os.Geteuid() == 0 {
		return "/var/cache/xdphash/guest", nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("guest kernel cache: %w", err)
	}
	return filepath.Join(d, "xdphash", "guest"), nil
}

// packageName is the name pattern of Debian's cloud kernel packages of a
// series: linux-image-6.12.117+deb12-cloud-amd64-unsigned,
// linux-image-6.1.0-57-cloud-amd64-unsigned.
func packagePattern(series string) *regexp.Regexp {
	return regexp.MustCompile(`^linux-image-` + regexp.QuoteMeta(series) + `[.-][0-9][0-9a-z.+~-]*-cloud-amd64-unsigned$`)
}

// FetchKernel finds the guest kernel of series (DefaultSeries when empty)
// in the cache, or fetches it: the newest package of the series that
// apt-cache lists (or the one EnvKernelPackage names), downloaded with
// `apt-get download` and unpacked with `dpkg-deb -x`, never installed.
func FetchKernel(series string) (Kernel, error) {
	if series == "" {
		series = DefaultSeries
	}
	cache, err := CacheDir()
	if err != nil {
		return Kernel{}, err
	}
	pkg := os.Getenv(EnvKernelPackage)
	if pkg == "" {
		if pkg, err = newestPackage(series, cache); err != nil {
			return Kernel{}, err
		}
	}
	root := filepath.Join(cache, pkg)
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		if err := download(pkg, cache, root); err != nil {
			return Kernel{}, err
		}
	}
	return openKernel(pkg, root)
}

// newestPackage is the newest package of series apt-cache lists; without
// apt (or an index), the newest one the cache holds.
func newestPackage(series, cache string) (string, error) {
	pat := packagePattern(series)
	var names []string
	out, aptErr := exec.Command("apt-cache", "search", "--names-only", "^linux-image-.*-cloud-amd64-unsigned$").Output()
	if aptErr == nil {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			name, _, _ := strings.Cut(sc.Text(), " ")
			if pat.MatchString(name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		entries, _ := os.ReadDir(cache)
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(cache, e.Name(), ".complete")); err == nil && pat.MatchString(e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("guest kernel %s: no package linux-image-%s.*-cloud-amd64-unsigned in apt's index (%v) nor in %s (hint: apt-get update; or name one with %s)", series, series, aptErr, cache, EnvKernelPackage)
	}
	slices.SortFunc(names, comparePackages)
	return names[len(names)-1], nil
}

// comparePackages orders package names by the numbers in them, in turn.
func comparePackages(a, b string) int {
	na, nb := numbers(a), numbers(b)
	for i := range min(len(na), len(nb)) {
		if na[i] != nb[i] {
			return na[i] - nb[i]
		}
	}
	return len(na) - len(nb)
}

var digits = regexp.MustCompile(`[0-9]+`)

func numbers(s string) []int {
	var out []int
	for _, d := range digits.FindAllString(s, -1) {
		n, _ := strconv.Atoi(d)
		out = append(out, n)
	}
	return out
}

// download fetches pkg into cache and unpacks it to root.
func download(pkg, cache, root string) error {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return fmt.Errorf("guest kernel cache: %w", err)
	}
	dl := exec.Command("apt-get", "download", pkg)
	dl.Dir = cache
	if out, err := dl.CombinedOutput(); err != nil {
		return fmt.Errorf("download guest kernel %s: apt-get download: %w: %s", pkg, err, tail(out, 400))
	}
	debs, _ := filepath.Glob(filepath.Join(cache, pkg+"_*.deb"))
	if len(debs) == 0 {
		return fmt.Errorf("download guest kernel %s: apt-get download left no %s_*.deb in %s", pkg, pkg, cache)
	}
	tmp := root + ".tmp"
	os.RemoveAll(tmp)
	if out, err := exec.Command("dpkg-deb", "-x", debs[0], tmp).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("unpack guest kernel %s: dpkg-deb -x: %w: %s", pkg, err, tail(out, 400))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	os.RemoveAll(root)
	if err := os.Rename(tmp, root); err != nil {
		return fmt.Errorf("unpack guest kernel %s: %w", pkg, err)
	}
	for _, d := range debs {
		os.Remove(d)
	}
	return nil
}

func openKernel(pkg, root string) (Kernel, error) {
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(images) != 1 {
		return Kernel{}, fmt.Errorf("guest kernel %s: want one boot/vmlinuz-* in %s, found %d", pkg, root, len(images))
	}
	release := strings.TrimPrefix(filepath.Base(images[0]), "vmlinuz-")
	if _, err := os.Stat(filepath.Join(root, "lib", "modules", release, "modules.order")); err != nil {
		return Kernel{}, fmt.Errorf("guest kernel %s: %w", pkg, err)
	}
	return Kernel{Package: pkg, Release: release, Root: root, Vmlinuz: images[0]}, nil
}

// Modules returns the files of the named modules and of what they depend
// on, in load order (dependencies first); a module built into the kernel
// needs no file and is left out. The package ships no modules.dep
// (depmod makes it at install time, and the lab installs nothing): the
// modules come from modules.order and their dependencies from each
// module's own .modinfo (depends=), read through xz for a .ko.xz.
func (k Kernel) Modules(names ...string) ([]string, error) {
	dir := filepath.Join(k.Root, "lib", "modules", k.Release)
	b, err := os.ReadFile(filepath.Join(dir, "modules.order"))
	if err != nil {
		return nil, fmt.Errorf("guest kernel modules: %w", err)
	}
	byName := map[string]string{}
	for _, line := range strings.Fields(string(b)) {
		byName[moduleName(line)] = line
	}
	builtin := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, line := range strings.Fields(string(b)) {
			builtin[moduleName(line)] = true
		}
	}
	var order []string
	seen := map[string]bool{}
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		if seen[name] {
			return nil
		}
		if len(chain) > 16 {
			return fmt.Errorf("guest kernel %s: module dependencies deeper than 16: %s", k.Release, strings.Join(chain, " -> "))
		}
		rel, ok := byName[name]
		if !ok && builtin[name] {
			return nil
		}
		if !ok {
			return fmt.Errorf("guest kernel %s has no module %s (built in?)", k.Release, name)
		}
		file := filepath.Join(dir, rel)
		if _, err := os.Stat(file + ".xz"); err == nil {
			file += ".xz"
		}
		deps, err := moduleDepends(file)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, append(chain, name)); err != nil {
				return err
			}
		}
		seen[name] = true
		order = append(order, file)
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleDepends reads the depends= entry of a module's .modinfo.
func moduleDepends(file string) ([]string, error) {
	var raw []byte
	var err error
	if strings.HasSuffix(file, ".xz") {
		raw, err = exec.Command("xz", "-dc", file).Output()
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", file, err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", file, err)
	}
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("read module %s: no .modinfo", file)
	}
	info, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", file, err)
	}
	for _, kv := range bytes.Split(info, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			var out []string
			for _, d := range strings.Split(string(v), ",") {
				if d != "" {
					out = append(out, strings.ReplaceAll(d, "-", "_"))
				}
			}
			return out, nil
		}
	}
	return nil, nil
}

// moduleName is the module's name from its file: kernel/net/core/failover.ko.xz
// is failover.
func moduleName(file string) string {
	n, _, _ := strings.Cut(filepath.Base(file), ".ko")
	return strings.ReplaceAll(n, "-", "_")
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
