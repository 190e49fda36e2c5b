package rank

// irregularPast maps the irregular past forms of common verbs to their
// base form, which Stem then stems: the Snowball stemmer knows only
// regular endings, so "found" (of find) would meet "founded" (of found)
// at "found", and "wrote" would never meet "write". A form that is more
// often another word is left out ("left", "saw", "rose", "wound",
// "lay", and "got", mostly of "have got": "what have I got uncommitted"
// is no get_* tool), and so are forms the stop words cover ("did",
// "went", "had").
var irregularPast = map[string]string{
	"became": "become", "began": "begin", "begun": "begin", "bought": "buy",
	"broke": "break", "broken": "break", "brought": "bring", "built": "build",
	"caught": "catch", "chose": "choose", "chosen": "choose", "drew": "draw",
	"drawn": "draw", "drove": "drive", "driven": "drive", "fed": "feed",
	"felt": "feel", "flew": "fly", "forgot": "forget", "forgotten": "forget",
	"fought": "fight", "found": "find", "froze": "freeze", "frozen": "freeze",
	"gave": "give", "given": "give",
	"grew": "grow", "grown": "grow", "heard": "hear", "held": "hold",
	"hid": "hide", "hidden": "hide", "hung": "hang", "kept": "keep",
	"knew": "know", "known": "know", "led": "lead", "lost": "lose",
	"made": "make", "meant": "mean", "met": "meet", "overwritten": "overwrite",
	"overwrote": "overwrite", "paid": "pay", "ran": "run", "rewritten": "rewrite",
	"rewrote": "rewrite", "said": "say", "seen": "see", "sent": "send",
	"shown": "show", "sold": "sell", "sought": "seek", "spent": "spend",
	"spoke": "speak", "spoken": "speak", "stood": "stand", "stole": "steal",
	"stolen": "steal", "taken": "take", "taught": "teach", "thought": "think",
	"threw": "throw", "thrown": "throw", "told": "tell", "took": "take",
	"undid": "undo", "undone": "undo", "understood": "understand", "withdrew": "withdraw",
	"withdrawn": "withdraw", "woke": "wake", "won": "win", "wore": "wear",
	"worn": "wear", "wrote": "write", "written": "write",
}
