package fakeslack

import (
	"time"
)

// FailMode is how an injected failure answers.
type FailMode struct {
	// Status is the HTTP status: 429 answers with a Retry-After header (whole
	// seconds, rounded up, at least 1) and {"ok":false,"error":"ratelimited"};
	// 5xx answers with an HTML body as Slack's edge does. 0 means 200.
	Status int
	// RetryAfter is the Retry-After of a 429.
	RetryAfter time.Duration
	// SlackError answers 200 {"ok":false,"error":SlackError}, e.g.
	// "channel_not_found", "message_not_found", "expired_trigger_id".
	SlackError string
}

type fault struct {
	mode FailMode
	left int
}

// FailNext makes the next n calls of the method (a Web API method name or
// "response_url") fail as mode says. Faults queue: FailNext(m, 2, a) then
// FailNext(m, 1, b) fails two calls with a, then one with b. A failed call
// is recorded (Status/Error say how it was answered) and changes nothing.
func (s *Server) FailNext(method string, n int, mode FailMode) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], fault{mode: mode, left: n})
}

// SetDelay makes the method answer d after it was received; 0 removes the
// delay. The call takes effect and is recorded on arrival — as on Slack, a
// slow answer is not a slow action — and other methods are not held up. A
// client that gives up early just stops waiting.
func (s *Server) SetDelay(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		delete(s.delays, method)
		return
	}
	s.delays[method] = d
}

// takeFaultLocked consumes one queued fault of the method, if any.
func (s *Server) takeFaultLocked(method string) (FailMode, bool) {
	q := s.faults[method]
	if len(q) == 0 {
		return FailMode{}, false
	}
	mode := q[0].mode
	q[0].left--
	if q[0].left == 0 {
		q = q[1:]
	}
	if len(q) == 0 {
		delete(s.faults, method)
	} else {
		s.faults[method] = q
	}
	return mode, true
}
