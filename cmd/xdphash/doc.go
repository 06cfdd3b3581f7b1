// Xdphash dissects, hashes and steers packets exactly as the Linux kernel does.
//
// Usage:
//
//	xdphash dissect [--format text|jsonl] [--hash-key HEX] CAPTURE
//
// Exit status: 0 on success, 1 when a command found what it checks for to
// diverge (verify), 2 for usage and runtime errors. Errors are printed to
// stderr as "xdphash: <error>"; logs go to stderr through log/slog.
package main
