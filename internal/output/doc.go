// Package output writes the files a command produces without destroying
// what it did not make.
//
// A File is checked before the long work it records and written when the
// work is done. A regular file (new, or replaced, also through a symlink,
// which stays) is written to a short-named temporary file in the same
// directory and renamed into place, so that a failed or interrupted write
// leaves the old file as it was. A character device or a FIFO is written
// through, never replaced. A directory, a socket or a dangling symlink is
// refused before the work starts.
//
// A Set refuses an output that is one of the command's inputs or another
// of its outputs: the same file by device and inode (through any link), or
// the same path when it does not exist yet.
//
// ClaimDir and NewDir give a command a directory of its own for several
// files: never one that holds another run's files.
package output
