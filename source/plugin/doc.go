// Package plugin reads Claude Code plugins, marketplaces and Agent Skills
// from disk and turns each agent, command and skill into a card.
//
// # Layout
//
// [Scan] walks a root and finds what it holds, in the shapes real
// repositories use:
//
//   - plugins: a folder with .claude-plugin/plugin.json (only "name" is
//     required; "agents" and "commands" may list extra files that
//     supplement the default agents/ and commands/ folders);
//   - marketplaces: .claude-plugin/marketplace.json, whose entries point
//     at local folders ("./plugins/x", "./", ".") or remote repositories
//     (reported, not fetched); a local entry without plugin.json is still
//     a plugin, as Claude Code treats it;
//   - a folder with agents/*.md (and commands/) but no manifest: a plugin
//     named after the folder, with a warning; a folder with only
//     commands/ and no manifest is reported as skipped, with the reason;
//   - agents/*.md, commands/**/*.md (subfolders are namespaces) and
//     skills/<name>/SKILL.md inside a plugin;
//   - loose agents, commands and skills outside any plugin (a .claude
//     folder, a skills folder).
//
// Decoys are left alone: a .codex-plugin/plugin.json is another harness's
// manifest, and an agents/ folder inside a skill is not a plugin's.
//
// # Cards
//
// [Build] turns one file into a card: named plugin:name (the frontmatter
// name, else the file name), kind agent, command or skill, with the
// plugin's metadata and keywords in Meta and Tags for routing. A skill's
// body is not loaded: only its path and size are kept. Frontmatter is read
// by package frontmatter, leniently.
//
// # Problems
//
// Nothing here panics or stops on a bad file. Each file left out or
// repaired is reported as a [Problem] with its path, line when known, and
// the reason, and the rest still loads.
package plugin
