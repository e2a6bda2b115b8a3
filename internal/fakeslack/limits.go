package fakeslack

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Slack's documented Block Kit limits, checked the way Slack checks them:
// a violation rejects the whole call with invalid_blocks and a json-pointer
// to the offending field, so a renderer that overruns one fails its test
// here instead of in a workspace.
const (
	maxMessageText       = 40000 // chat.* text; longer is msg_too_long
	maxMessageBlocks     = 50
	maxModalBlocks       = 100
	maxBlockTextTotal    = 12000 // rendered text of all blocks; more is msg_blocks_too_long
	maxSectionText       = 3000
	maxSectionFields     = 10
	maxFieldText         = 2000
	maxHeaderText        = 150
	maxContextElements   = 10
	maxActionsElements   = 25
	maxButtonText        = 75
	maxButtonValue       = 2000
	maxURL               = 3000
	maxID                = 255 // block_id, action_id
	maxConfirmTitle      = 100
	maxConfirmText       = 300
	maxConfirmButton     = 30
	maxInputLabel        = 2000
	maxPlaceholder       = 150
	maxInputLength       = 3000
	maxMarkdownBlockText = 12000
	maxModalTitle        = 24
	maxModalPrivateMeta  = 3000
	maxCallbackID        = 255
)

type surface int

const (
	surfaceMessage surface = iota
	surfaceModal
)

// blockChecker walks blocks as plain JSON so it sees exactly what was sent.
type blockChecker struct {
	problems  []string
	textTotal int
}

func (c *blockChecker) fail(ptr, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...)+" [json-pointer:"+ptr+"]")
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// checkBlocks returns the Slack error code and the problems of a blocks
// array, or "" when Slack would accept it.
func checkBlocks(raw json.RawMessage, where surface) (string, []string) {
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "invalid_blocks", []string{"blocks must be an array of objects [json-pointer:/blocks]"}
	}
	c := &blockChecker{}
	c.blocks(blocks, where, "/blocks")
	if len(c.problems) > 0 {
		return "invalid_blocks", c.problems
	}
	if where == surfaceMessage && c.textTotal > maxBlockTextTotal {
		return "msg_blocks_too_long", []string{fmt.Sprintf("blocks carry %d characters of text, more than %d", c.textTotal, maxBlockTextTotal)}
	}
	return "", nil
}

// checkView returns the problems of a modal view object.
func checkView(view map[string]any) []string {
	c := &blockChecker{}
	if t, _ := view["type"].(string); t != "modal" && t != "home" {
		c.fail("/view/type", "view type must be modal or home, got %q", t)
	}
	c.textObject(view["title"], "/view/title", maxModalTitle, true, view["type"] == "modal") // a Home has none
	if view["submit"] != nil {
		c.textObject(view["submit"], "/view/submit", maxModalTitle, true, true)
	}
	if view["close"] != nil {
		c.textObject(view["close"], "/view/close", maxModalTitle, true, true)
	}
	if pm, _ := view["private_metadata"].(string); runes(pm) > maxModalPrivateMeta {
		c.fail("/view/private_metadata", "must be less than %d characters", maxModalPrivateMeta+1)
	}
	if cb, _ := view["callback_id"].(string); runes(cb) > maxCallbackID {
		c.fail("/view/callback_id", "must be less than %d characters", maxCallbackID+1)
	}
	blocks, _ := view["blocks"].([]any)
	var objs []map[string]any
	for i, b := range blocks {
		obj, ok := b.(map[string]any)
		if !ok {
			c.fail(fmt.Sprintf("/view/blocks/%d", i), "block must be an object")
			continue
		}
		objs = append(objs, obj)
	}
	c.blocks(objs, surfaceModal, "/view/blocks")
	return c.problems
}

// elements is block b's elements (at p), failing when it has none or
// more than most.
func (c *blockChecker) elements(b map[string]any, p string, most int) []any {
	elems, _ := b["elements"].([]any)
	if len(elems) == 0 {
		c.fail(p+"/elements", "must have at least 1 item")
	}
	if len(elems) > most {
		c.fail(p+"/elements", "no more than %d items allowed", most)
	}
	return elems
}

func (c *blockChecker) blocks(blocks []map[string]any, where surface, ptr string) {
	limit := maxMessageBlocks
	if where == surfaceModal {
		limit = maxModalBlocks
	}
	if len(blocks) > limit {
		c.fail(ptr, "no more than %d items allowed", limit)
	}
	seen := map[string]bool{}
	for i, b := range blocks {
		p := fmt.Sprintf("%s/%d", ptr, i)
		if id, ok := b["block_id"].(string); ok && id != "" {
			if runes(id) > maxID {
				c.fail(p+"/block_id", "must be less than %d characters", maxID+1)
			}
			if seen[id] {
				c.fail(p+"/block_id", "duplicate block_id %q", id)
			}
			seen[id] = true
		}
		c.block(b, p)
	}
}

func (c *blockChecker) block(b map[string]any, p string) {
	typ, _ := b["type"].(string)
	switch typ {
	case "header":
		c.textObject(b["text"], p+"/text", maxHeaderText, true, true)
	case "section":
		hasText := b["text"] != nil
		if hasText {
			c.textObject(b["text"], p+"/text", maxSectionText, false, true)
		}
		fields, _ := b["fields"].([]any)
		if !hasText && len(fields) == 0 {
			c.fail(p, "section needs text or fields")
		}
		if len(fields) > maxSectionFields {
			c.fail(p+"/fields", "no more than %d items allowed", maxSectionFields)
		}
		for i, f := range fields {
			c.textObject(f, fmt.Sprintf("%s/fields/%d", p, i), maxFieldText, false, true)
		}
		if acc, ok := b["accessory"].(map[string]any); ok {
			c.element(acc, p+"/accessory")
		}
	case "context":
		elems := c.elements(b, p, maxContextElements)
		for i, e := range elems {
			ep := fmt.Sprintf("%s/elements/%d", p, i)
			obj, _ := e.(map[string]any)
			if t, _ := obj["type"].(string); t == "image" {
				continue
			}
			c.textObject(e, ep, maxSectionText, false, true)
		}
	case "actions":
		elems := c.elements(b, p, maxActionsElements)
		seen := map[string]bool{}
		for i, e := range elems {
			ep := fmt.Sprintf("%s/elements/%d", p, i)
			obj, ok := e.(map[string]any)
			if !ok {
				c.fail(ep, "element must be an object")
				continue
			}
			if id, _ := obj["action_id"].(string); id != "" {
				if seen[id] {
					c.fail(ep+"/action_id", "duplicate action_id %q", id)
				}
				seen[id] = true
			}
			c.element(obj, ep)
		}
	case "input":
		c.textObject(b["label"], p+"/label", maxInputLabel, true, true)
		if b["hint"] != nil {
			c.textObject(b["hint"], p+"/hint", maxInputLabel, true, true)
		}
		el, ok := b["element"].(map[string]any)
		if !ok {
			c.fail(p+"/element", "input needs an element")
		} else {
			c.element(el, p+"/element")
		}
	case "divider":
	case "markdown":
		text, _ := b["text"].(string)
		if text == "" {
			c.fail(p+"/text", "must be more than 0 characters")
		}
		if runes(text) > maxMarkdownBlockText {
			c.fail(p+"/text", "must be less than %d characters", maxMarkdownBlockText+1)
		}
		c.textTotal += runes(text)
	case "image", "rich_text", "video", "file", "table":
		// Rendered from data askops does not produce; accepted as sent.
	case "":
		c.fail(p+"/type", "missing block type")
	default:
		c.fail(p+"/type", "unknown block type %q", typ)
	}
}

func (c *blockChecker) element(e map[string]any, p string) {
	typ, _ := e["type"].(string)
	if id, ok := e["action_id"].(string); ok && runes(id) > maxID {
		c.fail(p+"/action_id", "must be less than %d characters", maxID+1)
	}
	switch typ {
	case "button":
		c.textObject(e["text"], p+"/text", maxButtonText, true, true)
		if v, ok := e["value"].(string); ok && runes(v) > maxButtonValue {
			c.fail(p+"/value", "must be less than %d characters", maxButtonValue+1)
		}
		if u, ok := e["url"].(string); ok && runes(u) > maxURL {
			c.fail(p+"/url", "must be less than %d characters", maxURL+1)
		}
		if st, ok := e["style"].(string); ok && st != "primary" && st != "danger" {
			c.fail(p+"/style", "must be primary or danger")
		}
		if conf, ok := e["confirm"].(map[string]any); ok {
			c.confirm(conf, p+"/confirm")
		}
	case "plain_text_input":
		if e["placeholder"] != nil {
			c.textObject(e["placeholder"], p+"/placeholder", maxPlaceholder, true, true)
		}
		for _, k := range []string{"min_length", "max_length"} {
			if n, ok := e[k].(float64); ok && (n < 0 || n > maxInputLength) {
				c.fail(p+"/"+k, "must be between 0 and %d", maxInputLength)
			}
		}
		if v, ok := e["initial_value"].(string); ok && runes(v) > maxInputLength {
			c.fail(p+"/initial_value", "must be less than %d characters", maxInputLength+1)
		}
	case "":
		c.fail(p+"/type", "missing element type")
	}
}

func (c *blockChecker) confirm(conf map[string]any, p string) {
	c.textObject(conf["title"], p+"/title", maxConfirmTitle, true, true)
	c.textObject(conf["text"], p+"/text", maxConfirmText, false, true)
	c.textObject(conf["confirm"], p+"/confirm", maxConfirmButton, true, true)
	c.textObject(conf["deny"], p+"/deny", maxConfirmButton, true, true)
	if st, ok := conf["style"].(string); ok && st != "primary" && st != "danger" {
		c.fail(p+"/style", "must be primary or danger")
	}
}

// textObject checks a composition text object: its type, that it is not
// empty and not longer than max; it counts toward the message's total.
func (c *blockChecker) textObject(v any, p string, max int, plainOnly, required bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		if required {
			c.fail(p, "must provide an object")
		}
		return
	}
	typ, _ := obj["type"].(string)
	switch {
	case typ == "plain_text":
	case typ == "mrkdwn" && !plainOnly:
	default:
		if plainOnly {
			c.fail(p+"/type", "must be plain_text")
		} else {
			c.fail(p+"/type", "must be plain_text or mrkdwn")
		}
	}
	text, _ := obj["text"].(string)
	n := runes(text)
	if n == 0 {
		c.fail(p+"/text", "must be more than 0 characters")
	}
	if n > max {
		c.fail(p+"/text", "must be less than %d characters", max+1)
	}
	c.textTotal += n
}
