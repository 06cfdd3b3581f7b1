package virtiolab

// DefaultSeries is the guest kernel series the lab boots unless told
// otherwise: Debian 12's backported 6.12. Series also lists 6.1, Debian 12's
// own kernel.
const DefaultSeries = "6.12"

// Series are the kernel series the lab knows how to boot.
var Series = []string{"6.12", "6.1"}
