package plugin

import (
	"encoding/json"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Problem is something found while scanning or loading that a person
// should know about: a file left out (Skipped) or repaired on the way.
type Problem struct {
	Path    string
	Line    int // 1-based, 0 when unknown
	Reason  string
	Skipped bool // the file or entry was left out; else it was read anyway
}

func (p Problem) String() string {
	loc := p.Path
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.Path, p.Line)
	}
	return loc + ": " + p.Reason
}

// Plugin is one Claude Code plugin found on disk, with the files its cards
// come from. It is defined by a .claude-plugin/plugin.json, or by a
// marketplace entry whose local folder has none.
type Plugin struct {
	Name         string
	Dir          string
	Manifest     *Manifest // nil when a marketplace entry defines the plugin
	ManifestPath string
	// Marketplace names the marketplace that lists the plugin, if any;
	// Entry is its entry there.
	Marketplace     string
	MarketplacePath string
	Entry           *Entry
	// Description, Version, Category and Keywords merge the manifest and
	// the marketplace entry (the manifest wins).
	Description string
	Version     string
	Category    string
	Keywords    []string

	AgentFiles   []string
	CommandFiles []Command
	SkillFiles   []string
	// MCPConfig is the plugin's MCP server file (.mcp.json, or the file
	// the manifest's mcpServers names); InlineMCP is an inline
	// mcpServers object from the manifest.
	MCPConfig string
	InlineMCP json.RawMessage

	defaultSkills bool // claims SKILL.md files under its skills/ folder
}

// Command is a command file and the name its place gives it: the path
// under commands/ without ".md", folders joined with ":" ("ns:deploy").
type Command struct {
	Path string
	Name string
}

// Files lists every file the plugin's cards are read from, sorted.
func (p *Plugin) Files() []string {
	var out []string
	if p.ManifestPath != "" {
		out = append(out, p.ManifestPath)
	}
	if p.MarketplacePath != "" {
		out = append(out, p.MarketplacePath)
	}
	out = append(out, p.AgentFiles...)
	for _, c := range p.CommandFiles {
		out = append(out, c.Path)
	}
	out = append(out, p.SkillFiles...)
	if p.MCPConfig != "" {
		out = append(out, p.MCPConfig)
	}
	sort.Strings(out)
	return dedupSorted(out)
}

// Loose is an agent, command or skill file that belongs to no plugin: a
// standalone Agent Skill, or a file in a .claude/agents or .claude/commands
// folder.
type Loose struct {
	Path string
	// Name is the name the file's place gives it (a command's ns:name);
	// the frontmatter name, when present, wins for agents and skills.
	Name string
}

// MarketplaceFile is a marketplace.json found on disk.
type MarketplaceFile struct {
	Path        string
	Root        string // the folder entries are relative to
	Marketplace *Marketplace
	// Local counts entries whose plugin folder exists here.
	Local int
}

// Layout is what a root holds.
type Layout struct {
	Root         string
	Plugins      []*Plugin
	Marketplaces []*MarketplaceFile
	Agents       []Loose
	Commands     []Loose
	Skills       []Loose
	// MCPConfigs are MCP client config files at the top of the root (not
	// inside a plugin): .mcp.json, mcp.json, .vscode/mcp.json,
	// claude_desktop_config.json.
	MCPConfigs []string
	// DataFiles are .json, .yaml, .yml and .jsonl files outside plugins
	// and skills that may hold tool definitions.
	DataFiles []string
	Problems  []Problem
}

// ScanOptions configures [Scan]. The zero value scans a root as whatever
// it holds.
type ScanOptions struct {
	// ClaudeDir treats the root as a .claude folder (agents/, commands/,
	// skills/, plugins/) even if it has another name. A root named
	// ".claude" is always treated so.
	ClaudeDir bool
}

// skipDirs are folders never descended into.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".venv": true, "__pycache__": true, ".hg": true, ".svn": true}

// mcpConfigNames are the client config files recognized at a root's top.
var mcpConfigNames = []string{".mcp.json", "mcp.json", filepath.Join(".vscode", "mcp.json"), "claude_desktop_config.json"}

// Scan walks root and sorts what it finds into plugins, marketplaces and
// loose files. It reads manifests and marketplaces (small files) but not
// agents, commands or skills: see [Plugin.Load] and [LoadLoose]. It fails
// only when root cannot be read at all; everything else is a Problem.
// Symbolic links to folders are followed once.
func Scan(root string, opts *ScanOptions) (*Layout, error) {
	if opts == nil {
		opts = &ScanOptions{}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("scanning %s: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("scanning %s: %w", root, err)
	}
	l := &Layout{Root: abs}
	if !fi.IsDir() {
		if filepath.Base(abs) == "SKILL.md" {
			l.Skills = append(l.Skills, Loose{Path: abs, Name: filepath.Base(filepath.Dir(abs))})
			return l, nil
		}
		return nil, fmt.Errorf("scanning %s: not a folder or a SKILL.md", root)
	}
	w := &walker{visited: map[string]bool{}, l: l}
	claudeDirs := []string{}
	if opts.ClaudeDir || filepath.Base(abs) == ".claude" {
		claudeDirs = append(claudeDirs, abs)
		w.walkClaude(abs)
	} else {
		w.walk(abs)
	}
	for i := 0; i < len(w.extraRoots); i++ { // installed plugins outside the tree
		w.walk(w.extraRoots[i])
	}
	claudeDirs = append(claudeDirs, w.claudeDirs...)
	s := &sorter{l: l, w: w, plugins: map[string][]*Plugin{}}
	s.plugins_()
	s.marketplaces()
	s.bare(claudeDirs)
	s.components()
	s.skills()
	s.loose(claudeDirs)
	s.rootConfigs(abs)
	sort.Slice(l.Plugins, func(i, j int) bool {
		if l.Plugins[i].Dir != l.Plugins[j].Dir {
			return l.Plugins[i].Dir < l.Plugins[j].Dir
		}
		return l.Plugins[i].Name < l.Plugins[j].Name
	})
	return l, nil
}

// walker collects the files of a tree.
type walker struct {
	l          *Layout
	visited    map[string]bool // real paths of the trees walked
	files      []string        // .md .json .yaml .yml .jsonl
	manifests  []string        // .claude-plugin/plugin.json
	markets    []string        // .claude-plugin/marketplace.json
	skillMDs   []string
	claudeDirs []string
	extraRoots []string
	pluginsIdx map[string]bool // dirs holding installed_plugins.json, not walked
}

func (w *walker) walk(dir string) {
	// Only symbolic links can make a tree loop or repeat, so only the top
	// of each walk and each followed link is resolved (see follow).
	// Installed plugins usually sit in the pruned plugins/ folder of the
	// tree: only an exact repeat skips them.
	if extra := w.extraRoot(dir); len(w.visited) == 0 || extra {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			w.l.Problems = append(w.l.Problems, Problem{Path: dir, Reason: fmt.Sprintf("cannot resolve: %v", err), Skipped: true})
			return
		}
		if w.visited[real] || (!extra && w.covered(real)) {
			return
		}
		w.visited[real] = true
	}
	w.walkDir(dir)
}

// extraRoot reports whether dir is one of the queued install paths.
func (w *walker) extraRoot(dir string) bool {
	for _, r := range w.extraRoots {
		if r == dir {
			return true
		}
	}
	return false
}

// covered reports whether real is inside, or above, a tree already walked.
func (w *walker) covered(real string) bool {
	for v := range w.visited {
		if real == v || strings.HasPrefix(real, v+string(filepath.Separator)) || strings.HasPrefix(v, real+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// follow walks the folder a symbolic link points to, unless that folder
// is part of a tree already walked (a link inside the tree, or back up to
// an ancestor).
func (w *walker) follow(link string) {
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		w.l.Problems = append(w.l.Problems, Problem{Path: link, Reason: fmt.Sprintf("cannot resolve: %v", err), Skipped: true})
		return
	}
	if w.covered(real) {
		return
	}
	w.visited[real] = true
	w.walkDir(link)
}

func (w *walker) walkDir(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		w.l.Problems = append(w.l.Problems, Problem{Path: dir, Reason: fmt.Sprintf("cannot read folder: %v", err), Skipped: true})
		return
	}
	if filepath.Base(dir) == "plugins" && filepath.Base(filepath.Dir(dir)) == ".claude" {
		if w.installedPlugins(dir) {
			return
		}
	}
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(dir, name)
		isDir := e.IsDir()
		link := e.Type()&fs.ModeSymlink != 0
		if link {
			fi, err := os.Stat(p)
			if err != nil {
				w.l.Problems = append(w.l.Problems, Problem{Path: p, Reason: "broken symbolic link", Skipped: true})
				continue
			}
			isDir = fi.IsDir()
			if !isDir && !fi.Mode().IsRegular() {
				w.special(p, fi.Mode())
				continue
			}
		} else if !isDir && !e.Type().IsRegular() {
			w.special(p, e.Type())
			continue
		}
		if isDir {
			if skipDirs[name] {
				continue
			}
			switch {
			case name == ".claude":
				w.claudeDirs = append(w.claudeDirs, p)
				w.walkClaude(p)
			case link:
				w.follow(p)
			default:
				w.walkDir(p)
			}
			continue
		}
		switch {
		case name == "plugin.json" && filepath.Base(dir) == ".claude-plugin":
			w.manifests = append(w.manifests, p)
		case name == "marketplace.json" && filepath.Base(dir) == ".claude-plugin":
			w.markets = append(w.markets, p)
		case name == "SKILL.md":
			w.skillMDs = append(w.skillMDs, p)
		}
		switch strings.ToLower(filepath.Ext(name)) {
		case ".md", ".json", ".yaml", ".yml", ".jsonl":
			w.files = append(w.files, p)
		}
	}
}

// special reports a FIFO, device or socket named like a file discovery
// reads (a tool file, a manifest, a SKILL.md): it is skipped, never
// opened, and said so. Others are passed over silently.
func (w *walker) special(p string, mode fs.FileMode) {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".md", ".json", ".yaml", ".yml", ".jsonl", ".ndjson":
	default:
		return
	}
	kind := "not a regular file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO), not a regular file"
	case mode&fs.ModeCharDevice != 0:
		kind = "a character device, not a regular file"
	case mode&fs.ModeDevice != 0:
		kind = "a device, not a regular file"
	case mode&fs.ModeSocket != 0:
		kind = "a socket, not a regular file"
	}
	w.l.Problems = append(w.l.Problems, Problem{Path: p, Reason: kind + "; skipped", Skipped: true})
}

// claudeParts are the folders of a .claude folder that hold capabilities;
// the rest (settings, projects, history) is not scanned.
var claudeParts = []string{"agents", "commands", "skills", "plugins"}

// walkClaude walks only the capability folders of a .claude folder.
func (w *walker) walkClaude(dir string) {
	for _, part := range claudeParts {
		p := filepath.Join(dir, part)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			w.follow(p)
		case fi.IsDir():
			if len(w.visited) == 0 {
				w.walk(p)
			} else {
				w.walkDir(p)
			}
		}
	}
}

// installedPlugins reads Claude Code's plugins/installed_plugins.json and
// queues each install path. It reports false when the file is absent or
// unreadable, so the folder is walked as usual.
func (w *walker) installedPlugins(dir string) bool {
	path := filepath.Join(dir, "installed_plugins.json")
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err != nil {
		return false
	}
	var f struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Plugins == nil {
		w.l.Problems = append(w.l.Problems, Problem{Path: path, Reason: fmt.Sprintf("cannot read installed plugins (%v); scanning the folder instead", errOr(err, "no \"plugins\" object"))})
		return false
	}
	type install struct {
		InstallPath string `json:"installPath"`
	}
	keys := make([]string, 0, len(f.Plugins))
	for k := range f.Plugins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var list []install
		var one install
		switch {
		case json.Unmarshal(f.Plugins[k], &list) == nil: // version 2: a list per plugin
		case json.Unmarshal(f.Plugins[k], &one) == nil: // version 1: one object
			list = []install{one}
		}
		for _, in := range list {
			if in.InstallPath == "" {
				continue
			}
			if _, err := os.Stat(in.InstallPath); err != nil {
				w.l.Problems = append(w.l.Problems, Problem{Path: path, Reason: fmt.Sprintf("installed plugin %s: %v", k, err), Skipped: true})
				continue
			}
			w.extraRoots = append(w.extraRoots, in.InstallPath)
		}
	}
	return true
}

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}

// sorter turns the walker's files into a Layout.
type sorter struct {
	l       *Layout
	w       *walker
	plugins map[string][]*Plugin // by dir
	byDir   map[string][]string  // .md files by folder
}

func (s *sorter) warn(path string, reason string) {
	s.l.Problems = append(s.l.Problems, Problem{Path: path, Reason: reason})
}

func (s *sorter) skip(path string, reason string) {
	s.l.Problems = append(s.l.Problems, Problem{Path: path, Reason: reason, Skipped: true})
}

// plugins_ reads every plugin.json.
func (s *sorter) plugins_() {
	sort.Strings(s.w.manifests)
	for _, mp := range s.w.manifests {
		dir := filepath.Dir(filepath.Dir(mp))
		data, err := safefile.ReadFile(mp, safefile.MaxConfig)
		if err != nil {
			s.skip(mp, fmt.Sprintf("cannot read plugin manifest: %v", err))
			continue
		}
		m, warns, err := ParseManifest(data)
		p := &Plugin{Dir: dir, ManifestPath: mp, Manifest: m, defaultSkills: true}
		for _, wmsg := range warns {
			s.warn(mp, wmsg)
		}
		if err != nil {
			// The folder is still a plugin: Claude Code would refuse it,
			// but its agents and skills are real; name it by its folder.
			s.warn(mp, fmt.Sprintf("invalid plugin manifest (%v); named the plugin after its folder", err))
			p.Manifest = nil
		}
		if p.Manifest != nil {
			p.Name = m.Name
			p.Description, p.Version, p.Category, p.Keywords = m.Description, m.Version, m.Category, m.Keywords
		}
		if p.Name == "" {
			p.Name = filepath.Base(dir)
			if p.Manifest != nil {
				s.warn(mp, fmt.Sprintf("manifest has no name; named the plugin %q after its folder", p.Name))
			}
		}
		s.add(p)
	}
}

func (s *sorter) add(p *Plugin) {
	s.plugins[p.Dir] = append(s.plugins[p.Dir], p)
	s.l.Plugins = append(s.l.Plugins, p)
}

// marketplaces reads every marketplace.json, links entries to plugins and
// makes plugins of local entries that have no plugin.json.
func (s *sorter) marketplaces() {
	sort.Strings(s.w.markets)
	for _, path := range s.w.markets {
		data, err := safefile.ReadFile(path, safefile.MaxConfig)
		if err != nil {
			s.skip(path, fmt.Sprintf("cannot read marketplace: %v", err))
			continue
		}
		mk, warns, err := ParseMarketplace(data)
		for _, wmsg := range warns {
			s.warn(path, wmsg)
		}
		if err != nil {
			s.skip(path, fmt.Sprintf("invalid marketplace: %v", err))
			continue
		}
		root := filepath.Dir(filepath.Dir(path))
		mf := &MarketplaceFile{Path: path, Root: root, Marketplace: mk}
		s.l.Marketplaces = append(s.l.Marketplaces, mf)
		for i := range mk.Plugins {
			e := &mk.Plugins[i]
			if !e.Source.Local() {
				s.skip(path, fmt.Sprintf("marketplace %s lists plugin %s from a remote source (%s); not fetched", mk.Name, e.Name, e.Source))
				continue
			}
			dir := filepath.Clean(filepath.Join(root, filepath.FromSlash(e.Source.Path)))
			fi, err := os.Stat(dir)
			if err != nil || !fi.IsDir() {
				s.skip(path, fmt.Sprintf("marketplace %s lists plugin %s at %s, which does not exist here", mk.Name, e.Name, e.Source.Path))
				continue
			}
			mf.Local++
			if ps := s.plugins[dir]; len(ps) > 0 && ps[0].Manifest != nil {
				p := ps[0]
				if p.Entry == nil {
					p.Marketplace, p.MarketplacePath, p.Entry = mk.Name, path, e
					p.Description = first(p.Description, e.Description)
					p.Version = first(p.Version, e.Version)
					p.Category = first(p.Category, e.Category)
					if len(p.Keywords) == 0 {
						p.Keywords = e.Keywords
					}
				}
				continue
			}
			if ps := s.plugins[dir]; len(ps) > 0 && ps[0].Manifest == nil && ps[0].Entry == nil {
				// A plugin.json that failed to parse: the entry names it.
				p := ps[0]
				p.Name, p.Marketplace, p.MarketplacePath, p.Entry = e.Name, mk.Name, path, e
				p.Description, p.Version, p.Category, p.Keywords = e.Description, e.Version, e.Category, e.Keywords
				continue
			}
			p := &Plugin{
				Name: e.Name, Dir: dir, Marketplace: mk.Name, MarketplacePath: path, Entry: e,
				Description: e.Description, Version: e.Version, Category: e.Category, Keywords: e.Keywords,
				// An entry that lists its skills defines them; else the
				// default skills/ folder applies.
				defaultSkills: len(e.Skills) == 0,
			}
			s.add(p)
		}
	}
}

// components fills each plugin's agent and command files and its MCP config.
func (s *sorter) components() {
	for _, p := range s.l.Plugins {
		seen := map[string]bool{}
		for _, f := range s.mdIn(filepath.Join(p.Dir, "agents"), false) {
			seen[f] = true
			p.AgentFiles = append(p.AgentFiles, f)
		}
		cmdDir := filepath.Join(p.Dir, "commands")
		for _, f := range s.mdIn(cmdDir, true) {
			if !seen[f] {
				seen[f] = true
				rel := strings.TrimSuffix(f[len(cmdDir)+1:], ".md")
				p.CommandFiles = append(p.CommandFiles, Command{Path: f, Name: strings.ReplaceAll(filepath.ToSlash(rel), "/", ":")})
			}
		}
		var agents, commands []string
		if p.Manifest != nil {
			agents, commands = p.Manifest.Agents, p.Manifest.Commands
		}
		if p.Entry != nil {
			agents = append(agents, p.Entry.Agents...)
			commands = append(commands, p.Entry.Commands...)
		}
		for _, a := range agents {
			for _, f := range s.resolve(p, a, false) {
				if !seen[f] {
					seen[f] = true
					p.AgentFiles = append(p.AgentFiles, f)
				}
			}
		}
		for _, c := range commands {
			for _, f := range s.resolve(p, c, true) {
				if !seen[f] {
					seen[f] = true
					p.CommandFiles = append(p.CommandFiles, Command{Path: f, Name: strings.TrimSuffix(filepath.Base(f), ".md")})
				}
			}
		}
		sort.Strings(p.AgentFiles)
		sort.Slice(p.CommandFiles, func(i, j int) bool { return p.CommandFiles[i].Path < p.CommandFiles[j].Path })
		s.mcp(p)
	}
}

// mdIn returns the .md files directly in dir, or anywhere under it when
// recursive, in path order.
func (s *sorter) mdIn(dir string, recursive bool) []string {
	if s.byDir == nil {
		s.byDir = map[string][]string{}
		sort.Strings(s.w.files)
		for _, f := range s.w.files {
			if strings.HasSuffix(f, ".md") {
				s.byDir[filepath.Dir(f)] = append(s.byDir[filepath.Dir(f)], f)
			}
		}
	}
	if !recursive {
		return s.byDir[dir]
	}
	prefix := dir + string(filepath.Separator)
	files := s.w.files
	i := sort.SearchStrings(files, prefix)
	var out []string
	for ; i < len(files) && strings.HasPrefix(files[i], prefix); i++ {
		if strings.HasSuffix(files[i], ".md") {
			out = append(out, files[i])
		}
	}
	return out
}

// resolve turns a manifest component path into .md files: a file is
// itself; a folder gives its .md files (recursively for commands).
func (s *sorter) resolve(p *Plugin, rel string, recursive bool) []string {
	where := p.ManifestPath
	if where == "" {
		where = p.MarketplacePath
	}
	path := filepath.Clean(filepath.Join(p.Dir, filepath.FromSlash(rel)))
	fi, err := os.Stat(path)
	if err != nil {
		s.skip(where, fmt.Sprintf("plugin %s lists %s, which does not exist", p.Name, rel))
		return nil
	}
	if !fi.IsDir() {
		if !strings.HasSuffix(strings.ToLower(path), ".md") {
			s.skip(where, fmt.Sprintf("plugin %s lists %s, which is not a .md file", p.Name, rel))
			return nil
		}
		return []string{path}
	}
	return s.mdIn(path, recursive)
}

// mcp finds the plugin's MCP server declarations.
func (s *sorter) mcp(p *Plugin) {
	if p.Manifest != nil && len(p.Manifest.MCPServers) > 0 {
		var rel string
		if json.Unmarshal(p.Manifest.MCPServers, &rel) == nil {
			path := filepath.Join(p.Dir, filepath.FromSlash(rel))
			if _, err := os.Stat(path); err != nil {
				s.skip(p.ManifestPath, fmt.Sprintf("plugin %s names MCP config %s, which does not exist", p.Name, rel))
			} else {
				p.MCPConfig = path
			}
			return
		}
		p.InlineMCP = p.Manifest.MCPServers
		return
	}
	if path := filepath.Join(p.Dir, ".mcp.json"); exists(path) {
		p.MCPConfig = path
	}
}

// skills gives every SKILL.md an owner: the plugin that lists it, else the
// nearest plugin folder above it that uses the default skills/ folder,
// else none (a standalone skill).
func (s *sorter) skills() {
	sort.Strings(s.w.skillMDs)
	claimed := map[string]*Plugin{}
	for _, p := range s.l.Plugins {
		var lists []string
		if p.Manifest != nil {
			lists = append(lists, p.Manifest.Skills...)
		}
		if p.Entry != nil {
			lists = append(lists, p.Entry.Skills...)
		}
		for _, rel := range lists {
			dir := filepath.Clean(filepath.Join(p.Dir, filepath.FromSlash(rel)))
			found := false
			for _, f := range s.w.skillMDs {
				if filepath.Dir(f) == dir || filepath.Dir(filepath.Dir(f)) == dir {
					found = true
					if claimed[f] == nil {
						claimed[f] = p
					}
				}
			}
			if !found {
				s.skip(first(p.ManifestPath, p.MarketplacePath), fmt.Sprintf("plugin %s lists skill %s, which has no SKILL.md here", p.Name, rel))
			}
		}
	}
	for _, f := range s.w.skillMDs {
		p := claimed[f]
		if p == nil {
			p = s.nearest(f)
		}
		if p == nil {
			s.l.Skills = append(s.l.Skills, Loose{Path: f, Name: filepath.Base(filepath.Dir(f))})
			continue
		}
		p.SkillFiles = append(p.SkillFiles, f)
	}
}

// nearest returns the closest plugin above path that claims default skills.
func (s *sorter) nearest(path string) *Plugin {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		for _, p := range s.plugins[dir] {
			if p.defaultSkills {
				return p
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// bare makes a plugin of each folder that holds agents/*.md but neither
// a .claude-plugin/plugin.json nor a marketplace entry, named after the
// folder, with a warning: Claude Code would want a manifest, but the
// agents (and the commands/ beside them) are real. A folder with only
// commands/ is listed as skipped with the reason. Folders inside a
// plugin or a skill (whose agents/ holds the skill's prompts) and .claude
// folders (whose agents are loose) are left alone.
func (s *sorter) bare(claudeDirs []string) {
	claude := map[string]bool{}
	for _, d := range claudeDirs {
		claude[d] = true
	}
	skillDirs := map[string]bool{}
	for _, f := range s.w.skillMDs {
		skillDirs[filepath.Dir(f)] = true
	}
	agents, commands := map[string]bool{}, map[string]bool{}
	for _, f := range s.w.files {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		parent := filepath.Dir(f)
		if filepath.Base(parent) == "agents" {
			agents[filepath.Dir(parent)] = true
		}
		for d := parent; d != filepath.Dir(d) && d != filepath.Dir(s.l.Root); d = filepath.Dir(d) {
			if filepath.Base(d) == "commands" {
				commands[filepath.Dir(d)] = true
				break
			}
		}
	}
	dirs := make([]string, 0, len(agents)+len(commands))
	for d := range agents {
		dirs = append(dirs, d)
	}
	for d := range commands {
		if !agents[d] {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if claude[dir] || filepath.Base(dir) == ".claude" || len(s.plugins[dir]) > 0 || s.inside(filepath.Join(dir, "agents"), skillDirs) {
			continue
		}
		if !agents[dir] {
			s.skip(filepath.Join(dir, "commands"), "commands/ in a folder with no .claude-plugin/plugin.json and no agents/: not read as a plugin (add a plugin.json to load it)")
			continue
		}
		s.warn(dir, fmt.Sprintf("no .claude-plugin/plugin.json: read as a plugin named %q after its folder (agents/ and commands/)", filepath.Base(dir)))
		s.add(&Plugin{Name: filepath.Base(dir), Dir: dir, defaultSkills: true})
	}
}

// loose collects agents and commands of .claude folders.
func (s *sorter) loose(claudeDirs []string) {
	sort.Strings(claudeDirs)
	seen := map[string]bool{}
	for _, cd := range claudeDirs {
		if seen[cd] {
			continue
		}
		seen[cd] = true
		for _, f := range s.mdIn(filepath.Join(cd, "agents"), false) {
			s.l.Agents = append(s.l.Agents, Loose{Path: f, Name: strings.TrimSuffix(filepath.Base(f), ".md")})
		}
		cmdDir := filepath.Join(cd, "commands")
		for _, f := range s.mdIn(cmdDir, true) {
			rel := strings.TrimSuffix(f[len(cmdDir)+1:], ".md")
			s.l.Commands = append(s.l.Commands, Loose{Path: f, Name: strings.ReplaceAll(filepath.ToSlash(rel), "/", ":")})
		}
	}
}

// rootConfigs finds MCP configs at the top of the root and data files
// outside plugins and skills.
func (s *sorter) rootConfigs(root string) {
	if len(s.plugins[root]) == 0 {
		for _, n := range mcpConfigNames {
			if p := filepath.Join(root, n); exists(p) {
				s.l.MCPConfigs = append(s.l.MCPConfigs, p)
			}
		}
	}
	skip := map[string]bool{}
	for _, p := range s.l.MCPConfigs {
		skip[p] = true
	}
	skillDirs := map[string]bool{}
	for _, f := range s.w.skillMDs {
		skillDirs[filepath.Dir(f)] = true
	}
	for _, f := range s.w.files {
		ext := strings.ToLower(filepath.Ext(f))
		if ext == ".md" || skip[f] || filepath.Base(filepath.Dir(f)) == ".claude-plugin" {
			continue
		}
		if s.inside(f, skillDirs) {
			continue
		}
		s.l.DataFiles = append(s.l.DataFiles, f)
	}
}

// inside reports whether f is within a plugin folder or one of dirs.
func (s *sorter) inside(f string, dirs map[string]bool) bool {
	for dir := filepath.Dir(f); ; dir = filepath.Dir(dir) {
		if len(s.plugins[dir]) > 0 || dirs[dir] {
			return true
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func dedupSorted(ss []string) []string {
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}
