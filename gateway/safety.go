package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"Run it","description":"Run this irreversible call."}},"required":["confirm"]}`

// confirm asks the user, through MCP elicitation, whether an irreversible
// call may run. It returns "" to run it, or why it must not. A client that
// cannot be asked gets the configured policy (Options.ConfirmUnasked).
func (g *Gateway) confirm(ctx context.Context, ss *mcp.ServerSession, e *toolEntry, args json.RawMessage) string {
	if ss == nil || !supportsElicitation(ss) {
		if g.opts.ConfirmUnasked {
			return ""
		}
		return fmt.Sprintf("capbroker gateway: %s cannot be undone and needs the user's approval, but this client cannot ask the user (it does not support elicitation) and the gateway's policy refuses such calls unasked; it was not run. "+
			"Start the gateway with --confirm-unasked to run such calls unasked, or with --client NAME when the client asks its user before each call itself", e.name)
	}
	shown := string(args)
	if len(shown) > 2000 {
		shown = shown[:2000] + "…"
	}
	if shown == "" {
		shown = "{}"
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{
		Mode:            "form",
		Message:         fmt.Sprintf("%s (from server %q) cannot be undone. Run it with these arguments?\n%s", e.tool.Name, e.up.cfg.Name, shown),
		RequestedSchema: json.RawMessage(confirmSchema),
	})
	if err != nil {
		return fmt.Sprintf("capbroker gateway: could not ask the user to approve %s (%v); it was not run", e.name, err)
	}
	if res.Action == "accept" {
		if ok, _ := res.Content["confirm"].(bool); ok {
			return ""
		}
	}
	return fmt.Sprintf("capbroker gateway: the user did not approve %s (%s); it was not run", e.name, res.Action)
}
