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
	if blocks == nil {
		return json.Unmarshal(rest, cb)
	}
	// The cut payload is valid JSON (json.Valid passed on the whole, and a
	// list became []): its own decoder is called directly, which skips
	// json.Unmarshal's two walks of it to check and to find its end.
	if err := cb.UnmarshalJSON(rest); err != nil {
		return err
	}
	cb.Message.Blocks.BlockSet = []slack.Block{&payloadBlocks{raw: blocks}}
	return nil
}

// cutMessageBlocks returns payload with message.blocks replaced by [] and
// the blocks' JSON. Anything unusual (not an object, a duplicate "message"
// or "blocks" key, a key written with escapes, empty blocks, malformed
// JSON) returns payload as it is and nil, so the ordinary decoder sees
// exactly what it always did.
//
// The payload is checked whole by json.Valid and then walked by
// jsonSpan, which only finds where values end: about a quarter of the
// cost of walking it with json.Decoder tokens, which allocated for every
// key and value of the message (BenchmarkDecodeInteraction; the cut was
// more than half of a click's decoding).
func cutMessageBlocks(payload []byte) (rest []byte, blocks json.RawMessage) {
	if !json.Valid(payload) {
		return payload, nil
	}
	start, end := -1, -1
	messages := 0
	ok := eachMember(payload, skipSpace(payload, 0), func(key string, v, vEnd int) bool {
		if key != "message" {
			return true
		}
		if messages++; messages > 1 || payload[v] != '{' {
			return false
		}
		return eachMember(payload, v, func(key string, b, bEnd int) bool {
			if key != "blocks" {
				return true
			}
			if start >= 0 {
				return false // two "blocks": let the decoder judge
			}
			start, end = b, bEnd
			return true
		})
	})
	if !ok || start < 0 {
		return payload, nil
	}
	blocks = payload[start:end]
	if len(bytes.TrimSpace(blocks)) < 3 || blocks[0] != '[' {
		return payload, nil // empty, or not a list: nothing to save
	}
	rest = make([]byte, 0, len(payload)-(end-start)+2)
	rest = append(append(append(rest, payload[:start]...), "[]"...), payload[end:]...)
	return rest, blocks
}

// eachMember calls f with each key of the JSON object at p[at] (valid
// JSON, json.Valid said so) and its value's span p[v:vEnd], in order, until
// f returns false. It returns false if f did, if p[at] is not an object, or
// if a key is written with escapes (the decoder unescapes keys; this does
// not, so it leaves such payloads to it).
func eachMember(p []byte, at int, f func(key string, v, vEnd int) bool) bool {
	if at >= len(p) || p[at] != '{' {
		return false
	}
	i := skipSpace(p, at+1)
	if p[i] == '}' {
		return true
	}
	for {
		kEnd := jsonSpan(p, i) // p[i] is the key's opening quote
		key := p[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		v := skipSpace(p, skipSpace(p, kEnd)+1) // past the colon
		vEnd := jsonSpan(p, v)
		if !f(string(key), v, vEnd) {
			return false
		}
		i = skipSpace(p, vEnd)
		if p[i] == '}' {
			return true
		}
		i = skipSpace(p, i+1) // past the comma
	}
}

// jsonSpan returns the end of the JSON value starting at p[i] (valid JSON).
func jsonSpan(p []byte, i int) int {
	switch p[i] {
	case '"':
		for j := i + 1; ; j++ {
			switch p[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch p[j] {
			case '"':
				j = jsonSpan(p, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	default: // a number, true, false or null: up to the next delimiter
		j := i
		for j < len(p) {
			switch p[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return j
	}
}

func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n') {
		i++
	}
	return i
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
