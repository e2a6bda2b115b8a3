package slackui

import (
	"bytes"
	"encoding/json"

	"github.com/slack-go/slack"
)

// decodeInteraction decodes an interaction payload into cb, except for the
// blocks of the clicked message: those are kept as JSON in one
// *payloadBlocks and decoded only if something looks at them.
//
// Why: the clicked message is the whole Ask as Slack rendered it, and
// decoding its blocks (slack-go decodes every block and element through
// reflection, twice) was a third of a click's CPU before the decision is
// recorded (BenchmarkClickToResume's profile of replica B), on the path of
// both the acknowledgement and the agent's wake-up. The blocks are read
// only when the store does not yet know the Ask's message (see boundAsk)
// or does not know the Ask at all, and there buttonFor decodes them.
func decodeInteraction(payload []byte, cb *slack.InteractionCallback) error {
	rest, blocks := cutMessageBlocks(payload)
	if err := json.Unmarshal(rest, cb); err != nil {
		return err
	}
	if blocks != nil {
		cb.Message.Blocks.BlockSet = []slack.Block{&payloadBlocks{raw: blocks}}
	}
	return nil
}

// cutMessageBlocks returns payload with message.blocks replaced by [] and
// the blocks' JSON. Anything unusual (not an object, a duplicate "message"
// or "blocks" key, empty blocks, malformed JSON) returns payload as it is
// and nil, so the ordinary decoder sees exactly what it always did.
func cutMessageBlocks(payload []byte) (rest []byte, blocks json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	if !delim(dec, '{') {
		return payload, nil
	}
	start, end := -1, -1
	messages := 0
	for dec.More() {
		key, ok := nextKey(dec)
		if !ok {
			return payload, nil
		}
		if key != "message" {
			if !skipValue(dec) {
				return payload, nil
			}
			continue
		}
		if messages++; messages > 1 || !delim(dec, '{') {
			return payload, nil
		}
		for dec.More() {
			key, ok := nextKey(dec)
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
				return payload, nil // two "blocks": let the decoder judge
			}
			// Only a colon and space stand between the key and its value,
			// which must be a list (checked below).
			start = keyEnd + bytes.IndexByte(payload[keyEnd:], '[')
			end = int(dec.InputOffset())
			blocks = v
		}
		if !delim(dec, '}') {
			return payload, nil
		}
	}
	if start < 0 || len(bytes.TrimSpace(blocks)) < 3 || blocks[0] != '[' {
		return payload, nil // no blocks, empty, or not a list: nothing to save
	}
	rest = make([]byte, 0, len(payload)-(end-start)+2)
	rest = append(append(append(rest, payload[:start]...), "[]"...), payload[end:]...)
	return rest, blocks
}

func delim(dec *json.Decoder, d json.Delim) bool {
	t, err := dec.Token()
	return err == nil && t == d
}

func nextKey(dec *json.Decoder) (string, bool) {
	t, err := dec.Token()
	k, ok := t.(string)
	return k, err == nil && ok
}

func skipValue(dec *json.Decoder) bool {
	var v json.RawMessage
	return dec.Decode(&v) == nil
}

// payloadBlocks stands in a decoded callback for the clicked message's
// blocks, still as JSON (see decodeInteraction); buttonFor decodes them.
type payloadBlocks struct{ raw json.RawMessage }

func (*payloadBlocks) BlockType() slack.MessageBlockType { return "askops_undecoded" }
func (*payloadBlocks) ID() string                        { return "" }

// decode returns the blocks; blocks that do not decode are none, so a
// click that needs them fails closed.
func (p *payloadBlocks) decode() []slack.Block {
	var b slack.Blocks
	if err := json.Unmarshal(p.raw, &b); err != nil {
		return nil
	}
	return b.BlockSet
}
