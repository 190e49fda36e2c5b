package rank

import "sync"

// opposites are pairs of words of opposite action, which WordNet's
// relations and word vectors both put close ("read" and "write" share
// contexts): a query word is never expanded to its opposite, so "write a
// text file" does not gain from a card that reads one.
var opposites = [][2]string{
	{"read", "write"}, {"open", "close"}, {"start", "stop"}, {"add", "remove"},
	{"create", "delete"}, {"enable", "disable"}, {"upload", "download"},
	{"encrypt", "decrypt"}, {"encode", "decode"}, {"push", "pull"},
	{"lock", "unlock"}, {"get", "set"}, {"show", "hide"}, {"increase", "decrease"},
	{"import", "export"}, {"send", "receive"}, {"buy", "sell"}, {"allow", "deny"},
	{"begin", "end"}, {"attach", "detach"}, {"mount", "unmount"},
	{"install", "uninstall"}, {"follow", "unfollow"}, {"subscribe", "unsubscribe"},
	{"archive", "unarchive"}, {"pause", "resume"}, {"compress", "decompress"},
	{"zip", "unzip"}, {"block", "unblock"}, {"mute", "unmute"}, {"pin", "unpin"},
	{"connect", "disconnect"}, {"approve", "reject"}, {"accept", "decline"},
	{"load", "unload"}, {"min", "max"}, {"minimum", "maximum"}, {"input", "output"},
	{"credit", "debit"}, {"deposit", "withdraw"}, {"borrow", "lend"},
	{"login", "logout"}, {"sign", "unsign"}, {"include", "exclude"},
	{"insert", "delete"}, {"save", "delete"}, {"remember", "forget"},
}

// everyday are relations of everyday words that WordNet does not make:
// the verbs of memory and recall, as a user asks an assistant to
// remember something and later to recall it, against tools that speak of
// memory, knowledge, notes and observations. Weights as in the WordNet
// table.
var everyday = map[string][]Related{
	"remember": {{"memory", 1}, {"knowledge", 0.8}, {"observation", 0.6}, {"note", 0.6}, {"store", 0.5}, {"save", 0.5}},
	"memorize": {{"memory", 1}, {"remember", 0.8}, {"knowledge", 0.8}, {"observation", 0.6}, {"note", 0.6}, {"store", 0.5}},
	"recall":   {{"memory", 1}, {"knowledge", 0.8}, {"observation", 0.6}, {"note", 0.5}, {"retrieve", 0.8}},
	"forget":   {{"memory", 0.6}, {"observation", 0.5}, {"delete", 0.5}, {"remove", 0.5}},
	"lookup":   {{"search", 0.6}, {"find", 0.5}, {"retrieve", 0.5}},
}

var (
	wordTablesOnce sync.Once
	oppositeStems  map[string][]string
	everydayStems  map[string][]Related
)

// wordTables stems the opposites and everyday relations once.
func wordTables() {
	wordTablesOnce.Do(func() {
		oppositeStems = make(map[string][]string)
		for _, p := range opposites {
			a, b := Stem(p[0]), Stem(p[1])
			oppositeStems[a] = append(oppositeStems[a], b)
			oppositeStems[b] = append(oppositeStems[b], a)
		}
		everydayStems = make(map[string][]Related)
		for w, rs := range everyday {
			for _, r := range rs {
				everydayStems[Stem(w)] = append(everydayStems[Stem(w)], Related{Stem: Stem(r.Stem), Weight: r.Weight})
			}
		}
	})
}

// opposite reports whether stems a and b are of opposite action.
func opposite(a, b string) bool {
	wordTables()
	for _, o := range oppositeStems[a] {
		if o == b {
			return true
		}
	}
	return false
}

// everydayRelated returns the everyday relations of stem (nil if none).
func everydayRelated(stem string) []Related {
	wordTables()
	return everydayStems[stem]
}
