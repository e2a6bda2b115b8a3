package slackui

import (
	"bytes"
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

// cutMessageBlocksByTokens is the cut as json.Decoder tokens make it (the
// first implementation): the reference FuzzCutMessageBlocks holds the
// faster one to.
func cutMessageBlocksByTokens(payload []byte) (rest []byte, blocks json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	delim := func(d json.Delim) bool { t, err := dec.Token(); return err == nil && t == d }
	nextKey := func() (string, bool) { t, err := dec.Token(); k, ok := t.(string); return k, err == nil && ok }
	if !delim('{') {
		return payload, nil
	}
	start, end := -1, -1
	messages := 0
	for dec.More() {
		key, ok := nextKey()
		if !ok {
			return payload, nil
		}
		if key != "message" {
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return payload, nil
			}
			continue
		}
		if messages++; messages > 1 || !delim('{') {
			return payload, nil
		}
		for dec.More() {
			key, ok := nextKey()
			if !ok {
				return payload, nil
			}
			keyEnd := int(dec.InputOffset())
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return payload, nil
			}
			if key != "blocks" {
				continue
			}
			if start >= 0 {
				return payload, nil
			}
			start = keyEnd + bytes.IndexByte(payload[keyEnd:], '[')
			end = int(dec.InputOffset())
			blocks = v
		}
		if !delim('}') {
			return payload, nil
		}
	}
	if start < 0 || len(bytes.TrimSpace(blocks)) < 3 || blocks[0] != '[' {
		return payload, nil
	}
	rest = make([]byte, 0, len(payload)-(end-start)+2)
	rest = append(append(append(rest, payload[:start]...), "[]"...), payload[end:]...)
	return rest, blocks
}

// FuzzCutMessageBlocks: wherever the cut is made, it is the one the token
// walk makes, and the rest decodes to what the whole payload decodes to
// (blocks aside). Where they differ only in whether to cut at all, the
// faster cut must be the one that declines: a key written with escapes,
// or a payload that is not valid JSON as a whole (the token walk stops
// reading at the top object's last member, so it cut payloads with
// trailing garbage that the decoder then refused).
func FuzzCutMessageBlocks(f *testing.F) {
	f.Add(clickPayload(askBlocksJSON))
	f.Add(clickPayload(`[]`))
	f.Add(clickPayload(`null`))
	f.Add(strings.Replace(clickPayload(askBlocksJSON), `"thread_ts"`, `"blocks":[],"thread_ts"`, 1))
	f.Add(strings.Replace(clickPayload(askBlocksJSON), `"actions"`, `"message":{"ts":"2.0"},"actions"`, 1))
	f.Add(`{"type":"block_actions","message":{"blocks":[}`)
	f.Add(`{"message":{"blocks":[{"t":"a\"]}"}], "x": -1.5e3, "y": [true, false, null]}}`)
	f.Add(`{"me\u0073sage":{"blocks":[1,2]}}`)
	f.Add(` { "message" : { "blocks" : [ 1 ] } } `)
	f.Fuzz(func(t *testing.T, payload string) {
		gotRest, gotBlocks := cutMessageBlocks([]byte(payload))
		wantRest, wantBlocks := cutMessageBlocksByTokens([]byte(payload))
		switch {
		case gotBlocks == nil && wantBlocks == nil:
			if string(gotRest) != payload {
				t.Fatalf("declined but changed the payload: %q", gotRest)
			}
		case gotBlocks == nil:
			if strings.Contains(payload, `\`) || !json.Valid([]byte(payload)) {
				return // left to the decoder: escaped keys, and JSON it refuses anyway
			}
			t.Fatalf("no cut, but the token walk cuts %q out of %q", wantBlocks, payload)
		case wantBlocks == nil:
			t.Fatalf("cut %q out of %q, which the token walk leaves whole", gotBlocks, payload)
		default:
			if string(gotRest) != string(wantRest) || string(gotBlocks) != string(wantBlocks) {
				t.Fatalf("cut differs on %q:\n got %q / %q\nwant %q / %q", payload, gotRest, gotBlocks, wantRest, wantBlocks)
			}
		}
	})
}
