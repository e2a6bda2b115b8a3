package slackui

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// clickPayload is a block_actions payload as Slack sends it for a click on
// an Ask message whose blocks are blocksJSON.
func clickPayload(blocksJSON string) string {
	return `{"type":"block_actions","user":{"id":"UAPPROVER"},"trigger_id":"t1",` +
		`"container":{"type":"message","message_ts":"1.000100","channel_id":"CAPPROVALS"},` +
		`"channel":{"id":"CAPPROVALS"},` +
		`"message":{"type":"message","ts":"1.000100","text":"gist", "blocks" : ` + blocksJSON + `,"thread_ts":"0.5"},` +
		`"actions":[{"action_id":"` + ActionApprove + `","block_id":"b","value":"ask1","type":"button"}]}`
}

const askBlocksJSON = `[{"type":"section","text":{"type":"mrkdwn","text":"*bash* ` + "`make deploy`" + `"}},` +
	`{"type":"actions","block_id":"b","elements":[` +
	`{"type":"button","action_id":"` + ActionApprove + `","value":"ask1","text":{"type":"plain_text","text":"Approve"}},` +
	`{"type":"button","action_id":"` + ActionDeny + `","value":"ask1","text":{"type":"plain_text","text":"Deny"}}]}]`

// The callback decoded with the message's blocks deferred is the ordinary
// one in every field, and its deferred blocks answer buttonFor alike.
func TestDecodeInteractionDefersOnlyMessageBlocks(t *testing.T) {
	payload := clickPayload(askBlocksJSON)
	var want, got slack.InteractionCallback
	if err := json.Unmarshal([]byte(payload), &want); err != nil {
		t.Fatal(err)
	}
	if err := decodeInteraction([]byte(payload), &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Message.Blocks.BlockSet[0].(*payloadBlocks); !ok || len(got.Message.Blocks.BlockSet) != 1 {
		t.Fatalf("message blocks were decoded eagerly: %#v", got.Message.Blocks.BlockSet)
	}
	for _, c := range []struct{ action, value string }{{ActionApprove, "ask1"}, {ActionDeny, "ask1"}, {ActionApprove, "ask2"}, {ActionApproveSession, "ask1"}} {
		if g, w := buttonFor(got.Message.Blocks.BlockSet, c.action, c.value), buttonFor(want.Message.Blocks.BlockSet, c.action, c.value); g != w {
			t.Errorf("buttonFor(%s, %s): deferred %v, decoded %v", c.action, c.value, g, w)
		}
	}
	got.Message.Blocks, want.Message.Blocks = slack.Blocks{}, slack.Blocks{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded callbacks differ beyond the message blocks:\n got %+v\nwant %+v", got, want)
	}
}

// Whatever is unusual is left to the ordinary decoder, which then sees the
// payload exactly as sent.
func TestDecodeInteractionLeavesTheUnusualToTheDecoder(t *testing.T) {
	for name, payload := range map[string]string{
		"no message":       `{"type":"block_actions","actions":[]}`,
		"empty blocks":     clickPayload(`[]`),
		"blocks not list":  clickPayload(`{"type":"section"}`),
		"null blocks":      clickPayload(`null`),
		"two blocks keys":  strings.Replace(clickPayload(askBlocksJSON), `"thread_ts"`, `"blocks":[],"thread_ts"`, 1),
		"two messages":     strings.Replace(clickPayload(askBlocksJSON), `"actions"`, `"message":{"ts":"2.0"},"actions"`, 1),
		"malformed":        `{"type":"block_actions","message":{"blocks":[}`,
		"not an object":    `[1,2]`,
		"unknown block":    clickPayload(`[{"type":"nonesuch"}]`),
		"view and message": strings.Replace(clickPayload(askBlocksJSON), `"actions"`, `"view":{"id":"V1","blocks":[]},"actions"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			var want, got slack.InteractionCallback
			wantErr := json.Unmarshal([]byte(payload), &want)
			gotErr := decodeInteraction([]byte(payload), &got)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("error: decoded %v, deferred %v", wantErr, gotErr)
			}
			if wantErr != nil {
				return
			}
			// Deferred or not, the blocks must offer the same buttons.
			for _, a := range []string{ActionApprove, ActionDeny} {
				if g, w := buttonFor(got.Message.Blocks.BlockSet, a, "ask1"), buttonFor(want.Message.Blocks.BlockSet, a, "ask1"); g != w {
					t.Errorf("buttonFor(%s): deferred %v, decoded %v", a, g, w)
				}
			}
			if len(got.Message.Blocks.BlockSet) == 1 {
				if _, ok := got.Message.Blocks.BlockSet[0].(*payloadBlocks); ok {
					got.Message.Blocks, want.Message.Blocks = slack.Blocks{}, slack.Blocks{}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("callbacks differ:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// BenchmarkDecodeInteraction: the click payload of a rendered Ask decoded
// whole (as before) and with its message blocks deferred.
func BenchmarkDecodeInteraction(b *testing.B) {
	blocks, err := json.Marshal(RenderAsk(bashAsk("make deploy"), RenderOptions{}).Blocks)
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte(clickPayload(string(blocks)))
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			var cb slack.InteractionCallback
			if err := json.Unmarshal(payload, &cb); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deferred", func(b *testing.B) {
		for b.Loop() {
			var cb slack.InteractionCallback
			if err := decodeInteraction(payload, &cb); err != nil {
				b.Fatal(err)
			}
		}
	})
}
