package fakeslack_test

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeslack"
)

// BenchmarkPostMessage measures the fake's own cost per chat.postMessage
// through slack-go (limit checks and block decoding included), so a
// benchmark built on the fake can tell its time from the fake's.
func BenchmarkPostMessage(b *testing.B) {
	fake := fakeslack.New(b, fakeslack.Options{})
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	blocks := slack.MsgOptionBlocks(askBlocks("ask-bench")...)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := api.PostMessageContext(b.Context(), "C1", slack.MsgOptionText("ask", false), blocks); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
