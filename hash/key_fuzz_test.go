package hash

import "testing"

// FuzzParseKey: a key string either fails with an error or reads back from
// the key's String as the same key.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"000102030405060708090a0b0c0d0e0f", "00:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f", "xyz", "", "0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		back, err := ParseKey(k.String())
		if err != nil || back != k {
			t.Fatalf("ParseKey(%q) = %v, whose String %q reads back as %v, %v", s, k, k.String(), back, err)
		}
	})
}
