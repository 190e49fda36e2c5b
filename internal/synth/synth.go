// Package synth generates synthetic capability catalogs and tasks for
// benchmarks and load tests: deterministic for a seed, with realistic
// name shapes (verb_object, camelCase, dotted), description lengths and
// parameter schemas, drawn from a vocabulary of common tool words.
package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/capbroker/capbroker/card"
)

var (
	verbs = strings.Fields(`get list create update delete search find fetch read write send post query run
		build deploy scale restart convert translate summarize analyze plot export import sync merge review
		schedule cancel approve reject upload download parse validate format compress archive monitor`)
	objects = strings.Fields(`file directory issue pull_request commit branch message channel email event
		calendar invoice payment customer order product ticket incident alert metric log container pod
		deployment service database table row record document page note task project user team repository
		image video audio report chart dataset model secret key certificate domain record bucket object queue`)
	services = strings.Fields(`github gitlab slack jira notion stripe aws gcp azure docker kubernetes postgres
		mysql redis sentry datadog pagerduty linear asana trello zendesk hubspot salesforce shopify twilio
		sendgrid dropbox drive figma vercel netlify cloudflare openai anthropic elastic mongo kafka`)
	fillers = strings.Fields(`the a with for from in by and of to using its all new existing given current
		recent selected matching specified optional default multiple single remote local workspace account`)
	qualities = strings.Fields(`quickly safely incrementally securely automatically manually in bulk with
		pagination with filters by date by status by owner by label as json as markdown as csv`)
)

// Cards returns n tool cards generated from seed. Names are unique.
func Cards(n int, seed uint64) []card.Card {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	cards := make([]card.Card, 0, n)
	seen := make(map[string]bool, n)
	for i := 0; len(cards) < n; i++ {
		svc := pick(r, services)
		verb, obj := pick(r, verbs), pick(r, objects)
		var name string
		switch i % 3 {
		case 0:
			name = fmt.Sprintf("%s_%s_%s", svc, verb, obj)
		case 1:
			name = svc + "." + verb + camel(obj)
		default:
			name = fmt.Sprintf("%s-%s-%s", verb, svc, strings.ReplaceAll(obj, "_", "-"))
		}
		if seen[name] {
			name = fmt.Sprintf("%s_%d", name, i)
		}
		seen[name] = true
		cards = append(cards, card.Card{
			Name:        name,
			Kind:        card.KindTool,
			Source:      svc,
			Description: description(r, svc, verb, obj),
			InputSchema: schema(r, obj),
		})
	}
	return cards
}

// Tasks returns n task texts in the same vocabulary as [Cards].
func Tasks(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	tasks := make([]string, n)
	for i := range tasks {
		tasks[i] = fmt.Sprintf("please %s the %s %s in %s %s", pick(r, verbs), pick(r, fillers),
			strings.ReplaceAll(pick(r, objects), "_", " "), pick(r, services), pick(r, qualities))
	}
	return tasks
}

func description(r *rand.Rand, svc, verb, obj string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s %s %s in %s", strings.ToUpper(verb[:1]), verb[1:], pick(r, fillers), strings.ReplaceAll(obj, "_", " "), svc)
	for range 2 + r.IntN(4) {
		fmt.Fprintf(&b, " %s %s %s", pick(r, fillers), strings.ReplaceAll(pick(r, objects), "_", " "), pick(r, qualities))
	}
	b.WriteString(".")
	return b.String()
}

func schema(r *rand.Rand, obj string) json.RawMessage {
	props := map[string]any{}
	var required []string
	for j := range 1 + r.IntN(4) {
		p := pick(r, objects) + "_id"
		if j == 0 {
			p = obj + "_id"
			required = append(required, p)
		}
		props[p] = map[string]any{"type": "string", "description": "The " + strings.ReplaceAll(p, "_", " ") + " " + pick(r, qualities) + "."}
	}
	raw, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return raw
}

func pick(r *rand.Rand, words []string) string { return words[r.IntN(len(words))] }

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}
