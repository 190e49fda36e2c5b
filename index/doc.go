// Package index is the on-disk card index: it remembers what every source
// held so a later run starts in milliseconds and reads only what changed,
// and it pins the digests of MCP tools so a tool whose description or
// schema changes behind the user's back is held until approved.
//
// # Using it
//
//	res, ix, err := index.Load(ctx, dir, nil, srcOpts)
//	// res.Catalog: every card; res.Held: changed MCP tools, left out
//	for _, ch := range ix.Changed() { fmt.Println(ch.Name, ch.Diff) }
//	ix.Approve("github__create_issue") // or ix.ApproveAll()
//
// # The index file
//
// dir/index.bin holds a header (a magic line, the format [Version], the
// payload length and its SHA-256) and a compact binary payload (see codec.go): one entry per source
// with its cards, report, [source.Stamp] and the SHA-256 of each file it
// was read from. [Open] validates it and starts empty, saying why in
// [Index.Status], when it is missing, empty, truncated, garbage, of
// another version or fails its checksum. Writes go to a temporary file in
// the same folder, are synced, then renamed over the old file: a writer
// killed at any moment leaves the old index or the new one, never a mix.
//
// # Staleness
//
// A stored source is reused when its stamp still matches: the same files
// with the same sizes and modification times and the same configuration.
// A file whose time changed but whose content hashes the same still
// matches ([Options.VerifyContent] hashes every file, catching edits that
// kept the time). New or removed files change the stamp. MCP server
// listings are reused for [Options.MaxAge]. [Options.Refresh] reads
// everything again. A failed MCP server is asked again on the next run,
// unless [Options.FailMemory] is set: then, for that long and while its
// definition is unchanged, the failure itself is reused
// (Info.RetryAfter says until when), so a broken server does not cost
// its timeout on every run.
//
// # Tool files named directly
//
// [LoadToolFiles] is the same idea for the tool files a command names
// itself (capbroker select --tools FILE): the cards of a set of paths
// that loaded without a problem are kept in dir/toolfiles-<key>.bin with
// each file's type, size and modification time (for a folder, each tool
// file directly inside it), and reused while those all match, so a
// one-shot command decodes the cards instead of parsing JSON and
// canonicalizing schemas. A changed, added or removed file is read
// again; files with problems are read every time.
//
// # Pinned digests
//
// dir/pins.json remembers, for each MCP tool (server and tool name), the
// card digest last approved, with its description and schema. A tool
// seen for the first time is pinned as it is. A tool whose digest differs
// from its pin is held back: it is not in the catalog, [Index.Changed]
// lists it with a line diff, and [Index.Approve] or [Index.ApproveAll]
// accepts it. Losing the file approves nothing: when pins.json is
// missing but dir/pins.created (written with the first pins) says it held
// approvals, it was deleted; when it cannot be parsed, it is moved aside
// (pins.json.corrupt-<time>); when it cannot be read, it is left alone.
// In each case every MCP tool is held until approved again, Open does not
// fail, and each held card's Meta[HeldMeta] says what happened, naming the
// file and the commands that release it ("capbroker approve --list", then
// "capbroker approve --all"). With [Options.HoldNew], a tool seen for the
// first time (a renamed tool too) is held the same way instead of pinned.
package index
