// Package cursor is feedd's sealed cursors: a position in a feed or a list
// ([Cursor]), handed to clients only sealed by a [Sealer], and opened back.
// It knows nothing of Redis: feedcore keeps the key (configured, or shared
// by the replicas in Redis: read_cursorkey.go).
//
// The invariants:
//
//   - A cursor is sealed with the viewer it was minted for and, for a
//     list, with the list's kind ([ListKind]) and owner, and it opens
//     nothing else: [Sealer.Open] and [Sealer.OpenAny] refuse another
//     viewer's, Open refuses a list's (it opens the feeds'), and the
//     caller of OpenAny compares the kind and owner with those of the list
//     it pages (feedcore's list_page.go).
//   - Sealed is base64url, unpadded, of a compact binary form followed by
//     the first [MacLen] bytes of its HMAC-SHA256 under the key (at least
//     16 bytes), so a cursor can be neither forged nor altered.
//   - Each cursor has one spelling: only the string Seal writes opens, and
//     a respelling of it (spare bits, padding, another alphabet) does not.
//   - Every failure to open is INVALID_CURSOR: the client should restart
//     from the top.
//   - What is sealed stays readable: a feed's cursor keeps the spelling
//     it had before lists existed (version 1), a list's is version 2, and
//     a ListKind's value is never renumbered.
//
// A Sealer is safe for concurrent use; it keeps keyed HMAC states and
// buffers for reuse, so a page that seals a cursor per edge does not hash
// the key again for each.
package cursor
